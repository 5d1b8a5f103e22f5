"""Reclaim: a queue below its fair share takes room back from queues above theirs (issue 19).

After priority preemption within its own queue (``preempt.py``) has failed, the first unit
blocked by resources (or by borrowing: what it would borrow is kept for others) may reclaim:

1. Only if its queue is below its fair share (share ratio < 1, ``fairshare.ratios``) and stays
   within it once the unit is placed: not only below its guarantee, as in Kueue and
   KAI-Scheduler, but below what it would get if the cluster were divided fairly among those
   with demand. A unit that would take its queue over its fair share waits for room instead:
   reclaiming for it would put its victims' queues below theirs, and they would reclaim back.
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
   queue's headroom, with the victims' usage given back) is found by binary search; then the
   victims on nodes the unit would not use are given back, and each of the last few taken too,
   most expensive first, if the unit still fits without it.
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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from .. import explain, queue_explain, queue_order
from ..decisions import Evict, Explanation, Reason, Transition, TransitionKind
from ..gang import attempt, fits
from ..queue import Unit
from ..session import Session
from . import domain_victims
from .preempt import _above_minimum, _nominate
from .victims import Victim, fewest, gone, of_queues


@dataclass(eq=False)
class Bundle:
    """Victims taken together (``_bundles``), with their pods' nodes and rows in one array."""

    victims: list[Victim]
    queue: int
    nodes: np.ndarray
    rows: np.ndarray
    amount: np.ndarray  # what its queue gets back


def reclaim(session: Session, unit: Unit) -> bool:
    """Evict work of queues over their fair share so that ``unit`` fits (module docstring).

    A queue whose unit could not reclaim does not try again in the cycle for a unit that
    needs at least as much of everything: the answer would be the same, at the same cost.
    """
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
    need = _need(session, unit)
    if mode != "guarantee" and ledger.ratio_after(queue, need) > 1.0 + 1e-9:
        return False  # placed, it would be over its fair share: its victims would reclaim back
    if any(np.all(failed <= need) for failed in ledger.reclaim_failed.get(queue, ())):
        return False
    tree = ledger.tree
    if mode == "guarantee":
        declared = _declared(ledger)
        over = {
            v
            for v in range(tree.size)
            if ledger.leaf[v]
            and tree.queues[v].reclaimable
            and np.any((ledger.usage[v] > ledger.guarantee[v] + 1e-9) & declared)
        }
    else:
        over = {
            v
            for v in range(tree.size)
            if ledger.leaf[v] and tree.queues[v].reclaimable and ledger.ratios[v] > 1.0
        }
    over.discard(queue)
    chosen = None
    if over:
        own = set(unit.gangs)
        pool = [
            victim
            for victim in of_queues(session, over)
            if not gone(session, victim) and not own.intersection(victim.owners)
        ]
        chosen = domain_victims.search(
            session,
            unit,
            pool,
            lambda victims: _choose(session, unit, queue, victims, need),
            lambda victims: _choose(session, unit, queue, victims, need, minimal=False),
        )
    if chosen is None:
        ledger.reclaim_failed.setdefault(queue, []).append(need)
        return False
    _commit(session, unit, queue, chosen)
    return True


def _choose(
    session: Session, unit: Unit, queue: int, pool: list[Victim], need: np.ndarray, minimal: bool = True
) -> list | None:
    """The fewest eligible bundles of ``pool`` that let the unit fit (``_fewest``)."""
    bundles = _bundles(session, pool)
    if session.config.reclaim == "guarantee":
        return _fewest(session, unit, _borrowing(session, queue, bundles), minimal)
    return _fewest(session, unit, _eligible(session, queue, bundles, need), minimal)


def _fewest(session: Session, unit: Unit, bundles: list[Bundle], minimal: bool = True) -> list | None:
    """The shortest prefix of ``bundles`` that lets the unit fit, then those not needed given
    back (``minimal``); None when none do."""
    count = _shortest_prefix(session, unit, bundles) if bundles else None
    if count is None or not minimal:
        return bundles[:count] if count is not None else None
    return _minimal(session, unit, bundles[:count])


def _need(session: Session, unit: Unit) -> np.ndarray:
    """What the unit's waiting pods request in all."""
    state = session.state
    pods = list(unit.pods) + [pod for key in unit.gangs for pod in session.waiting(key)]
    return sum((state.vector(pod) for pod in pods), np.zeros(len(state.resources), np.int64)).astype(float)


def _bundles(session: Session, pool: list[Victim]) -> Iterator[Bundle]:
    """What is taken together: an elastic member alone, a whole gang with its elastic members
    (those not taken before it: a victim gang keeps >= min_member running or loses them all)."""
    spare: dict[int, list[Victim]] = {}
    for victim in pool:
        if victim.elastic_of is not None and victim.whole is not None:
            spare.setdefault(id(victim.whole), []).append(victim)
    seen: set[int] = set()
    for victim in pool:
        group = [victim] if victim.elastic_of is not None else [victim, *spare.get(id(victim), ())]
        group = [v for v in group if id(v) not in seen]
        if not group:
            continue
        seen.update(id(v) for v in group)
        rows = np.concatenate([v.rows for v in group]) if len(group) > 1 else group[0].rows
        nodes = np.concatenate([v.nodes for v in group]) if len(group) > 1 else group[0].nodes
        queue = session.queues.queue_of(group[0].pods[0])
        yield Bundle(group, queue, nodes, rows, rows.sum(axis=0).astype(float))


def _eligible(session: Session, queue: int, pool: Iterable[Bundle], need: np.ndarray) -> list[Bundle]:
    """Bundles in order whose queues stay at or over their fair share once taken (point 3),
    until they free twice what the unit needs (the binary search then takes the fewest)."""
    ledger = session.queues
    tree = ledger.tree
    mine = set(tree.paths[queue])
    taken: dict[int, np.ndarray] = {}
    freed = np.zeros_like(need)
    wanted = need > 0
    eligible = []
    for bundle in pool:
        path = [p for p in tree.paths[bundle.queue] if p not in mine]
        if all(ledger.ratio_after(p, -(taken.get(p, 0.0) + bundle.amount)) >= 1.0 for p in path):
            for p in path:
                taken[p] = taken.get(p, 0.0) + bundle.amount
            eligible.append(bundle)
            freed += bundle.amount
            if np.all(freed[wanted] >= 2 * need[wanted]):
                break
    return eligible


def _borrowing(session: Session, queue: int, pool: Iterable[Bundle]) -> list[Bundle]:
    """Guarantee-only reclaim: bundles in order while their queues still use more than their
    guarantee, counting the bundles before them as gone (Kueue's rule)."""
    ledger = session.queues
    tree = ledger.tree
    declared = _declared(ledger)
    mine = set(tree.paths[queue])
    taken: dict[int, np.ndarray] = {}
    eligible = []
    for bundle in pool:
        path = [p for p in tree.paths[bundle.queue] if p not in mine]
        over = (ledger.usage[p] - taken.get(p, 0.0) > ledger.guarantee[p] + 1e-9 for p in path)
        if all(np.any(o & declared) for o in over):
            for p in path:
                taken[p] = taken.get(p, 0.0) + bundle.amount
            eligible.append(bundle)
    return eligible


def _declared(ledger) -> np.ndarray:
    """The resources some queue is guaranteed (not ``pods``, unless a queue declares it)."""
    return ledger.guarantee.max(axis=0) > 0


def _lift(session: Session, bundles: list[Bundle], sign: int) -> None:
    """Take the bundles off the nodes and their queues (sign -1), or put them back (+1)."""
    if not bundles:
        return
    nodes = np.concatenate([b.nodes for b in bundles])
    rows = np.concatenate([b.rows for b in bundles])
    (np.add if sign > 0 else np.subtract).at(session.state.used, nodes, rows)
    by_queue: dict[int, np.ndarray] = {}
    for b in bundles:
        by_queue[b.queue] = by_queue.get(b.queue, 0.0) + b.amount
    for q, amount in by_queue.items():
        session.queues.charge(q, sign * amount)


def _shortest_prefix(session: Session, unit: Unit, bundles: list[Bundle]) -> int | None:
    """The fewest bundles, in order, whose eviction lets the unit fit; None if all do not."""
    state, ledger = session.state, session.queues
    saved_used, saved_ledger = state.used.copy(), ledger.save()

    def fits_after(count: int) -> bool:
        state.used[:] = saved_used
        ledger.restore(saved_ledger)
        _lift(session, bundles[:count], -1)
        return fits(session, unit)

    try:
        return fewest(len(bundles), fits_after)
    finally:
        state.used[:] = saved_used
        ledger.restore(saved_ledger)


#: How many of the chosen bundles, the last taken first, are each tried for giving back.
GIVE_BACK_TRIES = 16


def _minimal(session: Session, unit: Unit, chosen: list[Bundle]) -> list[Bundle]:
    """Give back what the unit does not need: at once the bundles with no pod on a node the
    unit would land on (if it still fits), then each of the last ``GIVE_BACK_TRIES`` taken, most
    expensive first, if the unit still fits without it."""
    _lift(session, chosen, -1)
    trial = attempt(session, unit, explain=False).trial
    landing = np.zeros(session.state.alloc.shape[0], dtype=bool)
    for placed in trial.placed:
        landing[placed.nodes] = True
    trial.discard()
    idle = [b for b in chosen if not landing[b.nodes].any()]
    kept = list(chosen)
    if idle and len(idle) < len(chosen):
        _lift(session, idle, +1)
        if fits(session, unit):
            kept = [b for b in chosen if landing[b.nodes].any()]
        else:
            _lift(session, idle, -1)
    for bundle in list(reversed(kept))[:GIVE_BACK_TRIES]:
        if len(kept) == 1:
            break
        _lift(session, [bundle], +1)
        if fits(session, unit):
            kept.remove(bundle)
        else:
            _lift(session, [bundle], -1)
    _lift(session, kept, +1)
    return kept


def _commit(session: Session, unit: Unit, queue: int, bundles: list[Bundle]) -> None:
    ledger = session.queues
    name = ledger.tree.names[queue]
    chosen = [bundle.victims[0] for bundle in bundles]
    request = sum((victim.rows.sum(axis=0) for victim in chosen), np.zeros(len(session.state.resources)))
    victim_queues = list(dict.fromkeys(bundle.queue for bundle in bundles))
    text, details = queue_explain.reclaim_text(ledger, victim_queues, request)
    by = ledger.tree.queues[queue].name
    names = _evict(session, bundles, f"reclaimed by queue {name} (below its fair share) for {unit.key}", by)
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


def _evict(session: Session, bundles: list[Bundle], why: str, reclaimed_by: str | None = None) -> str:
    """Evict the bundles (off the nodes and their queues), as preemption does; their names."""
    _lift(session, bundles, -1)
    chosen = [bundle.victims[0] for bundle in bundles]
    for bundle in bundles:
        for victim in bundle.victims:
            victim.evicted = True
            for pod in victim.pods:
                session.evicted.add(pod.key)
                session.result.evictions.append(
                    Evict(
                        pod.key,
                        pod.node,
                        pod.gang,
                        f"{why}: {bundle.victims[0].why()}",
                        reclaimed_by=reclaimed_by,
                    )
                )
    for victim in chosen:
        for key in victim.gangs:
            members = [pod.key for pod in session.members.get(key, ()) if pod.key in session.evicted]
            session.gangs[key] = dataclasses.replace(session.gangs[key], satisfied=False, wait_started=None)
            text = f"{why}: {victim.why()} ({explain.members_text(members)})"
            session.result.transitions.append(Transition(key, TransitionKind.PREEMPTED, text))
    return "; ".join(
        explain.victim_text(
            bundle.victims[0], sorted(p.key for victim in bundle.victims for p in victim.pods)
        )
        for bundle in bundles
    )


def within_max(session: Session, unit: Unit) -> bool:
    """Priority preemption within a queue at its max (Kueue's preemption within a ClusterQueue):
    the unit's own queue's lower-priority work makes room under the max, chosen as reclaim
    chooses (fewest, then given back if not needed), with the queue's headroom checked."""
    ledger = session.queues
    queue = queue_order.unit_queue(ledger, unit)
    if queue < 0 or _above_minimum(session, unit):
        return False
    own = set(unit.gangs)
    pool = [
        victim
        for victim in of_queues(session, {queue})
        if victim.priority < unit.priority
        and not gone(session, victim)
        and not own.intersection(victim.owners)
    ]
    chosen = domain_victims.search(
        session,
        unit,
        pool,
        lambda victims: _fewest(session, unit, list(_bundles(session, victims))),
        lambda victims: _fewest(session, unit, list(_bundles(session, victims)), minimal=False),
    )
    if chosen is None:
        return False
    name = ledger.tree.names[queue]
    preemptor = f"preempted by {unit.key} (priority {unit.priority}) within queue {name}, at its max"
    names = _evict(session, chosen, preemptor)
    nominated = _nominate(session, unit, f"nominated: evicting {names}")
    session.done.add(unit.key)
    for key in unit.gangs or (unit.key,):
        session.result.explanations[key] = Explanation(
            key,
            Reason.PREEMPTING,
            f"evicting {names} within queue {name}, at its max, to make room for {nominated} members; "
            "binds once they are gone",
            {"queue": name, "victims": [b.victims[0].key for b in chosen], "nominated": nominated},
        )
    return True
