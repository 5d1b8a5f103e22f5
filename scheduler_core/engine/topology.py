"""Topology-aware placement (issue 20): a constrained gang lands inside one domain of a level.

A distributed job runs at the speed of its slowest link, so a gang with a ``TopologyConstraint``
is placed inside one domain (one rack, one block) of a ``Topology`` level, all-or-nothing as
any gang. The rules, in the order they apply:

1. *Best fit*: among the domains of a level that can hold the whole gang (else its minimum), the
   one that leaves the least of the gang's dominant resource free once it is placed, so big
   domains stay whole for big gangs. Ties: the fewest copies left over, then the first domain.
2. *Widening*: a preferred level is tried first, then each wider level, then (with no required
   level) the whole cluster; a required level is the widest tried, and failing there the gang
   waits (``Reason.NO_DOMAIN_FITS``, ``topology_explain.py``).
3. *Fewest sub-domains*: inside the chosen domain, the members go to as few domains of the next
   narrower level as hold them (the largest first, the last one the smallest that fits the rest),
   as Kueue's BestFit does; if that fails, anywhere in the chosen domain.
4. *Members already placed* (running, held reservations) anchor the gang: a level counts only
   the domain they are all in; at a level they are already split over, the gang is placed within
   the union of their domains if that level is required, and the level is skipped if preferred.

Per level the domain of every node is an index array built once a cycle (``Domains``); a gang's
room per domain is ``fit_counts`` summed with ``np.bincount``, so nothing walks nodes in Python
per gang. A domain is the path of label values from the widest level down to its own (a rack
named ``r1`` in two blocks is two racks), so domains of a narrower level always nest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Gang, Pod, Topology, TopologyConstraint
from .placement import fit_counts
from .session import Session, Trial, shapes

#: How many fitting domains of a level, best first, are tried before the level is given up. With
#: one shape the per-domain count is exact and the first always holds; with several shapes
#: competing for the same nodes it is an upper bound.
TRIES = 3


@dataclass(frozen=True, slots=True)
class Level:
    key: str  # the node-label key
    name: str  # as explanations say it ("rack")
    ids: np.ndarray  # the domain index of each node; -1: in no domain of this level
    names: tuple[str, ...]  # each domain's label value

    @property
    def count(self) -> int:
        return len(self.names)


def level_name(key: str) -> str:
    """'example.com/rack' -> 'rack'; a Volcano tier label -> 'tier-2 HyperNode'."""
    last = key.rsplit("/", 1)[-1]
    if last.startswith("volcano-hypernode-"):
        return last.removeprefix("volcano-hypernode-") + " HyperNode"
    return last


@dataclass(frozen=True, slots=True)
class Plan:
    """A constraint resolved against the snapshot's topologies: level indexes, widest first 0."""

    topology: Topology
    required: int | None
    preferred: int | None

    def steps(self) -> list[int | None]:
        """The levels to try, narrowest first; None: the whole cluster."""
        if self.preferred is not None and (self.required is None or self.preferred > self.required):
            floor = self.required if self.required is not None else 0
            steps: list[int | None] = list(range(self.preferred, floor - 1, -1))
        else:
            steps = [self.required]
        if self.required is None:
            steps.append(None)
        return steps


class Domains:
    """The cycle's topology index: levels per topology, resolved constraints, preemption pins."""

    def __init__(self, session: Session) -> None:
        self.nodes = session.snapshot.nodes
        self.topologies = session.snapshot.topologies
        self._levels: dict[str, list[Level]] = {}
        self._plans: dict[TopologyConstraint, Plan | str] = {}
        # Preemption and reclaim (``actions/domain_victims.py``) evaluate one domain at a time:
        # gang key -> the nodes its members must stay on meanwhile.
        self.pin: dict[str, np.ndarray] = {}

    def levels(self, topology: Topology) -> list[Level]:
        cached = self._levels.get(topology.name)
        if cached is None:
            cached = self._levels[topology.name] = _build_levels(self.nodes, topology)
        return cached

    def resolve(self, constraint: TopologyConstraint) -> Plan | str:
        """The constraint's plan, or why it cannot be honoured (its level is unknown)."""
        cached = self._plans.get(constraint)
        if cached is None:
            cached = self._plans[constraint] = _resolve(self.topologies, constraint)
        return cached


def _build_levels(nodes, topology: Topology) -> list[Level]:
    """One pass over the nodes (once a cycle): each level's domain index per node."""
    keys = topology.levels
    ids = np.full((len(keys), len(nodes)), -1, dtype=np.int64)
    index: list[dict[tuple, int]] = [{} for _ in keys]
    names: list[list[str]] = [[] for _ in keys]
    for position, node in enumerate(nodes):
        labels = node.labels
        path: tuple = ()
        for depth, key in enumerate(keys):
            value = labels.get(key)
            path += (value,)
            if value is None:
                continue
            found = index[depth].get(path)
            if found is None:
                found = index[depth][path] = len(names[depth])
                names[depth].append(value)
            ids[depth, position] = found
    return [Level(key, level_name(key), ids[depth], tuple(names[depth])) for depth, key in enumerate(keys)]


def _resolve(topologies: tuple[Topology, ...], constraint: TopologyConstraint) -> Plan | str:
    wanted = [level for level in (constraint.required, constraint.preferred) if level]
    if constraint.topology is not None:
        chosen = next((t for t in topologies if t.name == constraint.topology), None)
        if chosen is None:
            return f"its topology constraint names topology {constraint.topology!r}, which does not exist"
        missing = [level for level in wanted if level not in chosen.levels]
        if missing:
            return f"topology {chosen.name!r} has no level {missing[0]!r}"
    else:
        chosen = next((t for t in topologies if all(level in t.levels for level in wanted)), None)
        if chosen is None:
            missing = next(
                (level for level in wanted if not any(level in t.levels for t in topologies)), wanted[0]
            )
            return f"its topology constraint names level {missing!r}, which no topology has"
    required = chosen.levels.index(constraint.required) if constraint.required else None
    preferred = chosen.levels.index(constraint.preferred) if constraint.preferred else None
    return Plan(chosen, required, preferred)


def domains(session: Session) -> Domains:
    if session.domains is None:
        session.domains = Domains(session)
    return session.domains


def plan_of(session: Session, gang: Gang | None) -> Plan | None:
    """The gang's plan; None when it has no constraint, topology is off, or its level is
    unknown (the gang then waits, ``unknown``; its later lone pods land anywhere)."""
    if gang is None or gang.topology is None or not session.config.topology:
        return None
    if not (gang.topology.required or gang.topology.preferred):
        return None
    plan = domains(session).resolve(gang.topology)
    return plan if isinstance(plan, Plan) else None


def unknown(session: Session, gang: Gang) -> str | None:
    """Why the gang's constraint cannot be honoured, None when it can (or there is none)."""
    if gang.topology is None or not session.config.topology:
        return None
    if not (gang.topology.required or gang.topology.preferred):
        return None
    plan = domains(session).resolve(gang.topology)
    return plan if isinstance(plan, str) else None


@dataclass(frozen=True, slots=True)
class Miss:
    """Why a gang with a required level was not placed: what the best domain of it had."""

    level: Level
    resource: str  # the gang's dominant resource
    demand: int  # of it, for the gang's minimum
    best: int  # the domain with the most room, -1: none had any
    best_amount: int  # of the resource, in copies the domain can take
    best_members: int


@dataclass
class Room:
    """What one gang's pending members could take, per node (the cycle's available capacity)."""

    groups: list[tuple[np.ndarray, list[Pod]]]
    capped: list[np.ndarray]  # per shape: copies per node, at most the shape's count
    needs: np.ndarray  # per shape: its count
    minimum: int  # members needed for min_member
    dominant: int  # the resource column the gang asks the most of
    free: np.ndarray  # per node: available amount of the dominant resource on eligible nodes

    def copies(self, level: Level) -> np.ndarray:
        """Shapes x domains: how many copies each domain can take."""
        valid = level.ids >= 0
        ids = level.ids[valid]
        return np.stack(
            [np.bincount(ids, weights=c[valid], minlength=level.count) for c in self.capped]
        ).astype(np.int64)


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
    pin = index.pin.get(gang.key)
    room = room_for(session, trial.available(), gang, pods, pin)
    anchor = anchor_of(session, gang)
    cut = trial.cut
    for step in plan.steps():
        if step is None:
            return trial.place(session, pods, gang, within=pin), None
        level = levels[step]
        allowed = anchored(level, anchor)
        if allowed is None:
            if step == plan.required:  # already split over its domains: keep to where it is
                found = np.unique(level.ids[anchor])
                within = np.isin(level.ids, found[found >= 0]) & (pin if pin is not None else True)
                return trial.place(session, pods, gang, within=within), None
            continue
        copies = room.copies(level)
        for domain in fitting(room, level, copies, allowed)[:TRIES]:
            within = level.ids == domain
            if pin is not None:
                within &= pin
            mark = len(trial.placed)
            narrower = levels[step + 1] if step + 1 < len(levels) else None
            if narrower is not None:
                left = _fewest_below(session, trial, gang, pods, room, narrower, within)
                if left is not None and len(pods) - len(left) >= room.minimum:
                    return left, None
            left = trial.place(session, pods, gang, within=within)
            if len(pods) - len(left) >= room.minimum or trial.cut is not cut:
                return left, None  # placed, or held back by its queue: no other domain helps
            trial.undo_since(mark)
    return _best_effort(session, trial, gang, pods, room, levels[plan.required], pin)


def room_for(session: Session, available: np.ndarray, gang: Gang, pods: list[Pod], pin=None) -> Room:
    """What ``pods`` could take of ``available``, per node (``pin``: only on those nodes)."""
    groups = shapes(session, pods)
    capped, masks = [], []
    for request, members in groups:
        mask = session.filter.mask(members[0])
        if pin is not None:
            mask = mask & pin
        masks.append(mask)
        capped.append(np.minimum(fit_counts(available, request, mask), len(members)))
    needs = np.array([len(members) for _, members in groups], dtype=np.int64)
    have = len(session.running(gang.key)) if gang.counts_running else 0
    minimum = max(gang.min_member - have - len(session.held(gang.key)), 1)
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


def anchor_of(session: Session, gang: Gang) -> np.ndarray:
    """Node indexes of the gang's members already placed (running, bound now, or held)."""
    state = session.state
    where = []
    for pod in session.running(gang.key):
        index = session.bound_at.get(pod.key, state.node_index.get(pod.node, -1))
        where.append(index)
    for pod in session.held(gang.key):
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
    valid = level.ids >= 0
    free = np.bincount(level.ids[valid], weights=room.free[valid], minlength=level.count)
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
    left = trial.place(session, pods, gang, within=within & np.isin(narrower.ids, taken))
    if len(pods) - len(left) < room.minimum:
        trial.undo_since(mark)
        return None
    return left


def _best_effort(
    session: Session, trial: Trial, gang: Gang, pods: list[Pod], room: Room, level: Level, pin
) -> tuple[list[Pod], Miss]:
    """No domain of the required level holds the gang: place what the best one takes (NonStrict
    gangs keep it as a reservation) and say what it had."""
    copies = room.copies(level)
    takes = np.minimum(copies, room.needs[:, None])
    placeable = takes.sum(axis=0)
    requests = np.array([request[room.dominant] for request, _ in room.groups], dtype=np.int64)
    amount = (takes * requests[:, None]).sum(axis=0)
    best = int(np.argmax(amount)) if level.count and placeable.max() > 0 else -1
    per_member = np.repeat(requests, room.needs)
    demand = int(np.sort(per_member)[: room.minimum].sum())
    left = pods
    if best >= 0:
        within = level.ids == best
        if pin is not None:
            within &= pin
        left = trial.place(session, pods, gang, within=within)
    miss = Miss(
        level,
        session.state.resources[room.dominant],
        demand,
        best,
        int(amount[best]) if best >= 0 else 0,
        int(placeable[best]) if best >= 0 else 0,
    )
    return left, miss
