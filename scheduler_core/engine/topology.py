"""Topology-aware placement: a constrained gang lands inside one domain of a level.

A distributed job runs at the speed of its slowest link, so a gang with a ``TopologyConstraint``
is placed inside one domain (one rack, one block) of a ``Topology`` level, all-or-nothing as
any gang. The rules, in the order they apply:

0. *One node*: a bin-packed gang (of one shape, none of it placed yet) that one node can hold
   whole goes to the fullest such node among those labelled at every level it may use
   (bin-packing's own rule, ``placement.choose``): one node is inside one domain of every level.
1. *Best fit*: among the domains of a level that can hold the whole gang (else its minimum), the
   one that leaves the least of the gang's dominant resource free once it is placed, so big
   domains stay whole for big gangs. Ties: the fewest copies left over, then the first domain.
2. *Widening*: a preferred level is tried first, then each wider level, then (with no required
   level) the whole cluster; a required level is the widest tried, and failing there the gang
   waits (``Reason.NO_DOMAIN_FITS``, ``topology_explain.py``).
3. *Fewest sub-domains*: inside the chosen domain, the members go to as few domains of the next
   narrower level as hold them (the largest first, the last one the smallest that fits the rest),
   as Kueue's BestFit does; if that fails, anywhere in the chosen domain. Not for the leaf level
   (hosts): bin-packing (``placement.choose``) already takes the nodes that hold most first.
4. *Members already placed* (running, held reservations) anchor the gang: a level counts only
   the domain they are all in; at a level they are already split over, the gang is placed within
   the union of their domains if that level is required, and the level is skipped if preferred.
5. *Exclusive* gangs: the required level's domains that another gang exclusive at it holds are
   left out before any of the above (``topology_exclusive.py``); when that leaves none that fits,
   the explanation says how many domains are held, and by whom.

Per level the domain of every node is an index array built once a cycle (``topology_index.py``);
a gang's room per domain is ``fit_counts`` summed with ``np.bincount``, so nothing walks nodes
in Python per gang. A domain is the path of label values from the widest level down to its own (a rack
named ``r1`` in two blocks is two racks), so domains of a narrower level always nest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import topology_exclusive
from .model import Gang, GangMode, Placement, Pod
from .placement import fit_counts
from .session import Session, Trial, shapes
from .topology_index import Level, Plan, domains, plan_of, unknown

__all__ = [
    "Miss",
    "Room",
    "anchor_of",
    "anchored",
    "domains",
    "fitting",
    "place",
    "placed_members",
    "plan_of",
    "required_nodes",
    "room_for",
    "unknown",
]

#: How many fitting domains of a level, best first, are tried before the level is given up. With
#: one shape the per-domain count is exact and the first always holds; with several shapes
#: competing for the same nodes it is an upper bound.
TRIES = 3


@dataclass(frozen=True, slots=True)
class Miss:
    """Why a gang with a required level was not placed: what the best domain of it had."""

    level: Level
    resource: str  # the gang's dominant resource
    demand: int  # of it, for the gang's minimum
    best: int  # the domain with the most room, -1: none had any
    best_amount: int  # of the resource, in copies the domain can take
    best_members: int
    held: dict[int, str] = field(default_factory=dict)  # exclusive: domains other gangs hold


@dataclass
class Room:
    """What one gang's pending members could take, per node (the cycle's available capacity)."""

    groups: list[tuple[np.ndarray, list[Pod]]]
    capped: list[np.ndarray]  # per shape: copies per node, at most the shape's count
    needs: np.ndarray  # per shape: its count
    minimum: int  # members needed for min_member
    dominant: int  # the resource column the gang asks the most of
    free: np.ndarray  # per node: available amount of the dominant resource on eligible nodes

    @property
    def single(self) -> np.ndarray | None:
        """The copies per node of the only shape (reused by ``Trial.place``); None: several."""
        return self.capped[0] if len(self.capped) == 1 else None

    def copies(self, level: Level) -> np.ndarray:
        """Shapes x domains: how many copies each domain can take."""
        return np.stack([level.sums(c) for c in self.capped]).astype(np.int64)


def place(
    session: Session, trial: Trial, gang: Gang | None, pods: list[Pod]
) -> tuple[list[Pod], Miss | None]:
    """``trial.place`` for the gang's ``pods``, inside one domain when the gang has a constraint
    (module docstring); returns the pods left unplaced and, for a required level that no domain
    of could hold the gang, what the best domain had."""
    plan = plan_of(session, gang)
    if plan is None or not pods:
        return trial.place(session, pods, gang), None
    index = domains(session)
    levels = index.levels(plan.topology)
    pinned = index.pin.get(gang.key)
    pin = pinned  # and, with a required level, only nodes in one of its domains
    valid, held = required_nodes(session, trial, gang, plan, levels)
    if valid is not None:
        pin = valid if pinned is None else pinned & valid
    placed = placed_members(session, gang)
    room = room_for(session, trial.available(), gang, pods, pin, placed)
    anchor = anchor_of(session, placed)
    if not anchor.size and pinned is None and room.single is not None and gang.placement == Placement.BINPACK:
        # One node holds the whole gang: bin-packing's fullest such node is inside one domain
        # of every level (rule 0), with no domain search.
        labelled = np.logical_and.reduce([levels[step].valid for step in plan.steps() if step is not None])
        if np.any(labelled & (room.single >= room.needs[0])):
            return trial.place(
                session, pods, gang, groups=room.groups, counts=room.single, within=labelled
            ), None
    cut = trial.cut
    for step in plan.steps():
        if step is None:
            return trial.place(session, pods, gang, groups=room.groups, counts=room.single, within=pin), None
        level = levels[step]
        allowed = anchored(level, anchor)
        if allowed is None:
            if step == plan.required:  # already split over its domains: keep to where it is
                found = np.unique(level.ids[anchor])
                within = np.isin(level.ids, found[found >= 0]) & (pin if pin is not None else True)
                return trial.place(
                    session, pods, gang, groups=room.groups, counts=room.single, within=within
                ), None
            continue
        copies = room.copies(level)
        for domain in fitting(room, level, copies, allowed)[:TRIES]:
            within = level.ids == domain
            if pin is not None:
                within &= pin
            mark = len(trial.placed)
            # The leaf level (hosts) is left to bin-packing, which takes the nodes that hold
            # the most copies first: the fewest hosts already.
            narrower = levels[step + 1] if step + 2 < len(levels) else None
            if narrower is not None:
                left = _fewest_below(session, trial, gang, pods, room, narrower, within)
                if left is not None and len(pods) - len(left) >= room.minimum:
                    return left, None
            left = trial.place(session, pods, gang, groups=room.groups, counts=room.single, within=within)
            if len(pods) - len(left) >= room.minimum or trial.cut is not cut:
                return left, None  # placed, or held back by its queue: no other domain helps
            trial.undo_since(mark)
    required = levels[plan.required]
    return _best_effort(session, trial, gang, pods, room, required, anchored(required, anchor), pin, held)


def required_nodes(
    session: Session, trial: Trial | None, gang: Gang, plan: Plan, levels: list[Level]
) -> tuple[np.ndarray | None, dict[int, str]]:
    """The nodes the required level leaves the gang (those in one of its domains, less, for an
    exclusive gang, the domains other exclusive gangs hold) and those held domains; None: no
    required level."""
    if plan.required is None:
        return None, {}
    level = levels[plan.required]
    if not gang.topology.exclusive:
        return level.valid, {}
    held = topology_exclusive.held(session, trial, gang, level)
    if not held:
        return level.valid, held
    return level.valid & ~np.isin(level.ids, list(held)), held


def placed_members(session: Session, gang: Gang) -> tuple[list[Pod], list[Pod]]:
    """The gang's members running (or bound in this cycle) and those holding a reservation."""
    return session.running(gang.key), session.held(gang.key)


def room_for(
    session: Session, available: np.ndarray, gang: Gang, pods: list[Pod], pin=None, placed=None
) -> Room:
    """What ``pods`` could take of ``available``, per node (``pin``: only on those nodes)."""
    running, held = placed if placed is not None else placed_members(session, gang)
    groups = shapes(session, pods)
    capped, masks = [], []
    for request, members in groups:
        mask = session.filter.mask(members[0])
        if pin is not None:
            mask = mask & pin
        masks.append(mask)
        capped.append(np.minimum(fit_counts(available, request, mask), len(members)))
    needs = np.array([len(members) for _, members in groups], dtype=np.int64)
    have = len(running) if gang.counts_running else 0
    minimum = max(gang.min_member - have - len(held), 1)
    total = sum(request * len(members) for request, members in groups)
    dominant = int(np.argmax(total / session.state.scale))
    eligible = np.logical_or.reduce(masks)
    free = np.where(eligible, np.maximum(available[:, dominant], 0), 0)
    return Room(groups, capped, needs, min(minimum, int(needs.sum())), dominant, free)


def anchored(level: Level, anchor: np.ndarray) -> int | None:
    """The one domain of ``level`` the gang's placed members are in; -1: none placed, any
    domain; None: they are split over several (or outside the level's domains)."""
    if not anchor.size:
        return -1
    found = np.unique(level.ids[anchor])
    return int(found[0]) if found.size == 1 and found[0] >= 0 else None


def anchor_of(session: Session, placed: tuple[list[Pod], list[Pod]]) -> np.ndarray:
    """Node indexes of the gang's members already placed (``placed_members``)."""
    state = session.state
    running, held = placed
    where = []
    for pod in running:
        index = session.bound_at.get(pod.key, state.node_index.get(pod.node, -1))
        where.append(index)
    for pod in held:
        where.append(state.node_index.get(session.reserved_node(pod), -1))
    return np.array([w for w in where if w >= 0], dtype=np.int64)


def fitting(room: Room, level: Level, copies: np.ndarray, allowed: int) -> np.ndarray:
    """The domains that hold all the members (else the minimum), best fit first."""
    if allowed >= 0:
        copies = copies[:, allowed : allowed + 1]
    whole = np.all(copies >= room.needs[:, None], axis=0)
    candidates = np.flatnonzero(whole) if whole.any() else np.flatnonzero(copies.sum(axis=0) >= room.minimum)
    if allowed >= 0:
        return candidates + allowed
    if candidates.size <= 1:
        return candidates
    free = level.sums(room.free)
    spare = copies.sum(axis=0)
    return candidates[np.lexsort((candidates, spare[candidates], free[candidates]))]


def _fewest_below(
    session: Session, trial: Trial, gang: Gang, pods: list[Pod], room: Room, narrower: Level, within
) -> list[Pod] | None:
    """Place inside ``within`` on the fewest domains of the next level down (rule 3); None when
    that would be all of them anyway. Undoes itself when it falls short."""
    copies = room.copies(narrower).sum(axis=0)
    inside = np.unique(narrower.ids[within & (narrower.ids >= 0)])
    if inside.size <= 1:
        return None
    need = int(room.needs.sum())
    order = inside[np.lexsort((inside, -copies[inside]))]
    cumulative = np.cumsum(copies[order])
    last = int(np.searchsorted(cumulative, need))
    if last >= order.size - 1:
        return None  # it takes them all (or cannot hold them all): no narrowing
    taken = list(order[:last])
    remainder = need - (int(cumulative[last - 1]) if last else 0)
    rest = order[last:]
    fits = rest[copies[rest] >= remainder]
    taken.append(int(fits[np.lexsort((fits, copies[fits]))][0]))
    mark = len(trial.placed)
    left = trial.place(
        session,
        pods,
        gang,
        groups=room.groups,
        counts=room.single,
        within=within & np.isin(narrower.ids, taken),
    )
    if len(pods) - len(left) < room.minimum:
        trial.undo_since(mark)
        return None
    return left


def _best_effort(
    session: Session,
    trial: Trial,
    gang: Gang,
    pods: list[Pod],
    room: Room,
    level: Level,
    allowed: int,
    pin,
    held: dict[int, str],
) -> tuple[list[Pod], Miss]:
    """No domain of the required level holds the gang: place what the best one takes (the
    one its placed members are in, if any; NonStrict gangs keep it as a reservation) and say
    what it had."""
    copies = room.copies(level)
    takes = np.minimum(copies, room.needs[:, None])
    placeable = takes.sum(axis=0)
    requests = np.array([request[room.dominant] for request, _ in room.groups], dtype=np.int64)
    amount = (takes * requests[:, None]).sum(axis=0)
    if allowed >= 0:
        best = allowed if placeable[allowed] > 0 else -1
    else:
        best = int(np.argmax(amount)) if level.count and placeable.max() > 0 else -1
    per_member = np.repeat(requests, room.needs)
    demand = int(np.sort(per_member)[: room.minimum].sum())
    left = pods
    if best >= 0 and (placeable[best] >= room.minimum or not _discarded(session, gang)):
        # ``placeable`` counts each shape on its own: shapes that fit apart may not fit together,
        # so a count that would reach the gang's minimum is only believed once really placed.
        within = level.ids == best
        if pin is not None:
            within &= pin
        left = trial.place(session, pods, gang, groups=room.groups, counts=room.single, within=within)
    elif best >= 0:  # short of the minimum, and its trial is thrown away: the count is enough (clocks)
        left = pods[int(placeable[best]) :]
    miss = Miss(
        level,
        session.state.resources[room.dominant],
        demand,
        best,
        int(amount[best]) if best >= 0 else 0,
        int(placeable[best]) if best >= 0 else 0,
        held,
    )
    return left, miss


def _discarded(session: Session, gang: Gang) -> bool:
    """Whether a failed attempt of the gang is rolled back whole (Strict, no permit hold)."""
    return session.mode(gang) == GangMode.STRICT and session.config.permit_hold <= 0
