"""Reclaim: a queue below its fair share takes room back from queues above theirs (issue 19).

After priority preemption within its own queue (``preempt.py``) has failed, the first unit
blocked by resources (or by borrowing: what it would borrow is kept for others) may reclaim:

1. Only if its queue is below its fair share (share ratio < 1, ``fairshare.ratios``): not only
   below its guarantee, as in Kueue and KAI-Scheduler, but below what it would get if the
   cluster were divided fairly among those with demand.
2. Victims are whole gangs (with their gang group) and lone pods of *reclaimable* queues over
   their fair share, lowest priority first, then youngest first (``victims.py``'s order, whatever
   their priority relative to the unit's: queues, not priorities, decide across queues).
3. A victim is eligible only if, after it and the victims before it are gone, every queue on
   its path below the common ancestor with the unit's queue is still at or above its fair
   share. Scheduling order and reclaim use this same ratio: the victim queue, still at or over
   its share, can never reclaim back (no ping-pong).
4. The shortest prefix of the eligible victims that lets the unit fit (the nodes and its
   queue's headroom, with the victims' usage given back) is found by binary search, then each
   victim is given back, most expensive first, if the unit still fits without it.
5. The victims are evicted (whole gangs transition PREEMPTED, as with preemption, with a reason
   naming the queue the room goes to) and the unit's minimum is nominated on the room.

``EngineConfig.reclaim`` = "guarantee" replaces the thresholds of points 1 and 3 by what Kueue
(reclaimWithinCohort) and KAI-Scheduler do, for trace replay to compare: the unit's queue may
reclaim only if it stays within its guarantee once the unit's pending pods are placed, and a
victim is eligible while its queue (below the common ancestor) still uses more than its
guarantee before it is taken. "none" never reclaims.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import explain, queue_explain, queue_order
from ..decisions import Evict, Explanation, Reason, Transition, TransitionKind
from ..gang import fits
from ..queue import Unit
from ..session import Session
from .preempt import _above_minimum, _nominate
from .victims import Victim, candidates

#: Reclaim looks at all running work, whatever its priority.
EVERY_PRIORITY = 1 << 62


def reclaim(session: Session, unit: Unit) -> bool:
    ledger = session.queues
    mode = session.config.reclaim
    queue = queue_order.unit_queue(ledger, unit)
    if mode == "none" or queue < 0 or _above_minimum(session, unit):
        return False
    if mode == "guarantee":
        pods = [pod for key in unit.gangs for pod in session.members.get(key, ())] or unit.pods
        request = sum((session.state.vector(pod) for pod in pods if pod.pending), 0.0)
        if np.any((ledger.usage[queue] + request > ledger.guarantee[queue] + 1e-9) & _declared(ledger)):
            return False
    elif ledger.ratios[queue] >= 1.0:
        return False
    own = set(unit.gangs)
    pool = [
        victim
        for victim in candidates(session, EVERY_PRIORITY)
        if victim.elastic_of is None and not victim.evicted and not own.intersection(victim.owners)
    ]
    eligible = (_borrowing if mode == "guarantee" else _eligible)(session, queue, pool)
    if not eligible:
        return False
    count = _shortest_prefix(session, unit, eligible)
    if count is None:
        return False
    chosen = _minimal(session, unit, eligible[:count])
    _commit(session, unit, queue, chosen)
    return True


def _queue(session: Session, victim: Victim) -> int:
    return session.queues.queue_of(victim.pods[0])


def _eligible(session: Session, queue: int, pool: list[Victim]) -> list[Victim]:
    """Victims in order whose queues stay at or over their fair share once taken (point 3)."""
    ledger = session.queues
    tree = ledger.tree
    mine = set(tree.paths[queue])
    taken: dict[int, np.ndarray] = {}
    eligible = []
    for victim in pool:
        v = _queue(session, victim)
        if v < 0 or not tree.queues[v].reclaimable or ledger.ratios[v] <= 1.0:
            continue
        amount = victim.rows.sum(axis=0).astype(float)
        path = [p for p in tree.paths[v] if p not in mine]
        if all(ledger.ratio_after(p, -(taken.get(p, 0.0) + amount)) >= 1.0 for p in path):
            for p in path:
                taken[p] = taken.get(p, 0.0) + amount
            eligible.append(victim)
    return eligible


def _borrowing(session: Session, queue: int, pool: list[Victim]) -> list[Victim]:
    """Guarantee-only reclaim: victims in order while their queues still use more than their
    guarantee, counting the victims before them as gone (Kueue's rule)."""
    ledger = session.queues
    tree = ledger.tree
    mine = set(tree.paths[queue])
    taken: dict[int, np.ndarray] = {}
    eligible = []
    for victim in pool:
        v = _queue(session, victim)
        if v < 0 or not tree.queues[v].reclaimable:
            continue
        path = [p for p in tree.paths[v] if p not in mine]
        over = (ledger.usage[p] - taken.get(p, 0.0) > ledger.guarantee[p] + 1e-9 for p in path)
        if all(np.any(o & _declared(ledger)) for o in over):
            amount = victim.rows.sum(axis=0).astype(float)
            for p in path:
                taken[p] = taken.get(p, 0.0) + amount
            eligible.append(victim)
    return eligible


def _declared(ledger) -> np.ndarray:
    """The resources some queue is guaranteed (not ``pods``, unless a queue declares it)."""
    return ledger.guarantee.max(axis=0) > 0


def _lift(session: Session, victims: list[Victim], sign: int) -> None:
    """Take the victims off the nodes and their queues (sign -1), or put them back (+1)."""
    used = session.state.used
    for victim in victims:
        (victim.restore if sign > 0 else victim.free)(used)
        session.queues.charge(_queue(session, victim), sign * victim.rows.sum(axis=0).astype(float))


def _fits_without(session: Session, unit: Unit, victims: list[Victim]) -> bool:
    _lift(session, victims, -1)
    try:
        return fits(session, unit)
    finally:
        _lift(session, victims, +1)


def _shortest_prefix(session: Session, unit: Unit, victims: list[Victim]) -> int | None:
    if not _fits_without(session, unit, victims):
        return None
    low, high = 1, len(victims)
    while low < high:
        middle = (low + high) // 2
        if _fits_without(session, unit, victims[:middle]):
            high = middle
        else:
            low = middle + 1
    return low


def _minimal(session: Session, unit: Unit, chosen: list[Victim]) -> list[Victim]:
    """Give back each victim, most expensive (last taken) first, if the unit fits without it."""
    kept = list(chosen)
    for victim in reversed(chosen):
        rest = [other for other in kept if other is not victim]
        if rest and _fits_without(session, unit, rest):
            kept = rest
    return kept


def _commit(session: Session, unit: Unit, queue: int, chosen: list[Victim]) -> None:
    ledger = session.queues
    name = ledger.tree.names[queue]
    request = sum((victim.rows.sum(axis=0) for victim in chosen), np.zeros(len(session.state.resources)))
    victim_queues = list(dict.fromkeys(_queue(session, victim) for victim in chosen))
    text, details = queue_explain.reclaim_text(ledger, victim_queues, request)
    _lift(session, chosen, -1)
    reclaimer = f"reclaimed by queue {name} (below its fair share) for {unit.key}"
    for victim in chosen:
        victim.evicted = True
        for pod in victim.pods:
            session.evicted.add(pod.key)
            session.result.evictions.append(
                Evict(pod.key, pod.node, pod.gang, f"{reclaimer}: {victim.why()}")
            )
    for victim in chosen:
        for key in victim.gangs:
            members = [pod.key for pod in session.members.get(key, ()) if pod.key in session.evicted]
            session.gangs[key] = dataclasses.replace(session.gangs[key], satisfied=False, wait_started=None)
            why = f"{reclaimer}: {victim.why()} ({explain.members_text(members)})"
            session.result.transitions.append(Transition(key, TransitionKind.PREEMPTED, why))
    names = "; ".join(explain.victim_text(victim, sorted(p.key for p in victim.pods)) for victim in chosen)
    nominated = _nominate(session, unit, f"nominated: reclaim from {text}")
    session.done.add(unit.key)
    for key in unit.gangs or (unit.key,):
        session.result.explanations[key] = Explanation(
            key,
            Reason.WAITING_FOR_RECLAIM,
            f"waiting for reclaim from {text}: evicting {names} to make room for {nominated} members",
            {
                "queue": name,
                "from": details,
                "victims": [victim.key for victim in chosen],
                "nominated": nominated,
            },
        )
