"""Reclaim: a queue below its fair share takes room back from queues above theirs.

After priority preemption within its own queue (``preempt.py``) has failed, the first unit
blocked by resources (or by borrowing: what it would borrow is kept for others) may reclaim, by
one of two rules:

- **Up to its guarantee**, at once: if its queue stays within its guarantee once the unit's
  pending pods are placed, it takes from queues that use more than their guarantee (below the
  common ancestor), counting the victims before as gone, as Kueue (reclaimWithinCohort) and
  KAI-Scheduler do. Its queue then holds no more than its fair share (which is at least
  ``min(demand, guarantee)``), so its victims' queues can never reclaim back from it.
- **Up to its fair share**, after its queue's delay (``reclaim_delay``): a unit that would
  take its queue beyond its guarantee reclaims only once it has waited that long since it was
  created (YuniKorn's ``preemption.delay``: running work often ends by itself in that time, and
  a fair share moves as demand comes and goes), only if its queue is below its fair share
  (share ratio < 1, ``fairshare.ratios``) and stays within it once the unit is placed, and only
  from work of queues over their fair share whose queues stay at or over it once taken: every
  queue on the victim's path below the common ancestor with the unit's queue. The victim queue, still at
  or over its share, can never reclaim back (no ping-pong). This is what Kueue and KAI do not
  do (KAI-Scheduler #1934): a team without a guarantee gets a fair part of what is above the
  guarantees, instead of whatever it holds when the others arrive.

A queue whose ``reclaim_up_to`` is "guarantee" (YuniKorn's) has neither: it reclaims only after
its delay, only while it and each ancestor that declares a guarantee stay within it, never when
none on its path declares one, and only from work whose queues keep their declared guarantees
(``reclaim_declared.py``).

Then, for every rule:

1. Victims are work of *reclaimable* queues, in ``victims.py``'s order whatever their priority
   relative to the unit's (queues, not priorities, decide across queues): elastic members
   above their gang's minimum first (the gang keeps running), then whole gangs (with their gang
   group, and their elastic members not taken yet) and lone pods; each lowest priority first,
   then youngest first.
2. The shortest prefix of the eligible victims that lets the unit fit (the nodes and its
   queue's headroom, with the victims' usage given back) is found by binary search; then the
   victims on nodes the unit would not use are given back, and each of the last few taken too,
   most expensive first, if the unit still fits without it.
3. The victims are evicted (whole gangs transition PREEMPTED, as with preemption, with a reason
   naming the queue the room goes to and the rule) and the unit's minimum is nominated on the
   room.

``EngineConfig.reclaim`` = "guarantee" keeps only the first rule, for trace replay to compare
with what Kueue and KAI-Scheduler do; "none" never reclaims.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

import numpy as np

from .. import explain, queue_explain, queue_order
from ..decisions import Evict, Explanation, Reason, Transition, TransitionKind
from ..queue import Unit
from ..session import Session
from . import domain_victims, reclaim_declared
from .preempt import _above_minimum, _nominate, hold_until_gone, may_search, preempts_within
from .reclaim_bundles import Bundle, bundles_of, fewest_bundles, lift, minimal_of, pods_of, shortest_prefix
from .victim_index import of_queues
from .victims import Victim

#: The rule of a queue whose ``reclaim_up_to`` is "guarantee" (``reclaim_declared.py``).
DECLARED = "declared-guarantee"


def reclaim(session: Session, unit: Unit) -> bool:
    """Evict work of queues over their fair share so that ``unit`` fits (module docstring).

    A queue whose unit could not reclaim does not try again in the cycle for a unit that
    needs at least as much of everything: the answer would be the same, at the same cost.
    """
    ledger = session.queues
    queue = queue_order.unit_queue(ledger, unit)
    if session.config.reclaim == "none" or queue < 0 or _above_minimum(session, unit):
        return False
    rule = _rule(session, queue, unit)
    if rule is None:
        return False
    need = _need(session, unit)
    if rule == "fair-share":
        if ledger.ratios[queue] >= 1.0 or session.now - unit.created < reclaim_delay(session, queue):
            return False
        if ledger.ratio_after(queue, need) > 1.0 + 1e-9:
            return False  # placed, it would be over its fair share: its victims would reclaim back
    failed = ledger.reclaim_failed.setdefault((queue, rule), [])
    if any(np.all(earlier <= need) for earlier in failed):
        return False
    tree = ledger.tree
    if rule == DECLARED:  # any other queue's work: reclaim_declared.eligible sorts it
        over = {v for v in range(tree.size) if ledger.leaf[v] and tree.queues[v].reclaimable}
    elif rule == "guarantee":
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
    if over and not may_search(session, unit):
        return False
    chosen = None
    if over:
        pool = of_queues(session, over, tuple(unit.gangs), _cover(ledger))
        chosen = domain_victims.search(
            session,
            unit,
            pool,
            lambda victims: _choose(session, unit, queue, victims, need, rule),
            lambda victims: _choose(session, unit, queue, victims, need, rule, minimal=False),
        )
    if chosen is None:
        failed.append(need)
        return False
    _commit(session, unit, queue, chosen, rule)
    return True


def _rule(session: Session, queue: int, unit: Unit) -> str | None:
    """The rule the unit reclaims by; None: it may not reclaim now.

    Up to its guarantee a queue reclaims at once and from anyone over theirs (Kueue's and KAI's
    rule); beyond it, up to its fair share, only after the delay and from queues over their
    fair share. A queue whose ``reclaim_up_to`` is "guarantee" (YuniKorn) reclaims only up to
    its declared guarantees, after its delay, from queues staying at or above theirs
    (``reclaim_declared.py``).
    """
    request = _request(session, unit)
    if session.queues.tree.queues[queue].reclaim_up_to == "guarantee":
        if session.now - unit.created < reclaim_delay(session, queue):
            return None
        return DECLARED if reclaim_declared.within(session, queue, request) else None
    guaranteed = _within_guarantee(session, queue, request)
    if session.config.reclaim == "guarantee" and not guaranteed:
        return None
    return "guarantee" if guaranteed else "fair-share"


def reclaim_delay(session: Session, queue: int) -> float:
    """How long a unit of leaf ``queue`` waits before reclaiming beyond its guarantee: the
    queue's own delay (a Volcano queue reclaims at once, a YuniKorn queue after its
    ``preemption.delay``), else ``EngineConfig.reclaim_delay_s``."""
    own = session.queues.tree.queues[queue].reclaim_delay_s
    return session.config.reclaim_delay_s if own is None else own


def _request(session: Session, unit: Unit) -> np.ndarray:
    """What the unit's pending pods request (its gangs' members, or its lone pod)."""
    pods = [pod for key in unit.gangs for pod in session.members.get(key, ())] or unit.pods
    return np.asarray(sum((session.state.vector(pod) for pod in pods if pod.pending), 0.0))


def _within_guarantee(session: Session, queue: int, request: np.ndarray) -> bool:
    """Whether the queue stays within its guarantee once the unit's pending pods (``request``)
    are placed, on the resources the unit asks for that the queues account
    (``fairshare.measured``)."""
    ledger = session.queues
    counted = ledger.measured & (request > 0)
    return not np.any((ledger.usage[queue] + request > ledger.guarantee[queue] + 1e-9) & counted)


def _choose(
    session: Session,
    unit: Unit,
    queue: int,
    pool: list[Victim],
    need: np.ndarray,
    rule: str,
    minimal: bool = True,
) -> list | None:
    """The fewest bundles of ``pool`` eligible under ``rule`` that let the unit fit
    (``fewest_bundles``).

    Guarantee reclaim may take from a long list (every bundle of every queue over its
    guarantee); judging all of them for each unit cost seconds a cycle with 100 queues. So the
    list is read in growing pieces, until its bundles free twice, four times, ... what the unit
    needs and the unit fits with all of them: the shortest fitting prefix of such a piece is
    the shortest of the whole list, so the choice is the same as over the whole list.
    """
    bundles = bundles_of(session, pool)
    if rule != "guarantee":
        pick = reclaim_declared.eligible if rule == DECLARED else _eligible
        return fewest_bundles(session, unit, pick(session, queue, bundles, need), minimal)
    stream = _borrowing(session, queue, bundles)
    eligible: list[Bundle] = []
    freed = np.zeros_like(need)
    wanted = need > 0
    factor = 2.0
    for bundle in stream:
        eligible.append(bundle)
        freed += bundle.amount
        if np.all(freed[wanted] >= factor * need[wanted]):
            count = shortest_prefix(session, unit, eligible)
            if count is not None:  # searched once: give back what is not needed, if asked
                return minimal_of(session, unit, eligible[:count]) if minimal else eligible[:count]
            factor *= 2
    return fewest_bundles(session, unit, eligible, minimal)


def _need(session: Session, unit: Unit) -> np.ndarray:
    """What the unit's waiting pods request in all."""
    state = session.state
    pods = list(unit.pods) + [pod for key in unit.gangs for pod in session.waiting(key)]
    return sum((state.vector(pod) for pod in pods), np.zeros(len(state.resources), np.int64)).astype(float)


def _eligible(session: Session, queue: int, pool: Iterable[Bundle], need: np.ndarray) -> list[Bundle]:
    """Bundles in order whose queues stay at or over their fair share once taken,
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


def _borrowing(session: Session, queue: int, pool: Iterable[Bundle]) -> Iterator[Bundle]:
    """Guarantee-only reclaim: bundles in order while their queues still use more than their
    guarantee, counting the bundles before them as gone (Kueue's rule). What each queue uses
    over its guarantee is kept as it goes (a hundred bundles a unit, a dozen units a cycle)."""
    ledger = session.queues
    tree = ledger.tree
    declared = _declared(ledger)
    mine = set(tree.paths[queue])
    paths: dict[int, list[int]] = {}
    over: dict[int, np.ndarray] = {}  # queue -> usage - guarantee, less the bundles taken
    for bundle in pool:
        path = paths.get(bundle.queue)
        if path is None:
            path = paths[bundle.queue] = [p for p in tree.paths[bundle.queue] if p not in mine]
            for p in path:
                if p not in over:
                    over[p] = ledger.usage[p] - ledger.guarantee[p]
        if all(np.any((over[p] > 1e-9) & declared) for p in path):
            for p in path:
                over[p] = over[p] - bundle.amount
            yield bundle


def _cover(ledger) -> frozenset[int]:
    """The leaf queues the first reclaim of a cycle builds ``of_queues``' list for: every
    reclaimable one over its guarantee or its fair share then. Which queues are over changes as
    the cycle places work; building once for both rules saves building again for each."""
    tree = ledger.tree
    declared = _declared(ledger)
    return frozenset(
        v
        for v in range(tree.size)
        if ledger.leaf[v]
        and tree.queues[v].reclaimable
        and (ledger.ratios[v] > 1.0 or np.any((ledger.usage[v] > ledger.guarantee[v] + 1e-9) & declared))
    )


def _declared(ledger) -> np.ndarray:
    """The resources some queue is guaranteed (not ``pods``, unless a queue declares it)."""
    return ledger.guarantee.max(axis=0) > 0


def _commit(session: Session, unit: Unit, queue: int, bundles: list[Bundle], rule: str) -> None:
    ledger = session.queues
    name = ledger.tree.names[queue]
    chosen = [bundle.victims[0] for bundle in bundles]
    request = sum((victim.rows.sum(axis=0) for victim in chosen), np.zeros(len(session.state.resources)))
    victim_queues = list(dict.fromkeys(bundle.queue for bundle in bundles))
    basis = "fair share" if rule == "fair-share" else "guarantee"
    text, details = queue_explain.reclaim_text(ledger, victim_queues, request, basis)
    by = ledger.tree.queues[queue].name
    names = _evict(session, bundles, f"reclaimed by queue {name} (below its {basis}) for {unit.key}", by)
    nominated = hold_until_gone(
        session, *pods_of(bundles), lambda: _nominate(session, unit, f"nominated: reclaim from {text}")
    )
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
    lift(session, bundles, -1)
    chosen = [bundle.victims[0] for bundle in bundles]
    for bundle in bundles:
        for victim in bundle.victims:
            victim.evicted = True
            for pod in victim.pods:
                session.evict(pod)
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
    """Priority preemption within a queue at its max (Kueue's ``withinClusterQueue:
    LowerPriority``): the unit's own queue's lower-priority work makes room under the max, chosen
    as reclaim chooses (fewest, then given back if not needed), with the queue's headroom
    checked. Never in a queue whose format does not preempt within a queue
    (``Queue.preempt_within``: Kueue's default Never, YuniKorn): the unit waits at the max."""
    ledger = session.queues
    queue = queue_order.unit_queue(ledger, unit)
    if queue < 0 or not preempts_within(ledger, queue) or _above_minimum(session, unit):
        return False
    if not may_search(session, unit):
        return False
    pool = [
        victim for victim in of_queues(session, {queue}, tuple(unit.gangs)) if victim.priority < unit.priority
    ]
    chosen = domain_victims.search(
        session,
        unit,
        pool,
        lambda victims: fewest_bundles(session, unit, list(bundles_of(session, victims))),
        lambda victims: fewest_bundles(session, unit, list(bundles_of(session, victims)), minimal=False),
    )
    if chosen is None:
        return False
    name = ledger.tree.names[queue]
    preemptor = f"preempted by {unit.key} (priority {unit.priority}) within queue {name}, at its max"
    names = _evict(session, chosen, preemptor)
    nominated = hold_until_gone(
        session, *pods_of(chosen), lambda: _nominate(session, unit, f"nominated: evicting {names}")
    )
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
