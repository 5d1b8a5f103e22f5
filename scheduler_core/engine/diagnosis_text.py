"""The words of ``diagnosis.py``'s reasons, as kube-scheduler writes them: apart from the
counting (numpy) so that the readers of a stored explanation (``reads/why.py``, ``manage.py
describe``) word it without loading the engine's arrays."""

from __future__ import annotations

from collections.abc import Mapping

#: The reasons a filter rules a node out, in the order nodes are attributed to them.
FILTER_REASONS = ("NotReady", "Unschedulable", "UntoleratedTaint", "NodeSelector", "NodeAffinity")
#: Resources ruled nodes out: their free capacity (or, behind the head of the queue, what it
#: leaves) cannot take one member.
INSUFFICIENT = "Insufficient"
#: Nodes with room for members, but none in a domain of the required level that holds the gang.
TOPOLOGY = "TopologyDomain"
#: Nodes with room for members, but every domain of the level is held by another exclusive gang.
EXCLUSIVE = "ExclusiveDomain"
#: Nodes with room for members, which the gang's queue may not use (its max, or borrowing).
QUEUE = "QueueQuota"


def reason_text(row: Mapping) -> str:
    """One reason as kube-scheduler words it, with its count: '4 node(s) had untolerated taint
    {nvidia.com/gpu: present}', '12 Insufficient nvidia.com/gpu'."""
    reason, detail, count = row["reason"], row.get("detail", ""), row["count"]
    if reason == "UntoleratedTaint":
        key, _, rest = detail.partition("=")
        value = rest.rpartition(":")[0]
        text = f"node(s) had untolerated taint {{{key}: {value}}}"
    elif reason == INSUFFICIENT:
        text = "Too many pods" if detail == "pods" else f"Insufficient {detail}"
    else:
        text = _TEXTS.get(reason, reason).format(detail=detail)
    return f"{count} {text}"


_TEXTS = {
    "NotReady": "node(s) were not ready",
    "Unschedulable": "node(s) were unschedulable",
    "NodeSelector": "node(s) didn't match the node selector",
    "NodeAffinity": "node(s) didn't match the node affinity",
    TOPOLOGY: "node(s) had room, but not in a {detail} that holds the whole gang",
    EXCLUSIVE: "node(s) had room, but in a {detail} another exclusive gang holds",
    QUEUE: "node(s) had room the queue may not use",
}


def shape_text(shape_: Mapping) -> str:
    """'0/16 nodes are available: 4 node(s) had untolerated taint {...}, 12 Insufficient ...'."""
    text = f"{shape_['available']}/{shape_['nodes']} nodes are available"
    if shape_["reasons"]:
        text += ": " + ", ".join(reason_text(row) for row in shape_["reasons"])
    return text
