"""Failing a unit behind the head without a trial, when one tried before it proves it fails.

Behind the head of the queue most units fail: on a busy cluster the room the head leaves is
short. For the commonest unit (``fit_bound.Bound.exact``: a lone pod, or one gang whose waiting
members are all one shape, with no topology constraint, no ``minResources`` and no queue
headroom) a trial places exactly ``min(members, copies the nodes can take)``. Once the head is
set, a cycle's room only shrinks: the units behind it bind or backfill, none preempts, reclaims
or releases, and the head's spare capacity is only consumed. So a unit that failed after placing
``c`` copies (fewer than its members: the nodes took no more) proves that a later one with the
same filters (the same nodes), tried on the same capacity (the free room, or the head's spare),
whose request is at least as large in every resource, can place at most ``c`` copies, and fails
if it needs more than ``c``.

The failure returned is the trial's: a lone pod's carries nothing of its own; a gang's is short
of room, explained (if somebody reads it) on the same capacity (``gang.Deferred``). Its members
placed are not known unless ``c`` is 0, so a gang is settled this way only when they do not
matter: ``c`` is 0, or its wait clock already runs (they would only start it).
"""

from __future__ import annotations

import numpy as np

from ..filters import constraint_key
from ..gang import Attempt, Deferred, precondition
from ..queue import Unit
from ..session import Session, Trial, shapes
from ..topology_index import plan_of


class ProvenFailures:
    """Per (filters, limited?): the requests of the units that failed a trial behind this
    cycle's head, with the copies each placed."""

    def __init__(self) -> None:
        self._failed: dict[tuple, list[tuple[np.ndarray, int]]] = {}
        self._stacked: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        # The capacity a trial would start from, per limited?, kept until the next bind (only
        # binds change the free room and the head's spare); explanations only read it.
        self._available: dict[bool, tuple[int, np.ndarray]] = {}

    def settled(self, session: Session, unit: Unit, limit: np.ndarray | None) -> Attempt | None:
        """``unit``'s failed attempt within ``limit`` when an earlier failure proves it; None:
        a trial decides."""
        key = _key(session, unit, limit)
        if key is None or key not in self._failed:
            return None
        found = _exact(session, unit)
        if found is None:
            return None
        request, need, gang = found
        stacked = self._stacked.get(key)
        if stacked is None:
            entries = self._failed[key]
            stacked = np.stack([r for r, _ in entries]), np.array([c for _, c in entries], np.int64)
            self._stacked[key] = stacked
        requests, copies = stacked
        clock = gang is None or gang.wait_started is not None
        proof = (request >= requests).all(axis=1) & (copies < need) & ((copies == 0) | clock)
        if not bool(proof.any()):
            return None
        trial = Trial(session.state, limit)
        if gang is None:
            return Attempt(trial, satisfied=False)
        shortfall = Deferred(session, gang, need, session.waiting(gang.key), self._capacity(session, trial))
        return Attempt(trial, satisfied=False, shortfalls={gang.key: shortfall}, placed={gang.key: 0})

    def _capacity(self, session: Session, trial: Trial) -> np.ndarray:
        binds = len(session.result.binds)
        kept = self._available.get(trial.limit is None)
        if kept is None or kept[0] != binds:
            kept = self._available[trial.limit is None] = (binds, trial.available())
        return kept[1]

    def failed(self, session: Session, unit: Unit, limit: np.ndarray | None, result: Attempt) -> None:
        """``unit`` failed a trial behind the head within ``limit``: remember its request and
        the copies it placed, when those were all the nodes could take."""
        key = _key(session, unit, limit)
        if key is None or result.precondition is not None:
            return
        found = _exact(session, unit)
        if found is None:
            return
        request, _need, gang = found
        placed = sum(result.placed.values())
        if gang is not None and placed >= len(session.waiting(gang.key)):
            return  # every member placed: the count of copies is not known
        self._failed.setdefault(key, []).append((request, placed))
        self._stacked.pop(key, None)


def _key(session: Session, unit: Unit, limit: np.ndarray | None) -> tuple | None:
    """(filters, limited?) of the unit's one shape; None: a group of gangs, or queues."""
    if session.queues is not None or len(unit.gangs) > 1:
        return None
    if unit.is_gang:
        waiting = session.waiting(unit.gangs[0])
        if not waiting:
            return None
        return constraint_key(waiting[0]), limit is None
    return constraint_key(unit.pods[0]), limit is None


def _exact(session: Session, unit: Unit):
    """(request, members needed, gang or None for a lone pod) when a trial of ``unit`` places
    exactly what the count allows (``fit_bound.Bound.exact``, read from the cycle's shapes
    without building the bound) and nothing else stops it; else None."""
    if session.vanished is not None:
        return None
    if not unit.is_gang:
        pod = unit.pods[0]
        gang = session.gangs.get(pod.gang) if pod.gang is not None else None
        return (session.state.vector(pod), 1, None) if plan_of(session, gang) is None else None
    gang = session.gangs[unit.gangs[0]]
    if gang.settled or gang.min_resources or plan_of(session, gang) is not None:
        return None
    groups = shapes(session, session.waiting(gang.key))
    running = len(session.running(gang.key)) if gang.counts_running else 0
    need = gang.min_member - running - len(session.held(gang.key))
    if len(groups) != 1 or need <= 0 or precondition(session, unit) is not None:
        return None
    return groups[0][0], need, gang
