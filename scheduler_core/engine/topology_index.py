"""The cycle's topology index: each level's domain of every node, and constraints
resolved against the snapshot's topologies; ``topology.py`` places gangs with it.

Built once a cycle, on first use: one pass over the nodes per topology gives, per level, an
index array (domain number per node, -1: none), so that placement never walks nodes in Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Gang, Topology, TopologyConstraint
from .session import Session


@dataclass(frozen=True, slots=True)
class Level:
    key: str  # the node-label key
    name: str  # as explanations say it ("rack")
    ids: np.ndarray  # the domain index of each node; -1: in no domain of this level
    names: tuple[str, ...]  # each domain's label value
    valid: np.ndarray  # the nodes in some domain of this level (ids >= 0)
    valid_ids: np.ndarray  # their domain indexes (ids[valid]), for np.bincount

    @property
    def count(self) -> int:
        return len(self.names)

    def sums(self, per_node: np.ndarray) -> np.ndarray:
        """``per_node`` summed per domain."""
        return np.bincount(self.valid_ids, weights=per_node[self.valid], minlength=self.count)


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
        # Level key -> where the pods of the gangs exclusive at it are (``topology_exclusive.py``),
        # built on the first exclusive gang's placement.
        self.exclusive: dict[str, object] = {}

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
    return [
        Level(
            key,
            level_name(key),
            ids[depth],
            tuple(names[depth]),
            ids[depth] >= 0,
            ids[depth][ids[depth] >= 0],
        )
        for depth, key in enumerate(keys)
    ]


def _resolve(topologies: tuple[Topology, ...], constraint: TopologyConstraint) -> Plan | str:
    if constraint.exclusive and not constraint.required:
        return "its exclusive placement names no required level to be alone in"
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
    if not _constrains(gang.topology):
        return None
    plan = domains(session).resolve(gang.topology)
    return plan if isinstance(plan, Plan) else None


def unknown(session: Session, gang: Gang) -> str | None:
    """Why the gang's constraint cannot be honoured, None when it can (or there is none)."""
    if gang.topology is None or not session.config.topology:
        return None
    if not _constrains(gang.topology):
        return None
    plan = domains(session).resolve(gang.topology)
    return plan if isinstance(plan, str) else None


def _constrains(constraint: TopologyConstraint) -> bool:
    """Whether the constraint asks anything (an exclusive one without a level is refused)."""
    return bool(constraint.required or constraint.preferred or constraint.exclusive)
