"""Breaking resource deadlocks between gangs that hold partial reservations.

Two NonStrict gangs can each hold part of what the other needs and wait forever (Koordinator
leaves this as future work; the coscheduling article draws it as JobA/JobB). Before allocating:

1. Take the unsatisfied gang units that hold reservations, in queue order.
2. For each that cannot complete now, look at the lower-ranked holders that cannot complete
   either. If releasing all their reservations would let it complete, it is deadlocked on them.
3. Give reservations back to them one by one from the highest-ranked while it still completes;
   release what remains (the lowest-priority, youngest gangs lose their hold) so it completes
   in this very cycle. The losers keep their place in the queue and reserve again later.
"""

from __future__ import annotations

import dataclasses

from ..decisions import Transition, TransitionKind
from ..gang import fits
from ..queue import Unit
from ..session import Session
from .release import release_held


def break_deadlocks(session: Session) -> None:
    """Queue admission is off while deadlocks are looked for: they are about nodes;
    the unit that wins is still admitted by its queue when allocate tries it."""
    if not session.config.deadlock_resolution:
        return
    session.admission = False
    try:
        _break(session)
    finally:
        session.admission = True


def _break(session: Session) -> None:
    holders = [unit for unit in session.units if unit.is_gang and _holds(session, unit)]
    released: set[str] = set()
    for position, unit in enumerate(holders):
        if unit.key in released or fits(session, unit):
            continue
        blocked = [
            other
            for other in holders[position + 1 :]
            if other.key not in released and not fits(session, other)
        ]
        if not blocked:
            continue
        usage = {other.key: _held_usage(session, other) for other in blocked}
        for other in blocked:
            session.state.used -= usage[other.key]
        if not fits(session, unit):
            for other in blocked:
                session.state.used += usage[other.key]
            continue
        victims = list(blocked)
        for other in blocked:
            session.state.used += usage[other.key]
            if fits(session, unit):
                victims.remove(other)
            else:
                session.state.used -= usage[other.key]
        for other in victims:
            session.state.used += usage[other.key]  # release_held takes it off again, with decisions
            _release(session, other, unit)
            released.add(other.key)


def _holds(session: Session, unit: Unit) -> bool:
    return any(session.held(key) for key in unit.gangs)


def _held_usage(session: Session, unit: Unit):
    usage = 0
    for key in unit.gangs:
        usage = usage + session.state.usage_of(session.held(key))
    return usage


def _release(session: Session, victim: Unit, winner: Unit) -> None:
    reason = f"deadlock: released so that {winner.key} (ranked ahead) can complete"
    for key in victim.gangs:
        if release_held(session, key, reason):
            session.gangs[key] = dataclasses.replace(session.gangs[key], wait_started=None)
            session.result.transitions.append(Transition(key, TransitionKind.DEADLOCK_BROKEN, reason))
