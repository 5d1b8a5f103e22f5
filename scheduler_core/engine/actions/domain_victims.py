"""Preemption and reclaim inside one domain: victims only where the gang will land.

A gang with a topology constraint can use only the room freed inside one domain: victims taken
elsewhere would be work thrown away for nothing. So for such a unit, preemption and reclaim
probe each candidate domain (``probe``: the shortest prefix of their victims with a pod in
that domain that lets the gang fit, the gang pinned to the domain meanwhile). The domain whose
prefix is cheapest wins: the earliest last victim in their order (lowest priority, youngest
first), then the fewest victims, then the domain probed first; only there does ``find`` run
(the prefix again, then the victims not needed after all given back, one fit test each).
Levels are tried narrowest first, as placement tries them; with no required level the whole
cluster comes last (the search on every victim, as without a topology). A domain another
exclusive gang holds is no candidate for an exclusive gang: its holder is not evicted to free it
(kube-scheduler's preemption takes victims on one node, so it frees a domain of several nodes from
another's anti-affinity only when all of that one's pods happen to be on the node).

Candidate domains are those that could hold the gang were all their victims gone (``fit_counts``
on free + the victims' usage, summed per domain: an upper bound), the ones with the most room
now first, at most ``CANDIDATES`` per level: each costs a binary search of trial placements.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import topology
from ..model import Gang
from ..queue import Unit
from ..session import Session

#: Candidate domains evaluated per level.
CANDIDATES = 3
#: Inside a domain, how many of the victims found, the last taken first, are each tried for
#: giving back (a big gang freeing a block may take hundreds; reclaim's own cap is the same).
GIVE_BACK_TRIES = 16


def search(
    session: Session,
    unit: Unit,
    pool: list,
    find: Callable[[list], list | None],
    probe: Callable[[list], list | None],
    find_within: Callable[[list], list | None] | None = None,
) -> list | None:
    """``find`` on the victims of the best domain (module docstring), or on ``pool`` whole for
    a unit with no constraint. ``pool`` items have ``nodes`` (node index per pod); what ``probe``
    returns (the prefix, the state put back) is items of ``pool`` or bundles of them
    (``victims``: the first one ranks a bundle). The state (used capacity, queue ledger) is
    left as ``find`` left it for the winner (``find_within`` inside a domain, when given)."""
    gang = _constrained(session, unit)
    if gang is None or not pool:
        return find(pool)
    plan = topology.plan_of(session, gang)
    pods = session.waiting(gang.key)
    if not pods:
        return find(pool)
    state = session.state
    freed = np.zeros_like(state.alloc)
    nodes = np.concatenate([item.nodes for item in pool])
    np.add.at(freed, nodes, np.concatenate([item.rows for item in pool]))
    placed = topology.placed_members(session, gang)
    levels = topology.domains(session).levels(plan.topology)
    valid, _held = topology.required_nodes(session, None, gang, plan, levels)
    now = topology.room_for(session, state.free, gang, pods, valid, placed)
    then = topology.room_for(session, state.free + freed, gang, pods, valid, placed)
    anchor = topology.anchor_of(session, placed)
    position = {id(item): i for i, item in enumerate(pool)}
    owner = np.repeat(np.arange(len(pool)), [len(item.nodes) for item in pool])
    for step in plan.steps():
        if step is None:
            return find(pool)
        level = levels[step]
        allowed = topology.anchored(level, anchor)
        if allowed is None:
            if step == plan.required:
                return find(pool)  # already split: as placement, keep to where it is
            continue
        best = None
        for domain in _candidates(now, then, level, allowed):
            inside = level.ids == domain
            hit = np.zeros(len(pool), dtype=bool)
            hit[owner[inside[nodes]]] = True
            sub = [pool[i] for i in np.flatnonzero(hit)]
            outcome = _try(session, gang, inside, sub, probe) if sub else None
            if outcome is None:
                continue
            prefix, _after = outcome
            last = max(position[id(getattr(item, "victims", (item,))[0])] for item in prefix)
            if best is None or (last, len(prefix)) < best[0]:
                best = ((last, len(prefix)), inside, sub)
        if best is not None:
            _rank, inside, sub = best
            outcome = _try(session, gang, inside, sub, find_within or find)
            if outcome is not None:
                _restore(session, outcome[1])
                return outcome[0]
    return None


def _constrained(session: Session, unit: Unit) -> Gang | None:
    """The unit's one unsettled gang with a constraint; None for none, or for several (a group
    of constrained gangs searches the whole cluster, each gang still placed in its domain)."""
    found = [
        session.gangs[key]
        for key in unit.gangs
        if not session.gangs[key].settled and topology.plan_of(session, session.gangs[key]) is not None
    ]
    return found[0] if len(found) == 1 else None


def _candidates(now, then, level, allowed: int) -> np.ndarray:
    fits = topology.fitting(then, level, then.copies(level), allowed)
    if fits.size <= 1:
        return fits
    room = now.copies(level).sum(axis=0)
    return fits[np.lexsort((fits, -room[fits]))][:CANDIDATES]


def _try(session: Session, gang: Gang, inside: np.ndarray, pool: list, find):
    """``find`` with the gang pinned to the domain; the state put back, and the state ``find``
    left returned with its choice."""
    state, ledger = session.state, session.queues
    saved = (state.used.copy(), ledger.save() if ledger is not None else None)
    pins = topology.domains(session).pin
    pins[gang.key] = inside
    try:
        chosen = find(pool)
        after = (state.used.copy(), ledger.save() if ledger is not None else None)
    finally:
        del pins[gang.key]
        _restore(session, saved)
    return (chosen, after) if chosen else None


def _restore(session: Session, saved: tuple) -> None:
    used, charged = saved
    session.state.used[:] = used
    if charged is not None:
        session.queues.restore(charged)
