"""Fair share, top-down (``engine/fairshare.py``): worked examples with numbers.

Single resource reduces to weighted water-filling; several resources use weighted dominant-
resource progressive filling; guarantees come first and are scaled down when over-promised;
max caps; the hierarchy divides each queue's share among its children.
"""

from __future__ import annotations

import numpy as np
import pytest

from scheduler_core.engine.fairshare import (
    amounts,
    build_tree,
    divide,
    fair_shares,
    guarantees,
    progressive_fill,
    ratios,
    reserves,
)
from scheduler_core.engine.model import Queue

INF = float(1 << 60)


def level(pool, wanted, guarantee=None, weights=None):
    wanted = np.array(wanted, dtype=float)
    if wanted.ndim == 1:
        wanted = wanted[:, None]
    guarantee = (
        np.zeros_like(wanted) if guarantee is None else np.array(guarantee, dtype=float).reshape(wanted.shape)
    )
    weights = np.ones(wanted.shape[0]) if weights is None else np.array(weights, dtype=float)
    return divide(np.atleast_1d(np.array(pool, dtype=float)), wanted, guarantee, weights)


def test_one_resource_is_water_filling():
    """10 GPUs, demands 2, 8, 8: the small one is met, the rest split evenly (2, 4, 4)."""
    assert level(10, [2, 8, 8]).ravel().tolist() == pytest.approx([2, 4, 4])


def test_weights_divide_what_is_left():
    """Weights 3 and 1 over 10 GPUs, both wanting 8: 7.5 and 2.5."""
    assert level(10, [8, 8], weights=[3, 1]).ravel().tolist() == pytest.approx([7.5, 2.5])


def test_guarantees_first_then_weights():
    """Guarantees 6 and 0, both wanting 10 of 10: 6 + half of 4 = 8, and 2."""
    assert level(10, [10, 10], guarantee=[6, 0]).ravel().tolist() == pytest.approx([8, 2])


def test_guarantee_counts_only_up_to_demand():
    """A guarantee of 8 with demand 3 takes 3; the other queue gets the remaining 7."""
    assert level(10, [3, 10], guarantee=[8, 0]).ravel().tolist() == pytest.approx([3, 7])


def test_over_promised_guarantees_are_scaled_down():
    """Guarantees 8 and 4 on 10 GPUs, both demanding more: scaled by 10/12 to 6.67 and 3.33."""
    assert level(10, [20, 20], guarantee=[8, 4]).ravel().tolist() == pytest.approx([20 / 3, 10 / 3])


def test_drf_two_resources():
    """The DRF paper's example: 9 CPUs and 18 GB; A's tasks need <1, 4>, B's <3, 1>: A gets
    <3, 12> (3 tasks), B <6, 2> (2 tasks); both dominant shares are 2/3."""
    got = progressive_fill(
        np.array([9.0, 18.0]), np.array([[100.0, 400.0], [300.0, 100.0]]), np.ones(2), np.array([9.0, 18.0])
    )
    assert got.tolist() == [pytest.approx([3, 12]), pytest.approx([6, 2])]


def test_drf_with_weights():
    """Weight 2 for A: A's dominant share grows twice as fast (A 4/6 of memory share vs B's
    CPU share 1/3 of it): the level stops when CPU runs out."""
    got = progressive_fill(
        np.array([9.0, 18.0]),
        np.array([[100.0, 400.0], [300.0, 100.0]]),
        np.array([2.0, 1.0]),
        np.array([9.0, 18.0]),
    )
    a, b = got
    assert a[1] / 18 == pytest.approx(2 * b[0] / 9)  # A's dominant share is twice B's
    assert a[0] + b[0] == pytest.approx(9) or a[1] + b[1] == pytest.approx(18)


def tree_of(*queues):
    return build_tree(queues)


def shares(tree, capacity, demand, guarantee=None, maximum=None):
    q = tree.size
    demand = np.array(demand, dtype=float).reshape(q, -1)
    guarantee = (
        np.zeros_like(demand) if guarantee is None else np.array(guarantee, dtype=float).reshape(q, -1)
    )
    maximum = np.full_like(demand, INF) if maximum is None else np.array(maximum, dtype=float).reshape(q, -1)
    return fair_shares(tree, np.atleast_1d(np.array(capacity, dtype=float)), demand, guarantee, maximum)


def test_hierarchy_divides_each_share_among_children():
    """12 GPUs; ml (weight 2) = nlp + vision, research (weight 1); everyone wants 20 (demand of
    ml is its children's 40): ml 8, research 4; nlp and vision 4 each."""
    tree = tree_of(
        Queue("ml", weight=2), Queue("nlp", "ml"), Queue("vision", "ml"), Queue("research"), Queue("default")
    )
    got = shares(tree, 12, [40, 20, 20, 20, 0]).ravel().tolist()
    assert got == pytest.approx([8, 4, 4, 4, 0])
    assert tree.names[tree.index["nlp"]] == "ml/nlp"


def test_max_caps_and_the_rest_goes_to_others():
    """12 GPUs, a and b want 10 each, a's max is 3: a 3, b 9."""
    tree = tree_of(Queue("a"), Queue("b"), Queue("default"))
    got = shares(tree, 12, [10, 10, 0], maximum=[3, INF, INF]).ravel().tolist()
    assert got == pytest.approx([3, 9, 0])


def test_no_demand_no_share():
    tree = tree_of(Queue("a", guarantee={"x": 5}), Queue("b"), Queue("default"))
    got = shares(tree, 10, [0, 4, 0], guarantee=[5, 0, 0]).ravel().tolist()
    assert got == pytest.approx([0, 4, 0])


def test_default_is_implicit_and_cycles_do_not_hang():
    tree = build_tree([Queue("a", parent="b"), Queue("b", parent="a")])
    assert "default" in tree.index
    assert sorted(tree.order) == list(range(tree.size))


def test_reserves_and_lending_limit():
    """Guarantee 10, usage 2: with demand 5 it keeps 3; without demand but lending at most 3,
    it keeps 10 - 2 - 3 = 5."""
    g, u = np.array([[10.0]]), np.array([[2.0]])
    assert reserves(g, u, np.array([[5.0]]), np.array([[INF]])).item() == 3
    assert reserves(g, u, np.array([[2.0]]), np.array([[3.0]])).item() == 5


def test_ratio_is_dominant_usage_over_share():
    got = ratios(
        np.array([[2.0, 1.0], [0.0, 0.0], [1.0, 0.0]]), np.array([[4.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    )
    assert got.tolist() == [1.0, 0.0, float("inf")]


# --- re-expressed from KAI-Scheduler -----------------------------------------------------------


def test_kai_allocates_gpus_proportionally():
    """KAI-Scheduler, pkg/scheduler/plugins/proportion/resource_division/resource_division_test.go,
    "setResourceShare - GPU" / "two queues" / Entry "allocates GPUs proportionally": 8 GPUs,
    two queues deserving 2 and requesting 6, over-quota weights 1 and 3: shares 3 and 5."""
    assert level(8, [6, 6], guarantee=[2, 2], weights=[1, 3]).ravel().tolist() == pytest.approx([3, 5])


def test_kai_does_not_allocate_more_than_allowed():
    """KAI-Scheduler, resource_division_test.go, "two queues" / Entry "doesn't allocate more than
    allowed": 12 GPUs, deserved 2 each, request 6, queue 1 max 5: shares 5 and 6 (1 left)."""
    tree = tree_of(Queue("q1"), Queue("q2"), Queue("default"))
    got = shares(tree, 12, [6, 6, 0], guarantee=[2, 2, 0], maximum=[5, INF, INF]).ravel()
    assert got.tolist() == pytest.approx([5, 6, 0])
    assert 12 - got.sum() == pytest.approx(1)


def test_kai_one_queue_requests_more_than_it_deserves():
    """KAI-Scheduler, resource_division_test.go, "setResourceShare - CPU" / "three queues" /
    "reclaims unneeded resources from an allocated queue to fulfill the unallocated queue":
    10 CPUs, each queue deserves 5, requests 7, 2 and 2: shares 6, 2 and 2."""
    got = level(10, [7, 2, 2], guarantee=[5, 5, 5], weights=[1, 1, 1]).ravel().tolist()
    assert got == pytest.approx([6, 2, 2])


def test_docs_worked_example_with_a_guarantee_inside():
    """docs/queue-scheduling.md: nlp guaranteed 6 inside ml's share of 8: nlp 6 + 1, vision 1; and a
    research wanting only 2 leaves ml 10."""
    tree = tree_of(
        Queue("ml", weight=2), Queue("nlp", "ml"), Queue("vision", "ml"), Queue("research"), Queue("default")
    )
    got = shares(tree, 12, [40, 20, 20, 20, 0], guarantee=[0, 6, 0, 0, 0]).ravel().tolist()
    assert got == pytest.approx([8, 7, 1, 4, 0])
    got = shares(tree, 12, [40, 20, 20, 2, 0]).ravel().tolist()
    assert got == pytest.approx([10, 5, 5, 2, 0])


def test_an_inner_queue_is_guaranteed_at_least_what_its_children_are():
    """A parent that declares less than its children are promised (or nothing, as a YuniKorn
    parent may) is guaranteed their sum, bottom-up; one that declares more keeps its own."""
    tree = build_tree(
        [
            Queue("org"),
            Queue("a", "org", guarantee={"gpu": 10}),
            Queue("b", "org", guarantee={"gpu": 10}),
            Queue("ml", guarantee={"gpu": 30}),
            Queue("c", "ml", guarantee={"gpu": 5}),
            Queue("top"),
            Queue("mid", "top", guarantee={"gpu": 4}),
            Queue("leaf", "mid", guarantee={"gpu": 6}),
        ]
    )
    declared = amounts(tree, ("gpu",), "guarantee", 0.0)
    rolled = dict(zip([q.name for q in tree.queues], guarantees(tree, declared)[:, 0].tolist(), strict=True))
    del rolled["default"]  # the implicit queue of work that names none
    assert rolled == {"org": 20, "a": 10, "b": 10, "ml": 30, "c": 5, "top": 6, "mid": 6, "leaf": 6}


def test_guarantees_hold_across_sibling_parents():
    """kueue #7015: org (a, b: 10 each) and other (c: 10), none declaring a guarantee of its own,
    all wanting the 30 GPUs: each leaf gets its 10. Split by weight at the top instead, c would
    get 15 and a and b 7.5."""
    tree = build_tree(
        [
            Queue("org"),
            Queue("other"),
            Queue("a", "org", guarantee={"gpu": 10}),
            Queue("b", "org", guarantee={"gpu": 10}),
            Queue("c", "other", guarantee={"gpu": 10}),
        ]
    )
    declared = amounts(tree, ("gpu",), "guarantee", 0.0)
    wants = {"org": 60.0, "other": 30.0, "a": 30.0, "b": 30.0, "c": 30.0}
    demand = np.array([[wants.get(q.name, 0.0)] for q in tree.queues])
    limit = np.full((tree.size, 1), INF)
    share = fair_shares(tree, np.array([30.0]), demand, guarantees(tree, declared), limit)
    got = {q.name: share[i, 0] for i, q in enumerate(tree.queues) if q.name in wants}
    assert got == pytest.approx({"org": 20, "other": 10, "a": 10, "b": 10, "c": 10})
    plain = fair_shares(tree, np.array([30.0]), demand, declared, limit)
    assert plain[tree.index["c"], 0] == pytest.approx(15)  # what the declared guarantees alone give
