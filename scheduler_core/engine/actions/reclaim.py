"""Reclaim: a queue below its fair share takes room back from queues above theirs (issue 19).

After priority preemption within its own queue (``preempt.py``) has failed, the first unit
blocked by resources (or by borrowing: what it would borrow is kept for others) may reclaim:

1. Only if its queue is below its fair share (share ratio < 1, ``fairshare.ratios``): not only
   below its guarantee, as in Kueue and KAI-Scheduler, but below what it would get if the
   cluster were divided fairly among those with demand.
2. Victims are work of *reclaimable* queues over their fair share, in ``victims.py``'s order
   whatever their priority relative to the unit's (queues, not priorities, decide across
   queues): elastic members above their gang's minimum first (the gang keeps running), then
   whole gangs (with their gang group, and their elastic members not taken yet) and lone pods;
   each lowest priority first, then youngest first.
3. A victim is eligible only if, after it and the victims before it are gone, every queue on
   its path below the common ancestor with the unit's queue is still at or above its fair
   share. Scheduling order and reclaim use this same ratio: the victim queue, still at or over
   its share, can never reclaim back (no ping-pong).
4. The shortest prefix of the eligible victims that lets the unit fit (the nodes and its
   queue's headroom, with the victims' usage given back) is found by binary search, then each
   victim is given back, most expensive first, if the unit still fits without it.
5. The victims are evicted (whole gangs transition PREEMPTED, as with preemption, with a reason
   naming the queue the room goes to) and the unit's minimum is nominated on the room.
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
    queue = queue_order.unit_queue(ledger, unit)
    if queue < 0 or ledger.ratios[queue] >= 1.0 or _above_minimum(session, unit):
        return False
    own = set(unit.gangs)
    pool = [
        victim
        for victim in candidates(session, EVERY_PRIORITY)
        if not victim.evicted and not own.intersection(victim.owners)
    ]
    eligible = _eligible(session, queue, _bundles(pool))
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


def _bundles(pool: list[Victim]) -> list[list[Victim]]:
    """What is taken together: an elastic member alone, a whole gang with its elastic members
    (those not taken before it: a victim gang keeps >= min_member running or loses them all)."""
    bundles: list[list[Victim]] = []
    spare: dict[int, list[Victim]] = {}
    for victim in pool:
        if victim.elastic_of is not None and victim.whole is not None:
            spare.setdefault(id(victim.whole), []).append(victim)
    for victim in pool:
        if victim.elastic_of is not None:
            bundles.append([victim])
        else:
            bundles.append([victim, *spare.get(id(victim), ())])
    return bundles


def _eligible(session: Session, queue: int, pool: list[list[Victim]]) -> list[list[Victim]]:
    """Bundles in order whose queues stay at or over their fair share once taken (point 3)."""
    ledger = session.queues
    tree = ledger.tree
    mine = set(tree.paths[queue])
    taken: dict[int, np.ndarray] = {}
    seen: set[int] = set()
    eligible = []
    for bundle in pool:
        bundle = [victim for victim in bundle if id(victim) not in seen]
        v = _queue(session, bundle[0]) if bundle else -1
        if v < 0 or not tree.queues[v].reclaimable or ledger.ratios[v] <= 1.0:
            continue
        amount = sum(victim.rows.sum(axis=0).astype(float) for victim in bundle)
        path = [p for p in tree.paths[v] if p not in mine]
        if all(ledger.ratio_after(p, -(taken.get(p, 0.0) + amount)) >= 1.0 for p in path):
            for p in path:
                taken[p] = taken.get(p, 0.0) + amount
            seen.update(id(victim) for victim in bundle)
            eligible.append(bundle)
    return eligible


def _lift(session: Session, bundles: list[list[Victim]], sign: int) -> None:
    """Take the victims off the nodes and their queues (sign -1), or put them back (+1)."""
    used = session.state.used
    for bundle in bundles:
        for victim in bundle:
            (victim.restore if sign > 0 else victim.free)(used)
            session.queues.charge(_queue(session, victim), sign * victim.rows.sum(axis=0).astype(float))


def _fits_without(session: Session, unit: Unit, victims: list[list[Victim]]) -> bool:
    _lift(session, victims, -1)
    try:
        return fits(session, unit)
    finally:
        _lift(session, victims, +1)


def _shortest_prefix(session: Session, unit: Unit, victims: list[list[Victim]]) -> int | None:
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


def _minimal(session: Session, unit: Unit, chosen: list[list[Victim]]) -> list[list[Victim]]:
    """Give back each bundle, most expensive (last taken) first, if the unit fits without it."""
    kept = list(chosen)
    for victim in reversed(chosen):
        rest = [other for other in kept if other is not victim]
        if rest and _fits_without(session, unit, rest):
            kept = rest
    return kept


def _commit(session: Session, unit: Unit, queue: int, bundles: list[list[Victim]]) -> None:
    ledger = session.queues
    name = ledger.tree.names[queue]
    chosen = [bundle[0] for bundle in bundles]
    request = sum((victim.rows.sum(axis=0) for victim in chosen), np.zeros(len(session.state.resources)))
    victim_queues = list(dict.fromkeys(_queue(session, victim) for victim in chosen))
    text, details = queue_explain.reclaim_text(ledger, victim_queues, request)
    _lift(session, bundles, -1)
    reclaimer = f"reclaimed by queue {name} (below its fair share) for {unit.key}"
    for bundle in bundles:
        for victim in bundle:
            victim.evicted = True
            for pod in victim.pods:
                session.evicted.add(pod.key)
                session.result.evictions.append(
                    Evict(pod.key, pod.node, pod.gang, f"{reclaimer}: {bundle[0].why()}")
                )
    for victim in chosen:
        for key in victim.gangs:
            members = [pod.key for pod in session.members.get(key, ()) if pod.key in session.evicted]
            session.gangs[key] = dataclasses.replace(session.gangs[key], satisfied=False, wait_started=None)
            why = f"{reclaimer}: {victim.why()} ({explain.members_text(members)})"
            session.result.transitions.append(Transition(key, TransitionKind.PREEMPTED, why))
    names = "; ".join(
        explain.victim_text(bundle[0], sorted(p.key for victim in bundle for p in victim.pods))
        for bundle in bundles
    )
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
