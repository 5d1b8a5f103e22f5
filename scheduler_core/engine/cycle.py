"""One scheduling cycle: ``run_cycle(snapshot, now, config) -> CycleResult``.

The actions run in a fixed order, each a small module that reads like the policy it implements:

1. ``reservations``: drop reservations the cluster no longer honours (node gone, over-committed).
2. ``timeout``: gangs past their wait time release what they hold (Hard: TimedOut; Soft: fall back).
3. ``queue``: order the pending units (priority, least work first with bounded overtaking,
   creation, key).
4. ``deadlock``: break hold-and-wait cycles between gangs with partial reservations.
5. ``allocate``: place units all-or-nothing, with preemption for the first blocked unit and
   EASY backfilling behind it. With queues: units come queue by queue, the one
   furthest below its fair share first (``queue_order.py``), within each queue's headroom
   (``ledger.py``), and a unit of a queue below its fair share may reclaim from queues over
   theirs (``actions/reclaim.py``).

The cyclic garbage collector is paused for the cycle (``gc_pause.py``).

Deterministic: the same snapshot, ``now`` and config give the same result. The engine never
reads the clock; ``now`` is seconds on whatever timeline the snapshot uses.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable

from .actions.allocate import allocate
from .actions.deadlock import break_deadlocks
from .actions.reservations import validate
from .actions.timeout import sweep
from .carry import Carry
from .config import EngineConfig
from .decisions import CycleResult
from .gc_pause import gc_paused
from .model import Pod, Snapshot
from .session import Session

ACTIONS = (
    ("reservations", validate),
    ("timeout", sweep),
    ("queue", Session.build_queue),
    ("deadlock", break_deadlocks),
    ("allocate", allocate),
)


def run_cycle(
    snapshot: Snapshot, now: float, config: EngineConfig | None = None, carry: Carry | None = None
) -> CycleResult:
    """``carry``: kept by the caller from cycle to cycle, it lets ``open`` apply what changed
    since the last cycle instead of rebuilding the cluster state (``carry.py``)."""
    with gc_paused():
        return _run_cycle(snapshot, now, config, carry)


def _run_cycle(
    snapshot: Snapshot, now: float, config: EngineConfig | None, carry: Carry | None
) -> CycleResult:
    started = time.perf_counter()
    session = Session(snapshot, now, config or EngineConfig(), carry)
    session.result.timings["open"] = time.perf_counter() - started
    for name, action in ACTIONS:
        began = time.perf_counter()
        action(session)
        session.result.timings[name] = time.perf_counter() - began
    considered = queued_pods(session)
    session.result.pods_considered = len(considered)
    session.result.pending_demand = demand(pod for pod in considered if pod.key not in session.bound_at)
    if session.queues is not None:
        session.result.queues = session.queues.report()
    session.result.timings["total"] = time.perf_counter() - started
    return session.result


def sweep_timeouts(snapshot: Snapshot, now: float, config: EngineConfig | None = None) -> CycleResult:
    """Only the timeout action, for the service's periodic sweep between cycles.

    It binds nothing, so what it leaves pending is every pod still queued after the sweep: its
    ``pending_demand`` is that, and its history row reads like a cycle's on the overview chart.
    """
    session = Session(snapshot, now, config or EngineConfig())
    sweep(session)
    session.build_queue()
    session.result.pending_demand = demand(queued_pods(session))
    return session.result


def queued_pods(session: Session) -> list[Pod]:
    """The pods the cycle considered for placement: those of its queued units (a lone pod, or
    the pending members of the unit's gangs)."""
    pods: list[Pod] = []
    for unit in session.units:
        pods.extend(unit.pods)
        for key in unit.gangs:
            pods.extend(pod for pod in session.members.get(key, ()) if pod.pending)
    return pods


def demand(pods: Iterable[Pod]) -> dict[str, int]:
    """Summed requests per resource (canonical integers), resources in name order, none at 0."""
    total: dict[str, int] = defaultdict(int)
    for pod in pods:
        for resource, amount in pod.requests.items():
            total[resource] += amount
    return {resource: total[resource] for resource in sorted(total) if total[resource]}
