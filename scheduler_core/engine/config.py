"""The engine's switches: ``EngineConfig`` and the defaults the service's settings start from.

Apart from ``model.py`` (the plain data a cycle reads) because the switches are the caller's
choice of policy, not part of the cluster: trace replay runs the same snapshots under several.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from .model import GangMode

#: ``EngineConfig.reclaim``'s choices.
RECLAIM_MODES = ("fair-share", "guarantee", "none")

#: Two minutes: how long a unit waits before reclaiming beyond its queue's guarantee (reclaim.py).
DEFAULT_RECLAIM_DELAY_S = 120.0

#: Longest wait before a unit parked by requeue is tried again anyway (see EngineConfig).
DEFAULT_REQUEUE_BACKOFF_MAX_S = 30.0

#: Units that may search for victims (preempt or reclaim) in one cycle (see EngineConfig).
DEFAULT_PREEMPT_DEPTH = 16

#: One hour: no unit is ever passed by work submitted more than an hour after it (see queue.py).
DEFAULT_OVERTAKE_LIMIT_S = 3600.0


class HeadOfLine(str, enum.Enum):
    """What the units behind a gang that cannot start may do (trace replay compares them)."""

    RESERVE = "reserve"  # EASY backfilling: they may start only where they never delay the head
    BLOCK = "block"  # strict FIFO: nothing behind the head starts (kube-batch/YuniKorn FIFO)
    NONE = "none"  # greedy: anything that fits starts (scheduler-plugins coscheduling)


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Switches for the engine's policies; the defaults are gangsched's own behaviour.

    The other settings exist so that trace replay can model the systems gangsched replaces with
    the same code: ``gangs=False`` is pod-at-a-time kube-scheduler, ``force_mode`` NonStrict with
    ``deadlock_resolution=False`` is Koordinator NonStrict, and so on.
    """

    head_of_line: HeadOfLine = HeadOfLine.RESERVE
    preemption: bool = True
    deadlock_resolution: bool = True
    timeouts: bool = True
    gangs: bool = True
    force_mode: GangMode | None = None
    # scheduler-plugins Coscheduling's PostFilter (PodGroupRejectPercentage / 100): a Strict gang
    # whose attempt fails keeps what it placed (its pods waiting at Permit) when at most this
    # share of min_member is missing. 0, gangsched's own rule, rolls every failed attempt back.
    permit_hold: float = 0.0
    # Least-work-first with bounded overtaking (queue.py): within a priority, a unit is queued at
    # its creation plus its work in device-seconds, at most this many seconds. 0: plain FIFO.
    overtake_limit_s: float = DEFAULT_OVERTAKE_LIMIT_S
    # With queues: how far reclaim restores a queue (actions/reclaim.py). "fair-share" (gangsched):
    # up to its fair share; "guarantee": only up to its guarantee, from queues borrowing beyond
    # theirs (Kueue's reclaimWithinCohort, KAI-Scheduler's reclaim); "none": never.
    reclaim: str = "fair-share"
    # Fair-share reclaim beyond a queue's guarantee waits until the unit has waited this long
    # since it was created (YuniKorn's preemption.delay): running work often ends by itself in
    # that time, and reclaiming at once for a share that moves as demand comes and goes evicts
    # more than it gains. Reclaim up to the guarantee never waits.
    reclaim_delay_s: float = DEFAULT_RECLAIM_DELAY_S
    # How many units may search for victims (preemption, reclaim) in one cycle; 0: no bound. A
    # search costs dozens of trial placements, and a burst of urgent work on a full cluster would
    # make one cycle search for hundreds of units while every other gang waits for its answer.
    # Past the bound, the next unit that would search becomes the head of the queue instead
    # (it reserves, the rest backfill around it) and searches in a later cycle: the evictions
    # of this one wake it at once. KAI-Scheduler bounds the same work (queueDepthPerAction).
    preempt_depth: int = DEFAULT_PREEMPT_DEPTH
    # Topology-aware placement: gangs' TopologyConstraints are honoured. False: they
    # are ignored and gangs land anywhere (gangsched without topology; trace replay compares both).
    topology: bool = True
    # Requeue (requeue.py): with a carry, a unit that failed behind the head of the queue is not
    # tried again until an event could let it place, or until its backoff (1 s, doubling with
    # each failure in a row, at most this) runs out. 0: every unit is tried in every cycle.
    requeue_backoff_max_s: float = DEFAULT_REQUEUE_BACKOFF_MAX_S
    # Whether a unit short of room is told why (its explanation, and whether it is only behind
    # the head). False decides the same and says less: a forecast's cycles after its first
    # (forecast/future.py), whose explanations nobody reads. The work saved is most of a failure's.
    explain: bool = True


def permit_quorum(min_member: int, hold: float) -> int:
    """The fewest placed members with which a failed Strict attempt keeps them (``permit_hold``).

    scheduler-plugins keeps the group's waiting pods while ``(minMember - assigned) / minMember
    <= threshold``; as a count: at most ``floor(threshold * minMember)`` members missing (the
    epsilon keeps e.g. 0.1 * 30 = 3.0000000000000004 at 3).
    """
    return min_member - math.floor(hold * min_member + 1e-9)
