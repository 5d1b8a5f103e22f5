"""``whole_fit`` finds the node bin-packing's ``choose`` gives every copy to, by comparisons.

The engine asks ``whole_fit`` before counting copies per node (``session.py``); when it answers,
the count and ranking over every node are skipped, so its answer must be ``choose``'s own: the
same node, or -1 exactly when ``choose`` spreads the copies over several nodes (or none).
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
    need = draw(st.integers(1, 6))
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
