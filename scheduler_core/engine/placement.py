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
    # Most copies first: every node above the ``level`` of copies at which the total reaches
    # ``need`` is taken whole, and only the nodes at that level are ranked (fullest, then
    # lowest index) for the rest: a count of nodes per number of copies, not a sort of them all.
    level, given = _level(capped, need)
    if level == 0:  # all of them together take fewer than need
        takes[candidates] = capped
        return takes
    above = capped > level
    takes[candidates[above]] = capped[above]
    tied = candidates[capped == level]
    wanted = -(-(need - given) // level)  # nodes at the level that the rest takes
    left = (free[tied, dominant] - level * request[dominant]) / np.maximum(alloc[tied, dominant], 1)
    if tied.size > wanted:
        # The ``wanted`` fullest, found in linear time, with every node as full as the last.
        keep = np.flatnonzero(left <= np.partition(left, wanted - 1)[wanted - 1])
        tied, left = tied[keep], left[keep]
    chosen = tied[np.lexsort((tied, left))][:wanted]
    takes[chosen] = level
    excess = wanted * level - (need - given)
    if excess > 0:
        takes[chosen[-1]] -= excess
    return takes


def _level(capped: np.ndarray, need: int) -> tuple[int, int]:
    """The most copies a node may take, ``level``, such that the nodes taking at least that many
    take ``need`` in all, and what the nodes above it take (less than ``need``); (0, total) when
    all of them together take less than ``need``."""
    copies = np.bincount(capped)
    copies *= np.arange(copies.size)
    at_least = np.cumsum(copies[::-1])[::-1]  # at_least[v]: taken by the nodes taking v or more
    if at_least[1] < need:
        return 0, int(at_least[1])
    level = int(np.flatnonzero(at_least >= need)[-1])
    return level, int(at_least[level + 1]) if level + 1 < at_least.size else 0


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
