"""KAI-Scheduler's queues in the fair share (``engine/fairshare.py``): an over-quota weight per
resource, and ``quota: -1`` (a guarantee of all a queue asks)."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler_core.engine import run_cycle
from scheduler_core.engine.fairshare import (
    build_tree,
    declared_guarantees,
    fair_shares,
    guarantees,
    resolve_unlimited,
)
from scheduler_core.engine.model import Queue

from ..world import NOW, bound_of, gang, members, nodes, snapshot
from .qworld import amounts, queue, with_queues

INF = float(1 << 60)
RESOURCES = ("gpu", "cpu")


def shares(queues, capacity, demand, maximum=None, resources=RESOURCES):
    """Fair shares of ``queues`` (a ``default`` queue without demand is added last)."""
    tree = build_tree([*queues, Queue("default")])
    demand = np.array([*demand, [0.0] * len(resources)], dtype=float)
    maximum = np.full_like(demand, INF) if maximum is None else np.array([*maximum, [INF] * len(resources)])
    guarantee = guarantees(tree, declared_guarantees(tree, resources))
    share = fair_shares(tree, np.array(capacity, dtype=float), demand, guarantee, maximum, resources)
    return share[:-1], guarantee[:-1]


def test_kai_each_resource_is_divided_by_its_own_weights():
    """KAI-Scheduler, pkg/scheduler/plugins/proportion/resource_division/resource_division_test.go,
    "setResourceShare - GPU" / "two queues" / Entry "allocates GPUs proportionally" (8 GPUs, both
    queues deserve 2 and request 6, GPU over-quota weights 1 and 3: shares 3 and 5), with the
    same case on CPU and the weights the other way round, as KAI divides each resource on its own
    (``SetResourcesShare`` calls ``setResourceShare`` per resource): 5 and 3 CPUs."""
    q1 = Queue("q1", guarantee={"gpu": 2, "cpu": 2}, weights={"gpu": 1, "cpu": 3})
    q2 = Queue("q2", guarantee={"gpu": 2, "cpu": 2}, weights={"gpu": 3, "cpu": 1})
    share, _ = shares([q1, q2], [8, 8], [[6, 6], [6, 6]])
    assert share.tolist() == [pytest.approx([3, 5]), pytest.approx([5, 3])]


def test_kai_hierarchical_queue_example_weights():
    """KAI-Scheduler docs/queues/README.md, "Hierarchical Queue": ml-team weighs cpu 2 and gpu 1.
    Beside a sibling weighing 1 on both, with nothing guaranteed and both wanting everything,
    ml-team gets 2/3 of the CPUs and half the GPUs."""
    ml = Queue("ml-team", weights={"cpu": 2, "gpu": 1})
    other = Queue("other")
    share, _ = shares([ml, other], [6, 6000], [[6, 6000], [6, 6000]])
    assert share.tolist() == [pytest.approx([3, 4000]), pytest.approx([3, 2000])]


def test_scalar_weights_keep_the_dominant_resource_rule():
    """A level without per-resource weights divides as before, even when another level of the
    tree names them: DRF's example (9 CPUs, 18 GB; tasks <1, 4> and <3, 1>) gives <3, 12> and
    <6, 2>, where a per-resource split would give each half of both."""
    queues = [
        Queue("a"),
        Queue("b"),
        Queue("kai"),
        Queue("x", "kai", weights={"z": 2}),
        Queue("y", "kai"),
    ]
    demand = [[100, 400, 0], [300, 100, 0], [0, 0, 2], [0, 0, 1], [0, 0, 1]]
    share, _ = shares(queues, [9, 18, 1], demand, resources=("c", "m", "z"))
    assert share[0].tolist() == pytest.approx([3, 12, 0])
    assert share[1].tolist() == pytest.approx([6, 2, 0])
    assert share[3:, 2].tolist() == pytest.approx([2 / 3, 1 / 3])  # x weighs 2 on z


def test_an_unlimited_quota_takes_what_its_siblings_are_not_guaranteed():
    """KAI reads ``quota: -1`` as deserving the whole level (resource_division.go,
    ``setDeservedResource``). 12 GPUs: q1 has quota -1, q2 quota 4; both want 12. q2 keeps its 4
    and q1 gets the other 8, before any over-quota division."""
    q1 = Queue("q1", unlimited_guarantee=frozenset({"gpu"}))
    q2 = Queue("q2", guarantee={"gpu": 4})
    share, guarantee = shares([q1, q2], [12, 0], [[12, 0], [12, 0]])
    assert share[:, 0].tolist() == pytest.approx([8, 4])
    assert resolve_unlimited(guarantee, share)[:, 0].tolist() == pytest.approx([8, 4])


def test_unlimited_quotas_share_the_level_by_weight():
    """KAI's e2e queues (test/e2e/modules/resources/rd/queue/queue.go, ``CreateQueueObject``)
    all have quota -1: two such queues wanting 10 GPUs of 12 split them by weight (2 and 1:
    8 and 4); one wanting only 3 gets its 3 and the other the rest."""
    unlimited = frozenset({"gpu"})
    q1 = Queue("q1", unlimited_guarantee=unlimited, weights={"gpu": 2})
    q2 = Queue("q2", unlimited_guarantee=unlimited, weights={"gpu": 1})
    share, _ = shares([q1, q2], [12, 0], [[10, 0], [10, 0]])
    assert share[:, 0].tolist() == pytest.approx([8, 4])
    share, _ = shares([q1, q2], [12, 0], [[3, 0], [10, 0]])
    assert share[:, 0].tolist() == pytest.approx([3, 9])


def test_an_unlimited_child_does_not_raise_its_parents_guarantee():
    """A quota of -1 claims the parent's share, it is not a promise the parent must hold: the
    parent is guaranteed its own 4 GPUs, and its siblings keep theirs."""
    queues = [
        Queue("dept", guarantee={"gpu": 4}),
        Queue("team", "dept", unlimited_guarantee=frozenset({"gpu"})),
        Queue("other", guarantee={"gpu": 8}),
    ]
    share, guarantee = shares(queues, [12, 0], [[12, 0], [12, 0], [12, 0]])
    assert guarantee[:, 0].tolist() == [4, INF, 8]
    assert share[:, 0].tolist() == pytest.approx([4, 4, 8])


def test_unlimited_quotas_do_not_keep_each_other_out():
    """Two queues with quota -1 (KAI's e2e default for cpu and memory), each with more gangs than
    the cluster holds: each is owed, and keeps reserved, only its fair share, so both start work
    in the first cycle (were each owed all it asks, each would keep the other out)."""
    unlimited = frozenset({"cpu", "memory", "nvidia.com/gpu"})
    gangs, pods = [], []
    for name in ("a", "b"):
        for i in range(3):
            key = f"ns/{name}{i}"
            gangs.append(gang(key, 4, queue=name, created=i))
            pods.extend(members(key, 4, gpu=1))
    world = with_queues(
        snapshot(nodes(2, cpu=32, memory=64, gpu=8), pods, gangs),
        queue("a", unlimited_guarantee=unlimited),
        queue("b", unlimited_guarantee=unlimited, max=amounts(gpu=100)),
    )
    result = run_cycle(world, NOW)
    started = {key for key in (g.key for g in gangs) if bound_of(result, key)}
    assert started == {"ns/a0", "ns/a1", "ns/b0", "ns/b1"}
