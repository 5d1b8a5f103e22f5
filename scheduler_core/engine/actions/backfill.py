"""EASY backfilling around the head of the queue.

1. The head is the first unit that is blocked by resources alone and could run on the cluster
   if enough pods ended. Its *shadow time* is the earliest moment it fits, counting only pods
   whose end is known (started + declared duration); pods with no known end never end.
2. At the shadow time the head would take some capacity per node; what is left there is
   *extra* capacity.
3. A unit behind the head may start if it ends before the shadow time (declared duration), or,
   with no duration or a longer one, if it uses extra capacity only. Either way the head starts
   no later than its shadow time. When no shadow time exists (the head needs pods with unknown
   ends to finish), only the extra capacity computed on the whole cluster may be used.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..gang import attempt
from ..model import Pod
from ..queue import Unit
from ..session import Session, Trial


@dataclass
class Head:
    unit: Unit
    shadow: float  # math.inf when no known set of endings lets it fit
    extra: np.ndarray  # N x R, consumed by units that backfill with no end before the shadow

    def limit_for(self, session: Session, unit: Unit) -> np.ndarray | None:
        duration = unit_duration(session, unit)
        if duration is not None and session.now + duration <= self.shadow < math.inf:
            return None
        return self.extra


def unit_duration(session: Session, unit: Unit) -> float | None:
    pods = list(unit.pods)
    for key in unit.gangs:
        pods.extend(session.waiting(key))
    durations = [pod.duration for pod in pods]
    if not durations or any(d is None for d in durations):
        return None
    return max(durations)


def fits_on_empty(session: Session, unit: Unit) -> bool:
    """Could the unit run at all, if every pod but its own reservations were gone?"""
    return _nodes_only(session, _placement_on_empty, unit) is not None


def plan_head(session: Session, unit: Unit) -> Head:
    return _nodes_only(session, _plan_head, unit)


def _nodes_only(session: Session, plan, unit: Unit):
    """Run ``plan`` with queue admission off (see the module docstring)."""
    if session.queues is None:
        return plan(session, unit)
    session.admission = False
    try:
        return plan(session, unit)
    finally:
        session.admission = True


def _plan_head(session: Session, unit: Unit) -> Head:
    state = session.state
    nodes, rows, ends, positions = _known_endings(session)
    order = np.argsort(ends, kind="stable")
    nodes, rows, ends, positions = nodes[order], rows[order], ends[order], positions[order]

    def released(count: int) -> np.ndarray:
        usage = np.zeros_like(state.alloc)
        if count:
            np.add.at(usage, nodes[:count], rows[:count])
        return usage

    def usage_if_fits(count: int) -> np.ndarray | None:
        usage = released(count)
        state.used -= usage
        session.vanished = _ended(session, positions[:count])
        try:
            result = attempt(session, unit, explain=False)
            placed = _trial_usage(result.trial) if result.satisfied else None
            result.trial.discard()
        finally:
            state.used += usage
            session.vanished = None
        return placed

    if len(ends) and usage_if_fits(len(ends)) is not None:
        low, high = 1, len(ends)  # the smallest count of endings after which the head fits
        while low < high:
            mid = (low + high) // 2
            if usage_if_fits(mid) is not None:
                high = mid
            else:
                low = mid + 1
        head_usage = usage_if_fits(low)
        free_then = state.free + released(low)
        return Head(unit, float(ends[low - 1]), np.maximum(free_then - head_usage, 0))
    planned = _placement_on_empty(session, unit)
    if planned is None:
        # Its own older reservations stand where the rest cannot join them: no capacity can be
        # promised to others without risking the head, so nothing without an early end backfills.
        return Head(unit, math.inf, np.zeros_like(state.alloc))
    head_usage, own = planned
    return Head(unit, math.inf, np.maximum(state.alloc - own - head_usage, 0))


def _placement_on_empty(session: Session, unit: Unit):
    state = session.state
    own = np.zeros_like(state.alloc)
    for key in unit.gangs:
        own += state.usage_of(session.held(key))
    saved = state.used.copy()
    state.used[:] = own
    gangs = set(unit.gangs)  # all but their reservations gone, exclusive domains included
    session.vanished = lambda pod: pod.node is not None or pod.gang not in gangs
    try:
        result = attempt(session, unit, explain=False)
        placed = _trial_usage(result.trial) if result.satisfied else None
        result.trial.discard()
    finally:
        state.used[:] = saved
        session.vanished = None
    return None if placed is None else (placed, own)


def _ended(session: Session, positions: np.ndarray) -> Callable[[Pod], bool]:
    """``Session.vanished`` for the snapshot's pods at ``positions`` (those ended by then), the
    set built only if an exclusive gang asks."""
    gone: set[str] | None = None

    def vanished(pod: Pod) -> bool:
        nonlocal gone
        if gone is None:
            pods = session.snapshot.pods
            gone = {pods[int(position)].key for position in positions}
        return pod.key in gone

    return vanished


def _trial_usage(trial: Trial) -> np.ndarray:
    usage = np.zeros_like(trial.state.alloc)
    for placed in trial.placed:
        np.add.at(usage, placed.nodes, placed.request)
    return usage


def _known_endings(session: Session) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Node index, request row, expected end and snapshot position of every running pod whose
    end is known, by position: those running before the cycle (not evicted in it; a
    terminating one ends now) from the state's carried arrays, and those bound in it."""
    state = session.state
    running = state.pod_where >= 0
    if session.evicted_at:
        running[session.evicted_at] = False
    ends = np.where(state.pod_terminating, session.now, state.pod_end)
    positions = np.flatnonzero(running & ~np.isnan(ends))
    nodes, ends = state.pod_where[positions], ends[positions]
    if session.bound_at:
        pods = state.pods
        at = {pods[position].key: position for position in np.flatnonzero(state.pod_pending).tolist()}
        bound = [
            (at[key], index, session.now + pod.duration)
            for key, index in session.bound_at.items()
            if (pod := pods[at[key]]).duration is not None and index >= 0
        ]
        if bound:
            more = np.array(bound, dtype=float)
            positions = np.concatenate([positions, more[:, 0].astype(np.int64)])
            nodes = np.concatenate([nodes, more[:, 1].astype(np.int64)])
            ends = np.concatenate([ends, more[:, 2]])
            order = np.argsort(positions, kind="stable")
            positions, nodes, ends = positions[order], nodes[order], ends[order]
    return nodes, state.pod_rows[positions], ends, positions
