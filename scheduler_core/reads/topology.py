"""What the pages, the API and ``describe`` show of the topology: the levels of every
``Topology``, each node's domain at each of them, each gang member's, and a gang's constraint.

Reads only, in a fixed number of queries (one for the topologies, one for the nodes asked about),
so a page or an API list never makes a query per node or per member. Which label is a node's
domain is ``topology_domains``'s to say (it also turns Volcano HyperNodes into labels): this
module only calls it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from scheduler_core.models import Gang, Node, Topology
from scheduler_core.reads.topology_domains import domain_of, node_domain_labels


@dataclass(frozen=True)
class Level:
    """One level of one topology: its node-label key and the short name pages show for it."""

    topology: str
    key: str

    @property
    def label(self) -> str:
        """``topology.gangsched.io/rack`` is shown as ``rack``: the key's last path segment."""
        return self.key.rsplit("/", 1)[-1]


def topologies() -> list[tuple[str, list[Level]]]:
    """Every topology, by name, with its levels widest first (one query)."""
    return [
        (name, [Level(name, key) for key in levels or []])
        for name, levels in Topology.objects.order_by("name").values_list("name", "levels")
    ]


def level_keys(tops: list[tuple[str, list[Level]]]) -> list[str]:
    """The level keys of every topology, each once, in the order the topologies list them."""
    return list(dict.fromkeys(level.key for _, levels in tops for level in levels))


def domains_by_node(nodes: Iterable, keys: list[str]) -> dict[str, dict[str, str | None]]:
    """Per node name, its domain at each level key (None: the node is in no domain there)."""
    labels = node_domain_labels(nodes)
    return {name: {key: domain_of(node_labels, key) for key in keys} for name, node_labels in labels.items()}


def member_domains(members: list, keys: list[str]) -> list[dict[str, str | None]]:
    """Each member's domains where it is bound, in ``members``' order ({} when no topology; every
    level None while it is not bound). One query for the members' nodes, whatever their number."""
    if not keys:
        return [{} for _ in members]
    names = {m.node for m in members if m.node}
    by_node = (
        domains_by_node(Node.objects.filter(name__in=names).only("name", "labels"), keys) if names else {}
    )
    unbound = dict.fromkeys(keys)
    return [by_node.get(m.node, unbound) if m.node else unbound for m in members]


def constraint_of(gang: Gang) -> dict[str, str | bool | None]:
    """The gang's topology constraint as declared: required and preferred level keys, the
    topology named (None where it has none), and whether its required domain is its own among
    exclusive gangs."""
    return {
        "required": gang.topology_required or None,
        "preferred": gang.topology_preferred or None,
        "topology": gang.topology_name or None,
        "exclusive": gang.topology_exclusive,
    }


def spans(domains: list[dict[str, str | None]], keys: list[str]) -> dict[str, int]:
    """How many domains of each level the placed members span (unplaced ones do not count)."""
    return {key: len({d[key] for d in domains if d.get(key) is not None}) for key in keys}


def gang_topology(gang: Gang, members: list) -> dict:
    """What a gang's page, its API detail and ``describe gang`` show of its topology: the levels
    (every topology's), each member's domains in ``members``' order, how many domains of each
    level the placed members span, and the gang's constraint. Two queries."""
    tops = topologies()
    keys = level_keys(tops)
    domains = member_domains(members, keys)
    labels = {level.key: level.label for _, levels in tops for level in levels}
    spanned = spans(domains, keys)
    return {
        "levels": [{"key": key, "label": labels[key], "spans": spanned[key]} for key in keys],
        "domains": domains,
        "spans": spanned,
        "constraint": constraint_of(gang),
    }
