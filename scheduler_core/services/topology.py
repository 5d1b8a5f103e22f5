"""The one writer of Topology and HyperNode rows, and the check of a gang's topology constraint.

``topologies_put(topologies, hypernodes)`` judges one apply's Topology and HyperNode specs
together with what is stored, then writes them; it raises ``DeclarationError`` naming the field
at fault and writes nothing when:

- a name is declared twice in one apply, or a Topology takes the name of the HyperNodes' own
  topology (``volcano-hypernodes``);
- a Topology's levels change where its CRD forbids it (KAI's are immutable; Kueue's may change
  only with ``kubernetes.io/hostname`` the lowest level before and after);
- HyperNodes make a cycle (a HyperNode holding itself, directly or through others);
- a HyperNode member is a HyperNode of the same or a higher tier (a tier holds lower tiers), or
  a HyperNode that another HyperNode already holds (the HyperNodes make a tree).

``constraint_check`` refuses a gang's constraint that names a level no topology has (stored, or
declared by the same apply), a topology that does not exist, or a preferred level wider than the
required one. Removing a Topology a ResourceFlavor names or active gangs use is refused
(``TopologyInUse``, the API's 409).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, HyperNode, ResourceFlavor, Topology
from scheduler_core.reads.topology_domains import (
    HYPERNODE_TOPOLOGY,
    hypernode_levels,
    selected_names,
)
from scheduler_core.specs.errors import DeclarationError, join
from scheduler_core.specs.topology import HyperNodeSpec, TopologySpec

from .named_rows import named_row_put

_HOSTNAME = "kubernetes.io/hostname"
_ENDED = (GangPhase.FINISHED.value, GangPhase.FAILED.value, GangPhase.KILLED.value)


class TopologyInUse(ValueError):
    """Deleting a topology a ResourceFlavor names or active gangs use (the API's 409)."""


class TopologyNotFound(ValueError):
    """A Topology or HyperNode to remove does not exist (the API's 404)."""


@dataclass
class _Hyper:
    name: str
    tier: int
    members: list
    spec: HyperNodeSpec | None = None  # None: stored and untouched by this apply


# ---------------------------------------------------------------- writing


def topologies_put(
    topologies: list[TopologySpec], hypernodes: list[HyperNodeSpec]
) -> dict[tuple[str, str], str]:
    """Check one apply's Topology and HyperNode specs as a whole, then write them; statuses by
    ("topology" | "hypernode", name)."""
    _topologies_check(topologies)
    _hypernodes_check(hypernodes)
    statuses: dict[tuple[str, str], str] = {}
    with transaction.atomic():
        for spec in topologies:
            fields = {
                "levels": spec.levels,
                "source_format": spec.source_format,
                "declaration": spec.declaration,
            }
            statuses[("topology", spec.name)] = named_row_put(Topology, spec.name, fields)
        for spec in hypernodes:
            fields = {"tier": spec.tier, "members": spec.members, "declaration": spec.declaration}
            statuses[("hypernode", spec.name)] = named_row_put(HyperNode, spec.name, fields)
    return statuses


@transaction.atomic
def topology_remove(name: str) -> str:
    row = Topology.objects.select_for_update().filter(name=name).first()
    if row is None:
        raise TopologyNotFound(f"topology {name} not found")
    flavors = [
        flavor.name
        for flavor in ResourceFlavor.objects.only("name", "declaration")
        if ((flavor.declaration or {}).get("spec") or {}).get("topologyName") == name
    ]
    if flavors:
        raise TopologyInUse(f"topology {name} is the topologyName of ResourceFlavor {', '.join(flavors[:5])}")
    others = {
        level
        for levels in Topology.objects.exclude(pk=row.pk).values_list("levels", flat=True)
        for level in levels
    }
    only_here = [level for level in row.levels if level not in others]
    active = Gang.objects.exclude(phase__in=_ENDED)
    users = [
        gang.key
        for gang in active.only(
            "namespace", "name", "topology_required", "topology_preferred", "topology_name"
        )
        if gang.topology_name == name
        or (not gang.topology_name and {gang.topology_required, gang.topology_preferred} & set(only_here))
    ]
    if users:
        raise TopologyInUse(
            f"topology {name} is used by active gangs ({', '.join(users[:5])}): let them finish first"
        )
    row.delete()
    return "deleted"


def hypernode_remove(name: str) -> str:
    deleted, _ = HyperNode.objects.filter(name=name).delete()
    if not deleted:
        raise TopologyNotFound(f"hypernode {name} not found")
    return "deleted"


# ---------------------------------------------------------------- checks


def _topologies_check(specs: list[TopologySpec]) -> None:
    seen: set[str] = set()
    stored = dict(Topology.objects.filter(name__in=[s.name for s in specs]).values_list("name", "levels"))
    for spec in specs:
        before = stored.get(spec.name)
        if before is not None and before != spec.levels:
            _levels_change_check(spec, before)
        if spec.name in seen:
            raise DeclarationError(spec.field, f"topology {spec.name} is declared twice")
        if spec.name == HYPERNODE_TOPOLOGY:
            raise DeclarationError(
                spec.field, f"{HYPERNODE_TOPOLOGY} is the name of the topology Volcano's HyperNodes make"
            )
        seen.add(spec.name)


def _levels_change_check(spec: TopologySpec, before: list[str]) -> None:
    """The CRDs' rules for changing levels: KAI's are immutable (``self == oldSelf``); Kueue's may
    change only when ``kubernetes.io/hostname`` is the lowest level before and after."""
    if spec.source_format == "kai":
        raise DeclarationError(
            spec.levels_field, "a KAI Topology's levels are immutable: delete it and apply it again"
        )
    if spec.source_format == "kueue" and not (before[-1:] == [_HOSTNAME] == spec.levels[-1:]):
        raise DeclarationError(
            spec.levels_field,
            f"levels may change only when {_HOSTNAME} is the lowest level before and after (Kueue's rule)",
        )


def _hypernodes_check(specs: list[HyperNodeSpec]) -> None:
    if not specs:
        return
    merged = {row.name: _Hyper(row.name, row.tier, row.members or []) for row in HyperNode.objects.all()}
    for spec in specs:
        if merged.get(spec.name) is not None and merged[spec.name].spec is not None:
            raise DeclarationError(spec.field, f"hypernode {spec.name} is declared twice")
        merged[spec.name] = _Hyper(spec.name, spec.tier, spec.members, spec)
    names = sorted(merged)
    children = {
        name: [
            (index, child)
            for index, member in enumerate(node.members)
            if member.get("type") == "HyperNode"
            for child in selected_names(member.get("selector") or {}, names)
        ]
        for name, node in merged.items()
    }
    for spec in specs:
        cycle = _cycle(spec.name, children)
        if cycle:
            index = next(i for i, child in children[spec.name] if child == cycle[1])
            raise DeclarationError(
                join(spec.members_field, index), f"a cycle of HyperNodes: {' -> '.join(cycle)}"
            )
    parents: dict[str, str] = {}
    for name in names:
        node = merged[name]
        for index, child in children[name]:
            low = merged[child]
            if low.tier >= node.tier:
                where = join(node.spec.members_field, index) if node.spec else join(low.spec.field, "tier")
                raise DeclarationError(
                    where,
                    f"HyperNode {child} is of tier {low.tier}: "
                    f"a HyperNode of tier {node.tier} holds only lower tiers",
                )
            if child in parents and parents[child] != name:
                spec = node.spec or merged[parents[child]].spec or low.spec
                where = join(spec.members_field, index) if spec is node.spec else spec.field
                raise DeclarationError(
                    where, f"HyperNode {child} already belongs to {parents[child]}: HyperNodes make a tree"
                )
            parents[child] = name


def _cycle(start: str, children: dict[str, list[tuple[int, str]]]) -> list[str] | None:
    """A path start -> ... -> start through HyperNode members, or None."""
    stack = [(start, [start])]
    seen: set[str] = set()
    while stack:
        name, path = stack.pop()
        for _, child in children.get(name, []):
            if child == start:
                return [*path, start]
            if child not in seen:
                seen.add(child)
                stack.append((child, [*path, child]))
    return None


def known_topologies() -> dict[str, tuple[str, ...]]:
    """Every topology by name, its levels widest first: the Topology rows, and the HyperNodes'."""
    known = {name: tuple(levels) for name, levels in Topology.objects.values_list("name", "levels")}
    rows = list(HyperNode.objects.only("tier"))
    if rows:
        known[HYPERNODE_TOPOLOGY] = hypernode_levels(rows)
    return known


def tier_of_name(tier_name: str, field: str) -> int:
    """Volcano's ``highestTierName``: the tier whose HyperNodes carry that ``spec.tierName``."""
    tiers = {
        row.tier
        for row in HyperNode.objects.only("tier", "declaration")
        if ((row.declaration or {}).get("spec") or {}).get("tierName") == tier_name
    }
    if len(tiers) != 1:
        why = "no HyperNode has" if not tiers else f"HyperNodes of tiers {sorted(tiers)} share"
        raise DeclarationError(field, f"{why} tierName {tier_name!r}")
    return tiers.pop()


def constraint_check(required: str, preferred: str, name: str, field: str, known=None) -> None:
    """Refuse a constraint naming a level no topology has (or a topology that does not exist),
    or preferring a level wider than the one it requires; ``field`` names the key at fault."""
    if not (required or preferred or name):
        return
    known = known_topologies() if known is None else known
    if name and name not in known:
        raise DeclarationError(
            field, f"topology {name} not found (known: {', '.join(sorted(known)) or 'none'})"
        )
    candidates = {name: known[name]} if name else known
    for level in filter(None, (required, preferred)):
        if not any(level in levels for levels in candidates.values()):
            where = f"topology {name} does not have it" if name else "no topology has it"
            raise DeclarationError(field, f"unknown level {level}: {where}")
    if required and preferred:
        fits = [levels for levels in candidates.values() if required in levels and preferred in levels]
        if not fits or fits[0].index(preferred) < fits[0].index(required):
            raise DeclarationError(
                field, f"preferred level {preferred} is wider than the required level {required}"
            )
