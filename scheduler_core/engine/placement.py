"""Placing copies of one pod shape on nodes, by count, vectorised over nodes.

Members of a gang mostly come in a few identical shapes (a YuniKorn task group, a Job's
template). Instead of trying each pod on each node, the engine asks once per shape how many
copies each node can take, then picks nodes by the gang's placement policy.
"""

from __future__ import annotations

import numpy as np

from .model import Placement

_BIG = np.int64(1) << np.int64(40)


def fit_counts(
    free: np.ndarray, request: np.ndarray, mask: np.ndarray | None = None, totals: list | None = None
) -> np.ndarray:
    """How many copies of ``request`` each node can take (0 where the mask rules it out).

    Column by column, each requested resource's copies folded into a running minimum: half the
    time of dividing the gathered columns at once on a large cluster (no 2-D copy). ``totals``
    (with a mask) collects (copies on the masked nodes, column) per requested column, for
    ``fit_and_limit``; placement needs none, and summing over the masked nodes would double
    its time."""
    counts = None
    for column in np.flatnonzero(request > 0).tolist():
        copies = np.maximum(free[:, column], 0) // request[column]
        if totals is not None and mask is not None:
            totals.append((int(copies[mask].sum()), column))
        counts = copies if counts is None else np.minimum(counts, copies, out=counts)
    if counts is None:
        counts = np.full(free.shape[0], _BIG, dtype=np.int64)
    if mask is not None:
        counts[~mask] = 0
    return counts


def fit_and_limit(
    free: np.ndarray, request: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, int | None]:
    """``fit_counts``, and the requested column that alone allows the fewest copies on the
    masked nodes in all (the first among equals; None if nothing is requested or no node is
    masked in): an explanation's limiting resource, from the same divisions."""
    totals: list[tuple[int, int]] = []
    counts = fit_counts(free, request, mask, totals)
    limiting = min(totals)[1] if totals and mask is not None and mask.any() else None
    return counts, limiting


def choose(
    counts: np.ndarray,
    need: int,
    free: np.ndarray,
    alloc: np.ndarray,
    request: np.ndarray,
    placement: Placement,
    scale: np.ndarray | None = None,
) -> np.ndarray:
    """How many copies to put on each node: at most ``need`` in all, as many as fit.

    Bin-packing takes the nodes that can hold the most of what is left first (fewer nodes: a
    node that takes the whole gang wins), and among equals the fullest (the least free after
    placing, relative to capacity), so big holes stay whole for the next big gang. Spread fills
    level by level: one per node, then two, ... ``scale`` is the largest capacity per resource
    (``ClusterState.scale``), passed in so that it is not recomputed for every shape.
    """
    takes = np.zeros(counts.shape[0], dtype=np.int64)
    if need <= 0:
        return takes
    if placement == Placement.SPREAD:
        capped = np.minimum(counts, need)
        candidates = np.flatnonzero(capped > 0)
        return _spread(capped, need, free, takes, candidates) if candidates.size else takes
    # Fullness is judged on the request's dominant resource (the largest share of the biggest
    # node): one column instead of all of them keeps this O(nodes) with a small constant. Only
    # the nodes that can take a copy are looked at past the first comparison.
    if scale is None:
        scale = np.maximum(alloc.max(axis=0), 1)
    dominant = int(np.argmax(request / scale))
    whole = np.flatnonzero(counts >= need)
    if whole.size:
        # Some node takes the whole gang: the fullest of those (best fit), no sort needed.
        left = (free[whole, dominant] - need * request[dominant]) / np.maximum(alloc[whole, dominant], 1)
        takes[whole[int(np.argmin(left))]] = need
        return takes
    # ``> 0`` first: flatnonzero of a bool array is fifty times faster than of an int one.
    candidates = np.flatnonzero(counts > 0)
    if candidates.size == 0:
        return takes
    capped = counts[candidates]  # each below need: no node takes the whole gang
    room = free[candidates, dominant] - capped * request[dominant]
    left = room / np.maximum(alloc[candidates, dominant], 1)
    if candidates.size > need:
        # At most ``need`` nodes are taken (each takes a copy or more): only the ``need`` first
        # are ranked, found in linear time, with every node tied with the last of them.
        candidates, capped, left = _first(candidates, capped, left, need)
    ranked = np.lexsort((candidates, left, -capped))
    order = candidates[ranked]
    cumulative = np.cumsum(capped[ranked])
    last = int(np.searchsorted(cumulative, need))  # first position where the total reaches need
    chosen = order[: last + 1]
    takes[chosen] = counts[chosen]
    excess = int(cumulative[min(last, len(order) - 1)]) - need
    if excess > 0:
        takes[chosen[-1]] -= excess
    return takes


def _first(
    candidates: np.ndarray, capped: np.ndarray, left: np.ndarray, need: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The candidates that can be among the first ``need`` by (most copies, fullest, index).

    ``left`` scaled into (-1/2, 1/2) and less ``capped`` orders the nodes as copies then fullness
    do, and a partition on it finds the ``need`` first. Rounding can only make two keys equal,
    never swap them, so every node whose key equals the last one kept is kept too; the exact
    ranking with the index is then done on these few."""
    key = left * (0.5 / (float(np.abs(left).max()) + 1.0)) - capped
    last = np.partition(key, need - 1)[need - 1]
    keep = np.flatnonzero(key <= last)
    return candidates[keep], capped[keep], left[keep]


def _spread(
    capped: np.ndarray, need: int, free: np.ndarray, takes: np.ndarray, candidates: np.ndarray
) -> np.ndarray:
    total = int(capped.sum())
    if total <= need:
        takes[:] = capped
        return takes
    # The lowest level L at which min(capped, L) summed reaches need: everybody gets up to L-1,
    # and the remainder goes one each to the nodes with most room, in a stable order.
    low, high = 1, int(capped.max())
    while low < high:
        mid = (low + high) // 2
        if int(np.minimum(capped, mid).sum()) >= need:
            high = mid
        else:
            low = mid + 1
    level = low
    takes[:] = np.minimum(capped, level - 1)
    remainder = need - int(takes.sum())
    if remainder > 0:
        eligible = candidates[capped[candidates] >= level]
        room = free[eligible].sum(axis=1)
        order = eligible[np.lexsort((eligible, -room))]
        takes[order[:remainder]] += 1
    return takes


def whole_fit(
    free: np.ndarray,
    alloc: np.ndarray,
    request: np.ndarray,
    need: int,
    mask: np.ndarray,
    scale: np.ndarray,
    nodes: np.ndarray | None = None,
) -> int:
    """The node ``choose`` gives all ``need`` copies to under bin-packing, or -1 when no node
    takes them all: among the masked nodes (of ``nodes`` if given, else all) with room for
    every copy, the fullest after placing (on the dominant resource, relative to capacity), the
    lowest index among equals.

    The same answer as ``fit_counts`` then ``choose``, found with comparisons alone: a node
    takes ``need`` copies exactly when each requested resource has ``need`` times the request
    free, so no division per node is needed to know it (integer division does not vectorise;
    on 65,000 nodes it cost ten times the comparisons), and most gangs fit on one node."""
    ok = mask.copy() if nodes is None else mask[nodes]
    for column in np.flatnonzero(request > 0):
        room = free[:, column] if nodes is None else free[nodes, column]
        ok &= room >= need * request[column]
    whole = np.flatnonzero(ok)
    if not whole.size:
        return -1
    if nodes is not None:
        whole = nodes[whole]
    dominant = int(np.argmax(request / scale))
    left = (free[whole, dominant] - need * request[dominant]) / np.maximum(alloc[whole, dominant], 1)
    return int(whole[int(np.argmin(left))])
