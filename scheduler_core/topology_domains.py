"""Which domain of each topology level a node is in (issue 20), for the snapshot and the pages.

A level is a node-label key, so a node's domain is usually just its label's value. Volcano's
HyperNodes name no label: their tree is turned into synthetic labels here, one per tier
(``hypernode_label(tier)`` = the HyperNode of that tier holding the node), so that the engine,
the Nodes page and the API treat every format alike. This is the one place that mapping lives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: The synthetic label key that carries, per node, the name of its tier-``n`` HyperNode.
HYPERNODE_LABEL = "topology.gangsched.io/volcano-hypernode-tier-{tier}"


def hypernode_label(tier: int) -> str:
    return HYPERNODE_LABEL.format(tier=tier)


def node_domain_labels(nodes: Iterable) -> dict[str, dict[str, str]]:
    """Each node's labels plus the synthetic HyperNode labels, by node name.

    ``nodes`` are ``Node`` rows (or anything with ``name`` and ``labels``).
    """
    return {node.name: dict(node.labels or {}) for node in nodes}


def domain_of(labels: Mapping[str, str], level: str) -> str | None:
    """The node's domain at ``level``, None when it has no such label (in no domain)."""
    return labels.get(level)
