"""Each topology with its domains and their figures, for the API and the CLI.

A topology is a Topology row (Kueue's or KAI's) or, when HyperNodes exist, Volcano's
``volcano-hypernodes`` (``topology_domains.py``). Per level, each domain (a label value) lists
how many nodes it has, their allocatable summed per resource and what is free of it (allocatable
less the requests of the active pods bound there, never below zero); nodes without the level's
label are in no domain of it and are counted as ``outside``. Read-only: two queries for the
topologies, two for the nodes and their pods, whatever the number of domains.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler_core.models import HyperNode, Topology
from scheduler_core.reads.selectors import node_usage
from scheduler_core.reads.topology_domains import HYPERNODE_TOPOLOGY, hypernode_levels, node_domain_labels


@dataclass
class TopologyView:
    name: str
    levels: list[str]
    source_format: str
    declaration: dict[str, Any] = field(default_factory=dict)
    created: Any = None
    # level -> {"domains": {value: {"nodes", "allocatable", "free"}}, "outside": nodes}
    domains: dict[str, dict[str, Any]] = field(default_factory=dict)


def topology_views(name: str | None = None, *, figures: bool = True) -> list[TopologyView]:
    """Every topology (or the one named), by name; ``figures``: with their domains."""
    rows = Topology.objects.order_by("name")
    if name is not None:
        rows = rows.filter(name=name)
    views = [
        TopologyView(row.name, list(row.levels), row.source_format, row.declaration, row.created)
        for row in rows
    ]
    hypernodes = list(HyperNode.objects.only("name", "tier", "members", "declaration", "created"))
    if hypernodes and name in (None, HYPERNODE_TOPOLOGY):
        first = min(hypernodes, key=lambda h: h.created)
        views.append(
            TopologyView(
                HYPERNODE_TOPOLOGY,
                list(hypernode_levels(hypernodes)),
                "volcano",
                {"hypernodes": sorted(h.name for h in hypernodes)},
                first.created,
            )
        )
        views.sort(key=lambda view: view.name)
    if figures and views:
        _figures(views, hypernodes)
    return views


def _figures(views: list[TopologyView], hypernodes: list) -> None:
    usage = node_usage()
    labels = node_domain_labels([entry["node"] for entry in usage], hypernodes)
    for view in views:
        for level in view.levels:
            domains: dict[str, dict[str, Any]] = {}
            outside = 0
            for entry in usage:
                node = entry["node"]
                value = labels[node.name].get(level)
                if value is None:
                    outside += 1
                    continue
                domain = domains.setdefault(value, {"nodes": 0, "allocatable": {}, "free": {}})
                domain["nodes"] += 1
                for resource, amount in (node.allocatable or {}).items():
                    amount = int(amount)
                    free = max(0, amount - int(entry["used"].get(resource, 0)))
                    domain["allocatable"][resource] = domain["allocatable"].get(resource, 0) + amount
                    domain["free"][resource] = domain["free"].get(resource, 0) + free
            view.domains[level] = {"domains": dict(sorted(domains.items())), "outside": outside}
