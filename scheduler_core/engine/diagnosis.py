"""Why nodes cannot take a gang's members: per shape of member, each reason with its node count.

kube-scheduler answers an unschedulable pod with "0/16 nodes are available: 4 node(s) had
untolerated taint {nvidia.com/gpu: present}, 12 Insufficient nvidia.com/gpu": for every node,
the filter that rejected it, counted by reason (``FitError.Error()`` over
``Diagnosis.NodeToStatusMap``). The same here, for each shape of member (members with the same
requests, node selector, tolerations and affinity), with two differences a gang needs:

- each node is counted once, under the first reason that rules it out, in kube-scheduler's filter
  order (not ready, unschedulable, taints, node selector, affinity, then resources, in the order
  NodeResourcesFit checks them: pods, cpu, memory, ephemeral-storage, then the others by name),
  so the counts of one shape and its ``available`` nodes add up to the cluster's node count;
- a node that can take at least one member is ``available``: a gang may still be short when
  the available nodes together cannot take enough members (the shortfall, ``explain.py``).

A shape is a plain dict, stored with the explanation and rendered by the pages, the API and
``manage.py describe``: ``{"count", "requests", "nodes", "available", "fit_if_empty",
"reasons": [{"reason", "count", "detail"}]}``. ``fit_if_empty`` counts the nodes that pass
the filters and could take one member if nothing else ran there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

import numpy as np

# The words live apart (diagnosis_text.py, no numpy); the engine's modules find them here too.
from .diagnosis_text import (  # noqa: F401
    EXCLUSIVE,
    FILTER_REASONS,
    INSUFFICIENT,
    QUEUE,
    TOPOLOGY,
    reason_text,
    shape_text,
)
from .filters import constraint_key
from .model import Pod
from .placement import fit_counts

#: NodeResourcesFit's order of the resources it checks first; the others follow by name.
_RESOURCE_ORDER = ("pods", "cpu", "memory", "ephemeral-storage")
#: Shapes whose ``fit_if_empty`` the node filter keeps at most.
_EMPTY_FITS_KEPT = 20_000


def shape(session, available: np.ndarray, request: np.ndarray, pods: list[Pod], fit=None) -> dict:
    """The diagnosis of one shape (module docstring) on ``available`` capacity (N x R).
    ``fit``: the copies each node passing the filters can take, if the caller has them."""
    state = session.state
    rows, remaining = session.filter.rejections(pods[0])
    if fit is None:
        fit = fit_counts(available, request, remaining)
    short = remaining & (fit == 0)
    for column in _resource_columns(state.resources, request):
        lacking = short & (available[:, column] < request[column])
        count = int(np.count_nonzero(lacking))
        if count:
            rows.append({"reason": INSUFFICIENT, "count": count, "detail": state.resources[column]})
            short &= ~lacking
    return {
        "count": len(pods),
        "requests": state.describe(request),
        "nodes": len(session.filter),
        "available": int(np.count_nonzero(fit)),
        "fit_if_empty": _fit_if_empty(session, request, pods[0], remaining),
        "reasons": rows,
    }


def _fit_if_empty(session, request: np.ndarray, pod: Pod, remaining: np.ndarray) -> int:
    """Nodes passing the filters that could take one copy empty: once per shape while the
    nodes are the same (the cache is the node filter's, ``session.empty_fits``)."""
    key = (session.state.resources, request.tobytes(), constraint_key(pod))
    found = session.empty_fits.get(key)
    if found is None:
        if len(session.empty_fits) >= _EMPTY_FITS_KEPT:
            session.empty_fits.clear()  # a worker up for months meets many shapes: start again
        found = session.empty_fits[key] = int(
            np.count_nonzero(fit_counts(session.state.alloc, request, remaining))
        )
    return found


def _resource_columns(resources: tuple[str, ...], request: np.ndarray) -> tuple[int, ...]:
    return _columns_in_order(resources, tuple(np.flatnonzero(request > 0).tolist()))


@lru_cache(maxsize=1024)
def _columns_in_order(resources: tuple[str, ...], wanted: tuple[int, ...]) -> tuple[int, ...]:
    """Remembered per set of requested columns (few)."""
    rank = {name: i for i, name in enumerate(_RESOURCE_ORDER)}
    return tuple(sorted(wanted, key=lambda i: (rank.get(resources[i], len(rank)), resources[i])))


def filtered(shape_: Mapping) -> int:
    """How many nodes a filter (not resources, topology or quota) ruled out for the shape."""
    return sum(row["count"] for row in shape_["reasons"] if row["reason"] in FILTER_REASONS)


def blocked_by_filters(shape_: Mapping) -> bool:
    """No node that passes the filters could take a member even empty, and filters ruled some
    out: the filters, not the cluster's load, keep the shape off every node."""
    return shape_["fit_if_empty"] == 0 and filtered(shape_) > 0


def reassign(shapes: Iterable[Mapping], reason: str, detail: str) -> list[dict]:
    """The shapes with their available nodes ruled out by ``reason`` (topology, queue quota):
    they had room, but the gang may not use it there."""
    out = []
    for item in shapes:
        rows = list(item.get("reasons", ()))
        if item.get("available"):
            rows.append({"reason": reason, "count": item["available"], "detail": detail})
        out.append({**item, "reasons": rows, "available": 0})
    return out
