"""Which domain of each topology level a node is in, for the snapshot and the pages.

A level is a node-label key, so a node's domain is usually just its label's value. Volcano's
HyperNodes name no label: their tree is turned into synthetic labels here, one per tier
(``hypernode_label(tier)`` = the HyperNode of that tier holding the node), so that the engine,
the Nodes page and the API treat every format alike. This is the one place that mapping lives.

The HyperNode rule, as Volcano reads a tree: a HyperNode holds the nodes its ``Node`` members
select (``exactMatch`` by name, ``regexMatch`` by a pattern found in the name, ``labelMatch`` by
labels) plus every node of the HyperNodes its ``HyperNode`` members select (by name or pattern).
A node held by two HyperNodes of one tier (overlapping patterns) is given the first by name, so
the mapping is the same every cycle. The HyperNodes become one topology, ``volcano-hypernodes``,
whose levels are the tiers' synthetic labels from the highest tier down to tier 1. A node without
``kubernetes.io/hostname`` (a simulated one) is given its name there, as the kubelet would.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: The synthetic label key that carries, per node, the name of its tier-``n`` HyperNode.
HYPERNODE_LABEL = "topology.gangsched.io/volcano-hypernode-tier-{tier}"
#: The node label the kubelet sets to the node's name (Kueue's and KAI's lowest level).
HOSTNAME = "kubernetes.io/hostname"
#: The name of the topology Volcano's HyperNodes make (``hypernode_topology``).
HYPERNODE_TOPOLOGY = "volcano-hypernodes"


#: A node-label key: an optional DNS-subdomain prefix and a name (Kueue's and KAI's CRD pattern).
LABEL_KEY = re.compile(
    r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])"
)


def label_key_valid(key: str) -> bool:
    return len(key) <= 316 and LABEL_KEY.fullmatch(key) is not None


def hypernode_label(tier: int) -> str:
    return HYPERNODE_LABEL.format(tier=tier)


def hypernode_tier(level: str) -> int | None:
    """The tier of a synthetic HyperNode level, None for any other label key."""
    prefix, _, suffix = HYPERNODE_LABEL.partition("{tier}")
    if level.startswith(prefix) and level.endswith(suffix):
        middle = level[len(prefix) : len(level) - len(suffix) if suffix else None]
        if middle.isdigit():
            return int(middle)
    return None


def node_domain_labels(nodes: Iterable, hypernodes: Sequence | None = None) -> dict[str, dict[str, str]]:
    """Each node's labels plus the synthetic HyperNode labels, by node name.

    ``nodes`` are ``Node`` rows (or anything with ``name`` and ``labels``); ``hypernodes`` are
    ``HyperNode`` rows (or anything with ``name``, ``tier``, ``members``); None: read them.
    """
    # Every node has its hostname label on a real cluster (the kubelet sets it); nodes of the
    # simulated cluster may not: they get their name, so a hostname level always has domains.
    labels = {node.name: {HOSTNAME: node.name, **(node.labels or {})} for node in nodes}
    if hypernodes is None:
        from scheduler_core.models import HyperNode

        hypernodes = list(HyperNode.objects.only("name", "tier", "members"))
    for name, tier, held in hypernode_nodes(hypernodes, labels):
        key = hypernode_label(tier)
        for node in held:
            labels[node].setdefault(key, name)
    return labels


def hypernode_levels(hypernodes: Iterable) -> tuple[str, ...]:
    """The synthetic levels of the HyperNodes' tiers, highest (widest) first."""
    return tuple(hypernode_label(tier) for tier in sorted({h.tier for h in hypernodes}, reverse=True))


def hypernode_nodes(
    hypernodes: Iterable, labels: Mapping[str, Mapping[str, str]]
) -> list[tuple[str, int, list[str]]]:
    """(name, tier, node names it holds) per HyperNode, lower tiers first, names in order."""
    ordered = sorted(hypernodes, key=lambda h: (h.tier, h.name))
    names = [h.name for h in ordered]
    held: dict[str, set[str]] = {}
    out = []
    for hypernode in ordered:
        nodes: set[str] = set()
        for member in hypernode.members or []:
            selector = member.get("selector") or {}
            if member.get("type") == "HyperNode":
                exact = (selector.get("exactMatch") or {}).get("name")
                children = [exact] if exact else selected_names(selector, names)
                for child in children:
                    nodes |= held.get(child, set())  # a child of a lower tier is already resolved
            elif selector.get("exactMatch"):  # by far the commonest: a lookup, not a scan
                wanted = selector["exactMatch"].get("name")
                nodes |= {wanted} if wanted in labels else set()
            else:
                nodes |= {n for n, node_labels in labels.items() if node_selected(selector, n, node_labels)}
        held[hypernode.name] = nodes
        out.append((hypernode.name, hypernode.tier, sorted(nodes)))
    return out


def selected_names(selector: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    """The names an ``exactMatch`` or ``regexMatch`` selector picks out of ``names``."""
    if selector.get("exactMatch"):
        wanted = selector["exactMatch"].get("name")
        return [n for n in names if n == wanted]
    if selector.get("regexMatch"):
        pattern = re.compile(selector["regexMatch"].get("pattern", ""))
        return [n for n in names if pattern.search(n)]  # Go's regexp.MatchString: a match anywhere
    return []


def node_selected(selector: Mapping[str, Any], name: str, labels: Mapping[str, str]) -> bool:
    if selector.get("labelMatch"):
        return labels_match(selector["labelMatch"], labels)
    return bool(selected_names(selector, [name]))


def labels_match(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A Kubernetes LabelSelector (matchLabels and matchExpressions) against a node's labels."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def domain_of(labels: Mapping[str, str], level: str) -> str | None:
    """The node's domain at ``level``, None when it has no such label (in no domain)."""
    return labels.get(level)
