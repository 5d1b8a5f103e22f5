"""The order across queues (``engine/queue_order.py``) and what a cycle reports per queue."""

from __future__ import annotations

from scheduler_core.engine import run_cycle

from ..world import NOW, bound_of, gang, members, node, nodes, pod, snapshot
from .qworld import GPU, amounts, queue, with_queues


def gangs_in(queue_name: str, count: int, priority: int = 0, created: float = 0.0, gpu: int = 1):
    gangs, pods = [], []
    for i in range(count):
        key = f"ns/{queue_name}-{i}"
        gangs.append(gang(key, 1, queue=queue_name, created=created + i, priority=priority))
        pods.extend(members(key, 1, gpu=gpu, priority=priority))
    return gangs, pods


def placed(result, prefix: str) -> int:
    return sum(1 for bind in result.binds if bind.gang.startswith(f"ns/{prefix}-"))


def test_queues_take_turns_by_share_ratio():
    """6 GPUs, a's 6 gangs are all older than b's: without queues a would take everything; with
    equal queues each gets 3."""
    a, pa = gangs_in("a", 6)
    b, pb = gangs_in("b", 6, created=100)
    world = snapshot(nodes(1, cpu=32, memory=64, gpu=6), pa + pb, a + b)
    assert placed(run_cycle(world, NOW), "a") == 6
    result = run_cycle(with_queues(world, queue("a"), queue("b")), NOW)
    assert (placed(result, "a"), placed(result, "b")) == (3, 3)


def test_the_queue_furthest_below_its_share_goes_first_whatever_the_priority():
    """a already holds 3 GPUs of its fair share 3; b holds none: b's low-priority gang binds
    before a's high-priority one (one GPU free)."""
    running = [pod(f"ns/run-{i}", gpu=1, node="n0", queue="a") for i in range(3)]
    a, pa = gangs_in("a", 1, priority=100)
    b, pb = gangs_in("b", 1, priority=0, created=50)
    world = with_queues(
        snapshot([node("n0", cpu=32, memory=64, gpu=4)], running + pa + pb, a + b), queue("a"), queue("b")
    )
    result = run_cycle(world, NOW)
    assert bound_of(result, "ns/b-0") == ["ns/b-0-0"] and bound_of(result, "ns/a-0") == []


def test_within_a_queue_priority_order_holds():
    low, pl = gangs_in("q", 1, priority=0)
    high = gang("ns/high", 1, queue="q", created=10, priority=5)
    world = with_queues(
        snapshot(
            [node("n0", cpu=32, memory=64, gpu=1)],
            [*pl, *members("ns/high", 1, gpu=1, priority=5)],
            [*low, high],
        ),
        queue("q"),
    )
    assert bound_of(run_cycle(world, NOW), "ns/high") == ["ns/high-0"]


def test_weights_order_across_the_hierarchy():
    """12 GPUs; ml (weight 2: nlp and vision) and research (weight 1), all wanting 12: shares
    ml 8 (nlp 4, vision 4), research 4, and the cycle places exactly that."""
    gangs, pods = [], []
    for name in ("nlp", "vision", "research"):
        g, p = gangs_in(name, 12)
        gangs += g
        pods += p
    world = with_queues(
        snapshot(nodes(3, cpu=32, memory=64, gpu=4), pods, gangs),
        queue("ml", weight=2),
        queue("nlp", "ml"),
        queue("vision", "ml"),
        queue("research"),
    )
    result = run_cycle(world, NOW)
    assert (placed(result, "nlp"), placed(result, "vision"), placed(result, "research")) == (4, 4, 4)
    assert result.queues["ml"]["fair_share"][GPU] == 8
    assert result.queues["research"]["fair_share"][GPU] == 4


def test_cycle_reports_usage_guarantee_share_borrowed_and_lent():
    """a is guaranteed 2 GPUs and uses 6 (borrowing 4); b is guaranteed 4, uses none, lends."""
    a, pa = gangs_in("a", 6)
    world = with_queues(
        snapshot(nodes(2, cpu=32, memory=64, gpu=4), pa, a),
        queue("a", guarantee=amounts(gpu=2)),
        queue("b", guarantee=amounts(gpu=4), max=amounts(gpu=6)),
    )
    report = run_cycle(world, NOW).queues
    assert report["a"]["usage"][GPU] == 6 and report["a"]["borrowed"][GPU] == 4
    assert report["a"]["guarantee"] == {GPU: 2} and report["a"]["fair_share"][GPU] == 6
    assert report["a"]["pending"] == {} and report["a"]["max"] == {}
    assert report["b"]["lent"] == {GPU: 4} and report["b"]["max"] == {GPU: 6}
    assert report["b"]["path"] == "b" and report["default"]["leaf"] is True


def test_no_queues_no_report():
    world = snapshot([node("n0")], members("ns/a", 1), [gang("ns/a", 1)])
    assert run_cycle(world, NOW).queues == {}
