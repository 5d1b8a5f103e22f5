"""gangsched's persistent state, one module per topic.

- ``cluster``: Node, the machines the scheduler places pods on; NodeUsage, what their pods use;
  UsageMinute, how the cluster's use changed per minute.
- ``gangs``: GangGroup, Gang and Member (a gang's pods, or a pod scheduled alone).
- ``forecasts``: GangForecast, the latest start-time forecast of each pending gang.
- ``history``: append-only records: SchedulingCycle, GangEvent (drained by the publisher),
  BindJournal (a decided placement written before the bind is attempted).
- ``lease``: SchedulerLease, the single-scheduler lease with its fencing epoch.
- ``priority``: PriorityClass, applied ``scheduling.k8s.io/v1`` priority classes, and Kueue's
  WorkloadPriorityClass.
- ``queues``: Queue (the tenant tree), LocalQueue, ResourceFlavor, QueueAccess.
- ``queue_history``: QueueSample, each queue's figures per minute (charts and metrics).
- ``topology``: Topology (node-label levels) and Volcano's HyperNode tree.
- ``tallies``: QueueUsage (what each queue's pods request) and GangEventMinute (gang events per
  minute), kept by triggers for the pages.

Enumerations shared with the engine (GangPhase, GangMode, ...) are imported from
``scheduler_core.engine.model``, never redefined, so a phase means the same in both. Imports
the engine and validators only.
"""

from .cluster import Node, NodeUsage, UsageMinute
from .forecasts import GangForecast
from .gangs import Gang, GangGroup, Member, MemberPhase, RestartPolicy
from .history import (
    BindIntent,
    BindJournal,
    BindState,
    GangEvent,
    GangEventKind,
    IntentState,
    SchedulingCycle,
)
from .lease import SchedulerLease
from .priority import PriorityClass, WorkloadPriorityClass
from .queue_history import QueueSample
from .queues import LocalQueue, Queue, QueueAccess, ResourceFlavor
from .tallies import GangEventMinute, QueueUsage
from .topology import HyperNode, Topology

__all__ = [
    "BindIntent",
    "BindJournal",
    "BindState",
    "Gang",
    "GangEvent",
    "GangEventKind",
    "GangEventMinute",
    "GangForecast",
    "GangGroup",
    "HyperNode",
    "IntentState",
    "LocalQueue",
    "Member",
    "MemberPhase",
    "Node",
    "NodeUsage",
    "PriorityClass",
    "Queue",
    "QueueAccess",
    "QueueSample",
    "QueueUsage",
    "ResourceFlavor",
    "RestartPolicy",
    "SchedulerLease",
    "SchedulingCycle",
    "Topology",
    "UsageMinute",
    "WorkloadPriorityClass",
]
