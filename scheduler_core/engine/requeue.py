"""Requeue: which units a cycle tries again, and which wait for an event.

kube-scheduler keeps a pod that failed in its unschedulable queue until a cluster event could
make it schedulable (its plugins' QueueingHints), with a backoff; Volcano and YuniKorn keep
per-job state between rounds. This is that for the engine: a *requeue book*, kept in the
worker's ``Carry`` from cycle to cycle, records for every unit whose attempt failed why it
failed (as the kinds of event that may wake it, ``WAKES``), the event generation then, the
head of the queue it was behind, its explanation and when it was computed, and a backoff.

A unit is *parked* (not tried) only when, at its turn in ``allocate``, a head of the queue is
already set, it is the head the unit failed behind, no event of a kind the unit waits for came
since, the capacity the head leaves it is no larger than then, and its backoff has not run out
(``actions/park.py`` applies the rule). A unit reached before any head is set is always
tried: the first blocked unit is really tried, may preempt or reclaim, and becomes the head,
exactly as without the book. A parked unit decides nothing (no bind, no reservation, no
transition) and emits no new explanation: what it last got stays, with its time.

The book is a shortcut, never policy: ``tests/engine/test_requeue_properties.py`` runs random
workloads and events with and without it and finds the same decisions, cycle by cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import EngineConfig
from .decisions import Explanation, Reason
from .model import Snapshot
from .requeue_events import ANY, PodIndex, Wake

#: Why a unit failed -> the events that may let it place. A unit also wakes whenever its own
#: gangs or pods change (a member joins or leaves, a member gang's phase moves) and whenever a
#: gang is created, deleted or respecified anywhere (``requeue_events.Changes``). A reason not
#: here, and a lone pod (which has none), waits for any of room, nodes and quota.
WAKES: dict[Reason, Wake] = {
    # Short of room on the nodes it may use: room freed, or nodes that may take it.
    Reason.INSUFFICIENT_RESOURCES: Wake.ROOM | Wake.NODES,
    Reason.MIN_RESOURCES: Wake.ROOM | Wake.NODES,
    Reason.BLOCKED_BEHIND: Wake.ROOM | Wake.NODES,
    Reason.NO_DOMAIN_FITS: Wake.ROOM | Wake.NODES,  # topology and exclusive domains
    # No node passing its filters could take it even empty: only the nodes themselves.
    Reason.NO_FEASIBLE_NODES: Wake.NODES,
    # Held back by its queue; a trial its queue cut short may also have lacked room.
    Reason.QUEUE_MAX: ANY,
    Reason.QUEUE_BORROW: ANY,
    # Waiting for its own members or group: only its own changes.
    Reason.WAITING_FOR_MEMBERS: Wake.NONE,
    Reason.WAITING_FOR_GROUP: Wake.NONE,
    Reason.TIMED_OUT: Wake.NONE,
    Reason.TOPOLOGY_UNKNOWN: Wake.NONE,
}

#: The kinds a unit's trial cut by its queue waits for (its explanation is the queue's).
QUEUE_CUT = WAKES[Reason.QUEUE_MAX]

#: A shortfall of room never worked out (``gang.Deferred``): either of the reasons it may be.
DEFERRED_WAKES = WAKES[Reason.INSUFFICIENT_RESOURCES] | WAKES[Reason.NO_FEASIBLE_NODES]

#: The single kinds, to keep a generation for each.
KINDS = (Wake.ROOM, Wake.NODES, Wake.QUOTA)


def backoff(failures: int, most: float) -> float:
    """Seconds a unit may stay parked after its ``failures``-th failure in a row: 1 s, doubling."""
    return min(2.0 ** min(failures - 1, 62), most)


@dataclass(slots=True)
class Entry:
    """A unit whose last attempt failed."""

    members: tuple[str, ...]  # its gang keys, or its lone pod's key
    wakes: Wake
    generation: int  # the book's event generation when it failed
    head: str | None  # the unit key of the head it was behind; None: no head was set
    limit: np.ndarray | None  # the backfill limit it was tried within (the head's spare capacity)
    explanations: dict[str, Explanation]  # per gang key, what it was told
    explained_at: float  # the cycle's ``now`` when they were computed
    failures: int  # attempts failed in a row
    retry_at: float  # tried again from then on, event or not

    def woken(self, book: RequeueBook) -> bool:
        return any(self.wakes & kind and book.last.get(kind, -1) > self.generation for kind in KINDS)


class RequeueBook:
    """The units that failed, and what the last cycle left to compare the next one with."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.generation = 0
        self.last: dict[Wake, int] = {}  # per kind of event: the generation it last happened in
        self.snapshot: Snapshot | None = None
        self.pods: PodIndex | None = None  # the last snapshot's pods, to match the next one's
        self.config: EngineConfig | None = None
        # The cluster state the last cycle ended with: node names and resources, free capacity.
        self.layout: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self.free: np.ndarray | None = None
        # The queue ledger it ended with: usage, demand and guarantee per queue (None: no queues).
        self.queues: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.open = False  # a cycle is using the book (one that raised never closed it)

    def clear(self) -> None:
        self.__init__()

    def happened(self, wakes: Wake) -> None:
        """Events of the kinds ``wakes`` happened: the units waiting for them wake."""
        if not wakes:
            return
        self.generation += 1
        for kind in KINDS:
            if wakes & kind:
                self.last[kind] = self.generation

    def explained(self, gang: str) -> tuple[Explanation, float] | None:
        """A failed gang's last explanation and the ``now`` of the cycle that computed it."""
        for entry in self.entries.values():
            if gang in entry.explanations:
                return entry.explanations[gang], entry.explained_at
        return None
