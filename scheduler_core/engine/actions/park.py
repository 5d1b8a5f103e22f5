"""Parking: the requeue book's part in ``allocate`` (the book and its rules: ``requeue.py``).

``open`` turns what changed since the last cycle into events; ``parks`` says, at a unit's turn,
whether to skip it; ``failed`` records a unit that did not place; ``close`` keeps what the next
cycle compares with.

Why a parked unit would have failed anyway, deciding nothing: it failed behind the same head;
since then nothing it waits for happened, so room on the nodes it may use did not grow (the free
capacity this cycle opened with is nowhere above what the last one ended with, and nothing was
evicted or released since), the head's spare capacity it is limited to is nowhere above what it
was, its queue may take no more, and its own gangs and pods are the same. A unit behind the head
neither preempts, reclaims nor keeps reservations, and its timeout clock already started if it
ever placed a member, so trying it would have changed nothing but its explanation.
"""

from __future__ import annotations

import numpy as np

from ..gang import Attempt, Deferred
from ..queue import Unit
from ..requeue import DEFERRED_WAKES, QUEUE_CUT, WAKES, Entry, RequeueBook, backoff
from ..requeue_events import ANY, PodIndex, Wake, changes
from ..session import Session
from .backfill import Head


class Parking:
    """One cycle's use of the book."""

    def __init__(self, session: Session, book: RequeueBook) -> None:
        self.session = session
        self.book = book
        self.seen: set[str] = set()  # units failed or parked in this cycle: their entries stay
        self.freed = self._freed()  # evictions and releases so far: more later is freed room
        self.copy: np.ndarray | None = None  # the last limit copied, shared by equal ones

    @classmethod
    def open(cls, session: Session) -> Parking | None:
        """None: no book (a cycle without a carry) or parking disabled; every unit is tried."""
        book = session.requeue
        if book is None:
            return None
        if session.config.requeue_backoff_max_s <= 0:
            book.clear()
            return None
        if book.open:
            book.clear()  # the last cycle raised before it closed the book: start afresh
        book.open = True
        pods = PodIndex(session.snapshot.pods, session.state.pod_ids)
        if not book.entries:
            # Nothing parked: what changed since the last cycle can wake nobody. Units that
            # fail in this cycle are parked from now on, so only later changes matter to them.
            book.pods = pods
            return cls(session, book)
        found = changes(book.snapshot, session.snapshot, session.config, book.config, (book.pods, pods))
        book.pods = pods
        if found.everyone:
            book.entries.clear()
        elif found.touched:
            for key, entry in list(book.entries.items()):
                if not found.touched.isdisjoint(entry.members):
                    del book.entries[key]
        book.happened(found.wakes | _room_freed(session, book) | _queues_freed(session, book))
        return cls(session, book)

    def parks(self, unit: Unit, head: Head | None, limit: np.ndarray | None) -> bool:
        """Skip ``unit`` at its turn? Only behind the head it failed behind (module docstring)."""
        entry = self.book.entries.get(unit.key)
        if entry is None or head is None or entry.head != head.unit.key:
            return False
        if self.session.now >= entry.retry_at or entry.woken(self.book):
            return False
        if entry.wakes & (Wake.ROOM | Wake.QUOTA) and self._freed() > self.freed:
            return False  # preemption or reclaim ahead of it in this cycle freed room
        if entry.limit is not None and (
            limit is None or limit.shape != entry.limit.shape or bool((limit > entry.limit).any())
        ):
            return False
        self.seen.add(unit.key)
        self.session.result.parked += 1
        return True

    def failed(self, unit: Unit, result: Attempt, head: Head | None, limit: np.ndarray | None) -> None:
        """Record ``unit``'s failure, tried behind ``head`` within ``limit``."""
        session = self.session
        known = self.book.entries.get(unit.key)
        failures = known.failures + 1 if known is not None else 1
        self.seen.add(unit.key)
        self.book.entries[unit.key] = Entry(
            members=unit.gangs or (unit.key,),
            wakes=_wakes(result),
            generation=self.book.generation,
            head=head.unit.key if head is not None else None,
            limit=self._copy(limit),
            explanations={
                key: session.result.explanations[key]
                for key in unit.gangs
                if key in session.result.explanations
            },
            explained_at=session.now,
            failures=failures,
            retry_at=session.now + backoff(failures, session.config.requeue_backoff_max_s),
        )

    def close(self) -> None:
        """Forget the units that placed or left the queue; keep this cycle's end to compare with."""
        book, session = self.book, self.session
        for key in [key for key in book.entries if key not in self.seen]:
            del book.entries[key]
        book.snapshot = session.snapshot
        book.config = session.config
        state = session.state
        book.layout = (state.node_names, state.resources)
        book.free = state.free
        ledger = session.queues
        book.queues = None if ledger is None else (ledger.usage.copy(), ledger.demand, ledger.guarantee)
        book.open = False

    def _freed(self) -> int:
        return len(self.session.result.evictions) + len(self.session.result.releases)

    def _copy(self, limit: np.ndarray | None) -> np.ndarray | None:
        """A copy of ``limit`` as it is now (backfilled units consume it in place)."""
        if limit is None:
            return None
        if self.copy is None or self.copy.shape != limit.shape or not np.array_equal(self.copy, limit):
            self.copy = limit.copy()
        return self.copy


def _wakes(result: Attempt) -> Wake:
    """The kinds of event that may let the unit of ``result`` place (``requeue.WAKES``)."""
    if result.precondition is not None:
        return WAKES.get(result.precondition.reason, ANY)
    wakes = Wake.NONE if result.shortfalls else ANY  # a lone pod says no reason
    for shortfall in result.shortfalls.values():
        # Not worked out (it was told it is behind the head): short of room, or of nodes.
        wakes |= DEFERRED_WAKES if isinstance(shortfall, Deferred) else WAKES.get(shortfall.reason, ANY)
    if result.trial.cut is not None:
        wakes |= QUEUE_CUT
    return wakes


def _room_freed(session: Session, book: RequeueBook) -> Wake:
    """Is there room on some node that the last cycle did not leave there? Pods ended, were
    deleted or evicted, reservations were dropped (before or in this cycle, up to allocate), or
    a bind was not carried out."""
    state = session.state
    if book.free is None or book.layout != (state.node_names, state.resources):
        return ANY
    return Wake.ROOM if bool((state.free > book.free).any()) else Wake.NONE


def _queues_freed(session: Session, book: RequeueBook) -> Wake:
    """May some queue take more than when the last cycle ended? Its usage or its demand fell,
    or a guarantee moved (an unlimited one follows the fair shares)."""
    ledger = session.queues
    if ledger is None and book.queues is None:
        return Wake.NONE
    if ledger is None or book.queues is None:
        return Wake.QUOTA
    usage, demand, guarantee = book.queues
    if usage.shape != ledger.usage.shape:
        return Wake.QUOTA
    if (ledger.usage < usage).any() or (ledger.demand < demand).any():
        return Wake.QUOTA
    return Wake.QUOTA if not np.array_equal(ledger.guarantee, guarantee) else Wake.NONE
