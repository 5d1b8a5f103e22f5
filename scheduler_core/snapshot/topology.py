"""The cluster's topologies for the engine's Snapshot, read in two queries.

``Snapshot.topologies`` holds one ``engine.Topology`` per Topology row (Kueue's and KAI's, by
name) plus, when HyperNodes exist, the ``volcano-hypernodes`` topology their tiers make; the
nodes' labels get the HyperNodes' synthetic tier labels, and ``kubernetes.io/hostname`` where a
simulated node lacks it (``topology_domains.py``), so that the engine finds every domain by a
label. A gang's four constraint fields become its
``engine.TopologyConstraint`` (None when all are blank: it may land anywhere).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from scheduler_core.engine import model as engine
from scheduler_core.models import HyperNode, Topology
from scheduler_core.reads.topology_domains import (
    HOSTNAME,
    HYPERNODE_TOPOLOGY,
    hypernode_levels,
    node_domain_labels,
)


@lru_cache(maxsize=1024)
def topology_constraint(
    required: str, preferred: str, name: str, exclusive: bool = False
) -> engine.TopologyConstraint | None:
    """A gang's constraint fields as the engine's (one shared frozen object per distinct one)."""
    if not (required or preferred or name or exclusive):
        return None
    return engine.TopologyConstraint(
        required=required or None, preferred=preferred or None, topology=name or None, exclusive=exclusive
    )


def topologies_read(
    nodes: tuple[engine.Node, ...],
) -> tuple[tuple[engine.Topology, ...], tuple[engine.Node, ...]]:
    """The topologies, and ``nodes`` with their HyperNode labels added (unchanged without any)."""
    topologies = [
        engine.Topology(name=name, levels=tuple(levels))
        for name, levels in Topology.objects.order_by("name").values_list("name", "levels")
    ]
    hypernodes = list(HyperNode.objects.only("name", "tier", "members"))
    if hypernodes:
        topologies.append(engine.Topology(name=HYPERNODE_TOPOLOGY, levels=hypernode_levels(hypernodes)))
    elif not any(HOSTNAME in topology.levels for topology in topologies):
        return tuple(topologies), nodes  # no label to add
    labels = node_domain_labels(nodes, hypernodes)
    nodes = tuple(
        node if labels[node.name] == node.labels else dataclasses.replace(node, labels=labels[node.name])
        for node in nodes
    )
    return tuple(topologies), nodes
