"""Bin-packing's shortcuts decide as the plain computation does.

``whole_fit`` finds the node bin-packing's ``choose`` gives every copy to, by comparisons. The
engine asks ``whole_fit`` before counting copies per node (``session.py``); when it answers,
the count and ranking over every node are skipped, so its answer must be ``choose``'s own: the
same node, or -1 exactly when ``choose`` spreads the copies over several nodes (or none).
When no node takes every copy, ``choose`` ranks only the nodes that can be among the first
``need``; its choice must be the one a full sort of every candidate gives.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.engine.model import Placement
from scheduler_core.engine.placement import choose, fit_counts, whole_fit


@st.composite
def clusters(draw):
    nodes = draw(st.integers(1, 40))
    kinds = np.array(draw(st.lists(st.tuples(*[st.integers(0, 12)] * 3), min_size=1, max_size=3)), np.int64)
    kind = np.array(draw(st.lists(st.integers(0, len(kinds) - 1), min_size=nodes, max_size=nodes)))
    alloc = kinds[kind]
    used = np.array([[draw(st.integers(0, int(cap))) for cap in row] for row in alloc], np.int64).reshape(
        alloc.shape
    )
    request = np.array(draw(st.tuples(*[st.integers(0, 4)] * 3)), np.int64)
    mask = np.array(draw(st.lists(st.booleans(), min_size=nodes, max_size=nodes)))
    need = draw(st.integers(1, 12))
    subset = draw(st.booleans())
    return alloc, alloc - used, request, mask, need, subset


@settings(max_examples=400, deadline=None)
@given(clusters())
def test_whole_fit_is_the_node_choose_gives_every_copy(cluster) -> None:
    alloc, free, request, mask, need, subset = cluster
    scale = np.maximum(alloc.max(axis=0), 1)
    takes = choose(fit_counts(free, request, mask), need, free, alloc, request, Placement.BINPACK, scale)
    nodes = np.flatnonzero(mask) if subset else None  # the engine's candidates are masked nodes
    got = whole_fit(np.asfortranarray(free), alloc, request, need, mask, scale, nodes)
    if got >= 0:
        assert takes[got] == need and takes.sum() == need
    else:
        assert not (takes == need).any() or need == 0
        assert takes.max(initial=0) < need


def test_the_fullest_node_wins_and_the_lowest_index_among_equals() -> None:
    alloc = np.array([[8, 8], [8, 8], [8, 8], [8, 8]], np.int64)
    free = np.array([[6, 8], [3, 8], [3, 8], [1, 8]], np.int64)
    request = np.array([1, 0], np.int64)
    mask = np.ones(4, bool)
    scale = np.array([8, 8])
    # Node 3 has too little for two copies; nodes 1 and 2 are equally full: node 1.
    assert whole_fit(free, alloc, request, 2, mask, scale) == 1
    mask[1] = False
    assert whole_fit(free, alloc, request, 2, mask, scale) == 2
    assert whole_fit(free, alloc, request, 7, mask, scale) == -1


def full_sort_choice(counts, need, free, alloc, request, scale) -> np.ndarray:
    """Bin-packing over several nodes, every candidate ranked: (most copies, fullest, index)."""
    takes = np.zeros(counts.shape[0], np.int64)
    dominant = int(np.argmax(request / scale))
    candidates = np.flatnonzero(counts)
    capped = np.minimum(counts[candidates], need)
    room = free[candidates, dominant] - capped * request[dominant]
    left = room / np.maximum(alloc[candidates, dominant], 1)
    given = 0
    for position in np.lexsort((candidates, left, -capped)):
        node = candidates[position]
        takes[node] = min(capped[position], need - given)
        given += takes[node]
        if given == need:
            break
    return takes


@settings(max_examples=400, deadline=None)
@given(clusters())
def test_copies_over_several_nodes_go_where_a_full_sort_puts_them(cluster) -> None:
    alloc, free, request, mask, need, _subset = cluster
    scale = np.maximum(alloc.max(axis=0), 1)
    counts = fit_counts(free, request, mask)
    if (counts >= need).any():
        return  # one node takes every copy: the case above
    takes = choose(counts, need, free, alloc, request, Placement.BINPACK, scale)
    assert (takes == full_sort_choice(counts, need, free, alloc, request, scale)).all()


def test_ties_in_copies_and_fullness_go_to_the_lowest_index() -> None:
    alloc = np.full((6, 1), 10, np.int64)
    free = np.array([[3], [5], [3], [5], [3], [5]], np.int64)
    request = np.array([1], np.int64)
    counts = fit_counts(free, request)
    takes = choose(counts, 7, free, alloc, request, Placement.BINPACK, np.array([10]))
    assert takes.tolist() == [0, 5, 0, 2, 0, 0]


@st.composite
def crowded(draw):
    """Many nodes of few capacities and a few levels of use: many nodes take the same number of
    copies, and as many are as full, so the nodes at the last level taken are ranked among
    themselves."""
    nodes = draw(st.integers(2, 300))
    capacity = draw(st.sampled_from([8, 16, 32]))
    alloc = np.array([[capacity, 4 * capacity]] * nodes, np.int64)
    levels = draw(st.lists(st.integers(0, capacity), min_size=1, max_size=4))
    used = np.array([[draw(st.sampled_from(levels)), 0] for _ in range(nodes)], np.int64)
    request = np.array([draw(st.integers(1, 4)), draw(st.integers(0, 3))], np.int64)
    need = draw(st.integers(1, 3 * nodes))
    return alloc, alloc - used, request, need


@settings(max_examples=300, deadline=None)
@given(crowded())
def test_nodes_that_tie_at_the_last_level_taken_go_as_a_full_sort_puts_them(cluster) -> None:
    alloc, free, request, need = cluster
    scale = np.maximum(alloc.max(axis=0), 1)
    counts = fit_counts(free, request)
    if (counts >= need).any():
        return
    takes = choose(counts, need, free, alloc, request, Placement.BINPACK, scale)
    assert takes.tolist() == full_sort_choice(counts, need, free, alloc, request, scale).tolist()
