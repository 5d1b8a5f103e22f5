"""Preemption for a unit blocked by resources: take only what its minimum needs, elastic first.

1. Wait instead of preempting when pods already being deleted would make room.
2. A member above its gang's min_member never preempts: a lone pod of a gang already running
   at least min_member members waits for free room (Volcano's jobStarving: only a job below its
   minAvailable preempts).
3. Victims (``victims.py``) are strictly lower-priority running work: elastic members above
   their own gang's minimum first, then whole gangs and lone pods, each lowest priority and then
   youngest first. The shortest prefix of that order that lets the preemptor's minimum
   (min_member and min_resources) fit is found by binary search (more victims never make it fit
   less); then victims on nodes the preemptor would not use are given back, and each other one
   too, most expensive first, if the preemptor still fits without it. An elastic member is
   never given back while its gang is taken whole, so a victim gang keeps >= min_member running
   or loses all of its members.
4. Only if the preemptor then fits: the victims are evicted, and the members its minimum needs
   are reserved (nominated) on the room they leave; they bind in a later cycle, once it is
   free. Members beyond the minimum are not nominated: they wait for free room.

With queues priority preemption stays within the preemptor's queue: victims are
its own queue's work (taking another queue's is reclaim, ``reclaim.py``), and only where the
queue's format preempts within a queue (``Queue.preempt_within``: not Kueue's
``withinClusterQueue: Never``, not YuniKorn). The search runs on
the nodes alone; the victims found are kept only if the preemptor then also fits its queue's
headroom, with the victims' usage given back to the queue.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from .. import explain, queue_order
from ..decisions import Evict, Explanation, Reason, Reserve, Transition, TransitionKind
from ..gang import attempt, fits
from ..model import Pod
from ..queue import Unit
from ..session import Session
from . import domain_victims
from .fit_bound import Bound
from .victims import Victim, candidates, fewest, of_queue, shift_all


def preempt(session: Session, unit: Unit) -> bool:
    """Evict the cheapest lower-priority work that lets ``unit``'s minimum fit."""
    if _above_minimum(session, unit):
        return False
    terminating = _terminating_usage(session)
    if terminating is not None and _fits_after_terminating(session, unit, terminating):
        for key in unit.gangs or (unit.key,):
            session.result.explanations[key] = Explanation(
                key, Reason.PREEMPTING, "waiting for evicted pods to terminate", {}
            )
        return True
    ledger = session.queues
    if ledger is None:
        pool = candidates(session, unit.priority)
    else:  # within the unit's own queue, if its format preempts there
        queue = queue_order.unit_queue(ledger, unit)
        if not preempts_within(ledger, queue):
            return False
        pool = of_queue(session, queue, unit.priority)
    victims = pool.select(session, unit.priority, tuple(unit.gangs))
    if not victims or not may_search(session, unit):
        return False
    session.admission = ledger is None
    try:
        chosen = domain_victims.search(
            session,
            unit,
            victims,
            lambda pool: _fewest(session, unit, pool),
            lambda pool: _prefix(session, unit, pool),
            lambda pool: _fewest(session, unit, pool, domain_victims.GIVE_BACK_TRIES),
        )
    finally:
        session.admission = True
    if chosen is None:
        return False
    if ledger is not None:
        freed = [pod for victim in chosen for pod in victim.pods]
        ledger.charge_pods(freed, -1)
        if not fits(session, unit):  # the nodes have room, the queue's headroom has not
            ledger.charge_pods(freed)
            for victim in chosen:
                victim.restore(session.state)
            return False
    _commit(session, unit, chosen)
    return True


def may_search(session: Session, unit: Unit) -> bool:
    """Whether ``unit`` may search for victims in this cycle (``EngineConfig.preempt_depth``);
    counts it when it may, and remembers it when it may not (its explanation says so)."""
    if unit.key in session.searched:  # preemption, then reclaim: one unit, one search
        return True
    depth = session.config.preempt_depth
    if depth and len(session.searched) >= depth:
        session.deferred.add(unit.key)
        return False
    session.searched.add(unit.key)
    return True


def preempts_within(ledger, queue: int) -> bool:
    """Whether a unit of ``queue`` may evict its own queue's lower-priority work: not in a Kueue
    ClusterQueue whose ``withinClusterQueue`` is Never, nor in a YuniKorn queue (YuniKorn has no
    intra-queue preemption). A queue the tree does not have (-1) keeps gangsched's rule."""
    return queue < 0 or ledger.tree.queues[queue].preempt_within


def _fewest(
    session: Session, unit: Unit, victims: list[Victim], tries: int | None = None
) -> list[Victim] | None:
    """The cheapest victims that let ``unit`` fit, left evicted in the state; None: none do.
    ``tries``: how many of them, the last taken first, are each tried for giving back (all)."""
    count = _shortest_prefix(session, unit, victims)
    return _minimal(session, unit, victims[:count], tries) if count is not None else None


def _prefix(session: Session, unit: Unit, victims: list[Victim]) -> list[Victim] | None:
    """The shortest prefix of ``victims`` that lets ``unit`` fit, the state put back."""
    count = _shortest_prefix(session, unit, victims)
    return victims[:count] if count is not None else None


def _above_minimum(session: Session, unit: Unit) -> bool:
    """A lone pod of a gang that already runs min_member members: an extra, it never preempts."""
    if unit.is_gang or not session.config.gangs or unit.pods[0].gang is None:
        return False
    gang = session.gangs.get(unit.pods[0].gang)
    return gang is not None and len(session.running(gang.key)) >= gang.min_member


def _minimal(session: Session, unit: Unit, chosen: list[Victim], tries: int | None = None) -> list[Victim]:
    """Evict ``chosen`` (which lets ``unit`` fit) and give back every victim not needed after all.

    Victims with no pod on a node the preemptor would use are given back at once; the rest one
    by one, most expensive first, each only if the preemptor still fits without it. An elastic
    member stays taken while its gang is taken whole (wholes come last in the order: their fate
    is settled first).
    """
    state = session.state
    shift_all(state, chosen, -1)
    bound = Bound(session, unit)
    trial = attempt(session, unit, explain=False).trial
    landing = np.zeros(len(state.alloc), bool)
    for placed in trial.placed:
        landing[placed.nodes] = True
    trial.discard()
    taken = {id(victim) for victim in chosen}
    owner = np.repeat(np.arange(len(chosen)), [len(victim.nodes) for victim in chosen])
    lands = np.zeros(len(chosen), bool)
    lands[owner[landing[np.concatenate([victim.nodes for victim in chosen])]]] = True
    idle = {id(victim) for victim, used in zip(chosen, lands.tolist(), strict=True) if not used}
    busy = taken - idle
    idle = {id(victim) for victim in chosen if id(victim) in idle and not _pinned(victim, busy)}
    given_back = [victim for victim in chosen if id(victim) in idle]
    shift_all(state, given_back, +1)
    bound.count()
    if idle and not _fits(session, unit, bound):  # placement shifted with the room given back
        shift_all(state, given_back, -1)
        bound.count()
        idle = set()
    taken -= idle
    kept = [victim for victim in chosen if id(victim) not in idle]
    trying = list(reversed(kept))[:tries]
    lost = bound.losses(trying)
    maybe = bound.holds(lost)  # False: giving it back leaves no room, by count alone
    nodes = np.concatenate([victim.nodes for victim in trying]) if trying else np.zeros(0, np.int64)
    owner = np.repeat(np.arange(len(trying)), [len(victim.nodes) for victim in trying])
    for i, victim in enumerate(trying):
        if _pinned(victim, taken) or not maybe[i]:
            continue
        victim.restore(state)
        if bound.exact or fits(session, unit):
            taken.discard(id(victim))
            kept.remove(victim)
            bound.totals -= lost[:, i]
            # Only the victims sharing a node with it lose a different count now.
            touched = np.zeros(len(state.alloc), bool)
            touched[victim.nodes] = True
            near = np.unique(owner[touched[nodes]])
            near = near[near > i]
            lost[:, near] = bound.losses([trying[j] for j in near])
            maybe[i + 1 :] = bound.holds(lost[:, i + 1 :])
            continue
        victim.free(state)
    return kept


def _fits(session: Session, unit: Unit, bound: Bound) -> bool:
    """``fits``, from the count alone when it is the answer (``Bound.exact``); ``bound``
    counted on the state as it is."""
    if bound.exact:
        return bound.holds()
    return bound.holds() and fits(session, unit)


def _pinned(victim: Victim, taken: set[int]) -> bool:
    """An elastic member whose gang is taken whole (``taken``: ids of victims): it goes with it."""
    return victim.whole is not None and id(victim.whole) in taken


def _shortest_prefix(session: Session, unit: Unit, victims: list[Victim]) -> int | None:
    """The fewest cheapest victims whose eviction lets ``unit`` fit; None if all of them do not."""
    bound = Bound(session, unit)
    low = bound.shortest(victims)
    if low is None or bound.exact:  # not even all of them free enough room; or the count is the answer
        return low
    state = session.state

    def fits_after(count: int) -> bool:
        taken = victims[:count]
        nodes = np.concatenate([victim.nodes for victim in taken])
        rows = np.concatenate([victim.rows for victim in taken])
        state.shift(nodes, rows, -1)
        try:
            return fits(session, unit)
        finally:
            state.shift(nodes, rows, +1)

    return fewest(len(victims), fits_after, low)


def _terminating_usage(session: Session) -> np.ndarray | None:
    """Per-node usage of pods already being deleted, and of those evicted in this cycle
    (``hold_until_gone``); None when there are none. The snapshot's part once a cycle."""
    if session.terminating_usage is None:
        pods = [pod for pod in session.snapshot.pods if pod.terminating]
        session.terminating_usage = session.state.usage_of(pods) if pods else False
    return session.terminating_usage if session.terminating_usage is not False else None


def _fits_after_terminating(session: Session, unit: Unit, usage: np.ndarray) -> bool:
    """Would the unit fit once the pods being deleted are gone (from their queues too)? If so,
    the room it would take is spoken for until the end of the cycle, so that the next unit
    does not count on the same room."""
    if session.queues is None:
        return _claim_without(session, unit, usage)
    leaving = [
        pod for pod in session.snapshot.pods if pod.terminating and pod.node in session.state.node_index
    ]
    session.queues.charge_pods(leaving, -1)
    try:
        return _claim_without(session, unit, usage)
    finally:
        session.queues.charge_pods(leaving)


def _claim_without(session: Session, unit: Unit, usage: np.ndarray) -> bool:
    """``_fits_after_terminating`` on the nodes: with the terminating pods (``usage``) gone,
    from exclusive domains too. A unit that fits keeps its trial's room taken in the state."""
    session.state.used -= usage
    session.vanished = lambda pod: pod.terminating or pod.key in session.evicted
    try:
        result = attempt(session, unit, explain=False)
        if not result.satisfied:
            result.trial.discard()
        return result.satisfied
    finally:
        session.state.used += usage
        session.vanished = None


def hold_until_gone(
    session: Session, nodes: np.ndarray, rows: np.ndarray, nominate: Callable[[], int]
) -> int:
    """``nominate()`` (the preemptor's reservations; returns what it returns) on the room of the
    pods just evicted (one ``rows`` row each, on ``nodes``), then hold what is left of that room
    for the rest of the cycle.

    An evicted pod holds its node until it is gone: a kubelet admits no pod onto room that a
    terminating pod still uses, and this cycle's binds go out before its evictions. So nothing
    else may bind there in this cycle: each node keeps at least the usage it had before the
    eviction (the preemptor's nomination counts towards it, not on top of it). A later
    preemptor that would fit once they are gone waits for them (``_terminating_usage``) rather
    than evicting more.
    """
    state = session.state
    touched = np.unique(nodes)
    before = state.alloc[touched] - state.free_at(touched)
    np.add.at(before, np.searchsorted(touched, nodes), rows)
    nominated = nominate()
    held = np.maximum(before - (state.alloc[touched] - state.free_at(touched)), 0)
    state.shift(touched, held, +1)
    usage = _terminating_usage(session)
    if usage is None:
        usage = np.zeros_like(state.alloc)
    usage[touched] += held
    session.terminating_usage = usage
    return nominated


def _commit(session: Session, unit: Unit, chosen: list[Victim]) -> None:
    preemptor = f"preempted by {unit.key} (priority {unit.priority})"
    taken = {id(victim) for victim in chosen}
    for victim in chosen:
        victim.evicted = True
        # An elastic member taken with its whole gang is evicted as part of the whole gang.
        reason = victim.whole if _pinned(victim, taken) else victim
        for pod in victim.pods:
            session.evict(pod)
            session.result.evictions.append(
                Evict(pod.key, pod.node, pod.gang, f"{preemptor}: {reason.why()}")
            )
    for victim in chosen:
        for key in victim.gangs:
            members = [pod.key for pod in session.members.get(key, ()) if pod.key in session.evicted]
            session.gangs[key] = dataclasses.replace(session.gangs[key], satisfied=False, wait_started=None)
            why = f"{preemptor}: {victim.why()} ({explain.members_text(members)})"
            session.result.transitions.append(Transition(key, TransitionKind.PREEMPTED, why))
    _explain(session, unit, chosen, taken)


def _explain(session: Session, unit: Unit, chosen: list[Victim], taken: set[int]) -> None:
    """Nominate the preemptor and say whom it takes and why: the elastic members of one gang
    together, an elastic member taken with its whole gang in the gang."""
    pods: dict[str, tuple[Victim, list[str]]] = {}
    for victim in chosen:
        owner = victim.whole if _pinned(victim, taken) else victim
        label = owner.elastic_of.key if owner.elastic_of is not None else owner.key
        pods.setdefault(label, (owner, []))[1].extend(pod.key for pod in victim.pods)
    shown = [(victim, keys if victim.elastic_of else sorted(keys)) for victim, keys in pods.values()]
    names = "; ".join(explain.victim_text(victim, keys) for victim, keys in shown)
    nominated = hold_until_gone(
        session,
        np.concatenate([victim.nodes for victim in chosen]),
        np.concatenate([victim.rows for victim in chosen]),
        lambda: _nominate(session, unit, f"nominated: evicting {names}"),
    )
    session.done.add(unit.key)
    for key in unit.gangs or (unit.key,):
        session.result.explanations[key] = Explanation(
            key,
            Reason.PREEMPTING,
            f"evicting {names} to make room for {nominated} members; binds once they are gone",
            {
                "victims": [victim.key for victim in chosen if not _pinned(victim, taken)],
                "taken": [explain.victim_details(victim, keys) for victim, keys in shown],
                "nominated": nominated,
            },
        )


def _nominate(session: Session, unit: Unit, reason: str) -> int:
    """Reserve the room of the members the preemptor's minimum needs; returns how many."""
    result = attempt(session, unit, explain=False)
    assignments = _needed(session, unit, result.trial.assignments())
    result.trial.discard()
    state = session.state
    for pod, node in assignments:
        state.used[state.node_index[node]] += state.vector(pod)
        session.reserve(pod, node)
        session.result.reservations.append(Reserve(pod.key, node, pod.gang, reason))
    if session.queues is not None:
        session.queues.charge_pods([pod for pod, _node in assignments])
    return len(assignments)


def _needed(session: Session, unit: Unit, assignments: list[tuple[Pod, str]]) -> list[tuple[Pod, str]]:
    """The placed members that min_member and min_resources need, in placement order."""
    if not unit.is_gang:
        return assignments
    state = session.state
    need: dict[str, list] = {}
    for key in unit.gangs:
        gang = session.gangs[key]
        have = [*session.running(key), *session.held(key)]
        missing = state.requests_vector(gang.min_resources) - sum(
            (state.vector(pod) for pod in have), np.zeros(len(state.resources), np.int64)
        )
        need[key] = [gang.min_member - len(have), missing]
    kept = []
    for pod, node in assignments:
        count, missing = need[pod.gang]
        if count > 0 or np.any(missing > 0):
            kept.append((pod, node))
            need[pod.gang] = [count - 1, missing - state.vector(pod)]
    return kept
