"""Words for what a gang's queue holds it back by, as an operator reads them.

Queues are shown by path ("ml/nlp"), amounts as Kubernetes writes them (``format_quantity``);
every message comes with details a page can render (queue, resource, used, max, ...).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import diagnosis
from .decisions import Explanation, Reason
from .ledger import Ledger
from .quantity import format_quantity
from .queue import Unit
from .session import shapes


def gate(ledger: Ledger, session, unit: Unit) -> Explanation | None:
    """Why no gang of ``unit`` may be placed at all: a queue unknown, not a leaf, or closed."""
    names = [session.gangs[key].queue for key in unit.gangs] if unit.is_gang else [unit.pods[0].queue]
    if not unit.is_gang and unit.pods[0].gang is not None and unit.pods[0].gang in session.gangs:
        names = [session.gangs[unit.pods[0].gang].queue]
    tree = ledger.tree
    for name in names:
        q = ledger.queue_named(name)
        if q < 0:
            return Explanation("", Reason.QUEUE_UNKNOWN, f"no queue named {name}", {"queue": name})
        if not ledger.leaf[q]:
            return Explanation(
                "",
                Reason.QUEUE_UNKNOWN,
                f"queue {tree.names[q]} has child queues; work goes to a leaf queue",
                {"queue": tree.names[q]},
            )
        if not tree.queues[q].open:
            return Explanation(
                "", Reason.QUEUE_CLOSED, f"queue {tree.names[q]} closed", {"queue": tree.names[q]}
            )
    return None


def blocked(ledger: Ledger, q: int, request: np.ndarray) -> Explanation | None:
    """Why queue ``q`` admits no more copies of ``request``: a max on its path, or borrowing;
    None when only the cluster's free capacity held it back (the nodes' business, not the queue's)."""
    state = ledger.state
    room = ledger.headroom(q)
    positive = np.flatnonzero(request > 0)
    column = int(positive[np.argmin(room[positive] / request[positive])]) if positive.size else 0
    resource = state.resources[column]
    kind, p = ledger.binding(q, column)
    tree = ledger.tree
    if kind == "max":
        used = int(ledger.usage[p, column])
        limit = int(ledger.max[p, column])
        return Explanation(
            "",
            Reason.QUEUE_MAX,
            f"queue {tree.names[p]} at its max: {resource} "
            f"{format_quantity(resource, used)}/{format_quantity(resource, limit)}",
            {"queue": tree.names[p], "resource": resource, "used": used, "max": limit},
        )
    if kind == "borrow":
        parent = tree.parent[p]
        siblings = tree.children[parent] if parent >= 0 else tree.top
        keepers = [s for s in siblings if s != p and ledger.reserve[s, column] > 0.5]
        kept = int(sum(ledger.reserve[s, column] for s in keepers))
        used = int(ledger.usage[p, column])
        guarantee = int(ledger.guarantee[p, column])
        owners = ", ".join(tree.names[s] for s in keepers) or "other queues"
        return Explanation(
            "",
            Reason.QUEUE_BORROW,
            f"queue {tree.names[p]} uses {format_quantity(resource, used)} {resource} of its guarantee "
            f"{format_quantity(resource, guarantee)} and cannot borrow more: "
            f"{format_quantity(resource, kept)} are kept for the guarantees of {owners}",
            {
                "queue": tree.names[p],
                "resource": resource,
                "used": used,
                "guarantee": guarantee,
                "kept_for_others": kept,
                "kept_for": [tree.names[s] for s in keepers],
            },
        )
    return None


def over_share(ledger: Ledger, v: int, request: np.ndarray, basis: str = "fair share") -> tuple[str, int]:
    """The resource the unit needs on which victim queue ``v`` is furthest over its fair share
    (``basis`` "fair share") or its guarantee ("guarantee")."""
    state = ledger.state
    excess = ledger.usage[v] - (ledger.guarantee[v] if basis == "guarantee" else ledger.share[v])
    wanted = (request > 0) & (excess > 0)
    if not wanted.any():
        wanted = excess > 0
    wanted[state.column["pods"]] = False
    if not wanted.any():
        return "", 0
    scaled = np.where(wanted, excess / np.maximum(ledger.capacity, 1.0), -np.inf)
    column = int(np.argmax(scaled))
    return state.resources[column], int(excess[column])


def reclaim_text(
    ledger: Ledger, victims: list[int], request: np.ndarray, basis: str = "fair share"
) -> tuple[str, list[dict]]:
    """'ml/vision (over its fair share by nvidia.com/gpu 8)', for each victim queue; ``basis``
    "guarantee" says by how much it is over its guarantee instead."""
    parts, details = [], []
    for v in victims:
        resource, amount = over_share(ledger, v, request, basis)
        name = ledger.tree.names[v]
        if resource:
            parts.append(f"{name} (over its {basis} by {resource} {format_quantity(resource, amount)})")
        else:
            parts.append(f"{name} (over its {basis})")
        details.append({"queue": name, "resource": resource, "over_by": amount})
    return ", ".join(parts), details


def on_nodes(session, why: Explanation) -> Explanation:
    """``why`` (a queue holds the gang back) with the per-shape node counts of ``diagnosis.py``:
    the nodes that have room for a member are counted under the queue's quota, not as free."""
    pods = session.waiting(why.gang)
    if not pods:
        return why
    available = session.state.free_all()
    found = [diagnosis.shape(session, available, request, group) for request, group in shapes(session, pods)]
    queue = why.details.get("queue", "")
    return dataclasses.replace(
        why, details={**why.details, "shapes": diagnosis.reassign(found, diagnosis.QUEUE, queue)}
    )
