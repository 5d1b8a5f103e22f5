"""The free index answers ``placement.whole_fit``'s question node for node, as nodes change.

``FreeIndex`` keeps each kind's nodes sorted by free capacity of a resource and judges the nodes
changed since on their own (``free_index.py``). Here random clusters of a few node kinds take and
give back capacity between queries, with the orders rebuilt after as few as 3 changed nodes, and
every answer must be the plain scan's.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.engine import free_index
from scheduler_core.engine.free_index import FreeIndex, node_kinds
from scheduler_core.engine.placement import whole_fit


@st.composite
def histories(draw):
    kinds = draw(st.lists(st.tuples(*[st.integers(1, 10)] * 3), min_size=1, max_size=3, unique=True))
    nodes = draw(st.integers(1, 30))
    alloc = np.array([kinds[draw(st.integers(0, len(kinds) - 1))] for _ in range(nodes)], np.int64)
    steps = draw(
        st.lists(
            st.tuples(
                st.lists(st.integers(0, nodes - 1), max_size=4),  # nodes whose usage changes
                st.integers(0, 2**16),  # a seed for the new usage
                st.tuples(*[st.integers(0, 3)] * 3),  # the request asked next
                st.integers(1, 4),  # copies
                st.integers(0, 2**16),  # a seed for the mask
            ),
            min_size=1,
            max_size=12,
        )
    )
    rebuild_after = draw(st.sampled_from([3, 512]))
    return alloc, steps, rebuild_after


@settings(max_examples=200, deadline=None)
@given(histories())
def test_the_index_finds_the_node_a_full_scan_finds(history) -> None:
    alloc, steps, rebuild_after = history
    free = np.asfortranarray(alloc.copy())
    _kind, _rows, members, _rank = node_kinds(alloc)
    scale = np.maximum(alloc.max(axis=0), 1)
    with mock.patch.object(free_index, "REBUILD_AFTER", rebuild_after):
        index = FreeIndex(members, len(alloc))
        for changed, seed, request, need, mask_seed in steps:
            rng = np.random.default_rng(seed)
            nodes = np.array(sorted(set(changed)), np.int64)
            for node in nodes.tolist():
                free[node] = rng.integers(0, alloc[node] + 1)
            if nodes.size:
                index.changed(nodes)
            mask = np.random.default_rng(mask_seed).random(len(alloc)) < 0.7
            request = np.array(request, np.int64)
            admitted = [bool(mask[kind_nodes].any()) for kind_nodes in members]
            got = index.whole(free, alloc, request, need, mask, scale, admitted)
            assert got == whole_fit(free, alloc, request, need, mask, scale)


def test_equal_nodes_go_to_the_lowest_index_even_after_a_change() -> None:
    alloc = np.full((4, 1), 8, np.int64)
    free = np.asfortranarray(np.array([[5], [5], [2], [5]], np.int64))
    _kind, _rows, members, _rank = node_kinds(alloc)
    index = FreeIndex(members, 4)
    scale = np.array([8])
    everywhere = np.ones(4, bool)
    assert index.whole(free, alloc, np.array([1]), 3, everywhere, scale, [True]) == 0
    free[0] = 8  # node 0 emptied: nodes 1 and 3 are now the fullest with room for 3
    index.changed(np.array([0]))
    assert index.whole(free, alloc, np.array([1]), 3, everywhere, scale, [True]) == 1
