"""The engine's output: what one cycle decided, as plain data the service can persist and apply.

Pod-level decisions (Bind, Reserve, Release, Evict) say what happens to each pod; gang-level
Transitions say how a gang's scheduling state moves; Explanations say, for every gang that was
not placed, why, in words an operator can act on and in fields a page can render.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Bind:
    pod: str  # "namespace/name"
    node: str
    gang: str | None = None


@dataclass(frozen=True, slots=True)
class Reserve:
    """Hold capacity on ``node`` for a pending pod across cycles (NonStrict, preemption)."""

    pod: str
    node: str
    gang: str | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Release:
    """Give back a reservation held by a pending pod."""

    pod: str
    node: str
    gang: str | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Evict:
    """Stop a running pod to make room for a higher-priority unit: an elastic member above its
    gang's min_member, a member of a gang preempted whole (with a PREEMPTED transition), or a
    lone pod; ``reason`` names the preemptor and why this pod was taken. Reclaim
    evicts the same way, with a reason naming the queue the room goes to, and that queue's name
    in ``reclaimed_by`` (None for a preemption)."""

    pod: str
    node: str
    gang: str | None = None
    reason: str = ""
    reclaimed_by: str | None = None


class TransitionKind(str, enum.Enum):
    WAIT_STARTED = "wait_started"  # the timeout clock starts: a member could be placed
    SATISFIED = "satisfied"  # min_member (and min_resources) bound together
    TIMED_OUT = "timed_out"  # Hard style: no more scheduling until retried
    FELL_BACK = "fell_back"  # Soft style: pods now scheduled one at a time
    DEADLOCK_BROKEN = "deadlock_broken"  # its reservations released so another gang completes
    PREEMPTED = "preempted"  # evicted whole by a higher-priority gang, or by reclaim


@dataclass(frozen=True, slots=True)
class Transition:
    gang: str
    kind: TransitionKind
    reason: str = ""


class Reason(str, enum.Enum):
    """Why a gang is not placed; the first word a page shows."""

    INSUFFICIENT_RESOURCES = "InsufficientResources"
    NO_FEASIBLE_NODES = "NoFeasibleNodes"
    MIN_RESOURCES = "MinResourcesNotMet"
    WAITING_FOR_MEMBERS = "WaitingForMembers"
    WAITING_FOR_GROUP = "WaitingForGangGroup"
    BLOCKED_BEHIND = "BlockedBehind"
    TIMED_OUT = "TimedOut"
    RESERVING = "Reserving"
    PREEMPTING = "Preempting"
    # Queues: what the gang's queue, not the nodes, holds it back by.
    QUEUE_UNKNOWN = "QueueUnknown"  # names a queue the tree does not have, or an inner queue
    QUEUE_CLOSED = "QueueClosed"
    QUEUE_MAX = "QueueAtMax"  # a queue on its path is at its max
    QUEUE_BORROW = "QueueCannotBorrow"  # what it would borrow is kept for others' guarantees
    WAITING_FOR_RECLAIM = "WaitingForReclaim"  # reclaim evicted work of queues over their share
    # Topology
    TOPOLOGY_UNKNOWN = "TopologyUnknown"  # its constraint names a level no topology has
    NO_DOMAIN_FITS = "NoDomainFits"  # no domain of the required level can hold the whole gang


@dataclass(frozen=True, slots=True)
class Explanation:
    gang: str
    reason: Reason
    message: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class CycleResult:
    """Everything one cycle decided, plus what it cost (``timings`` per action, seconds).

    ``pending_demand`` is what the cycle left waiting: the summed requests, per resource, of
    the pods it considered for placement (those of the queued units) and did not bind. Pods
    of gangs that are timed out or otherwise inactive are not queued, so they are no demand.

    ``queues``: per queue name, after this cycle's decisions, its path, usage, guarantee, fair
    share, max, pending demand, borrowed and lent, as {resource: canonical int} (``ledger.py``);
    empty when the snapshot defines no queues.

    ``parked``: how many units the requeue book kept from being tried (``requeue.py``); they
    decided nothing and have no entry in ``explanations`` (what they were last told stands).
    """

    binds: list[Bind] = field(default_factory=list)
    reservations: list[Reserve] = field(default_factory=list)
    releases: list[Release] = field(default_factory=list)
    evictions: list[Evict] = field(default_factory=list)
    transitions: list[Transition] = field(default_factory=list)
    explanations: dict[str, Explanation] = field(default_factory=dict)
    pods_considered: int = 0
    parked: int = 0
    pending_demand: dict[str, int] = field(default_factory=dict)
    queues: dict[str, dict] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def transitions_of(self, gang: str) -> list[TransitionKind]:
        return [t.kind for t in self.transitions if t.gang == gang]
