"""Reclaim (``engine/actions/reclaim.py``): a queue below its fair share takes room back from
reclaimable queues above theirs, never taking them below it, and never back and forth."""

from __future__ import annotations

from collections import Counter

from scheduler_core.engine import EngineConfig, Reason, TransitionKind, run_cycle
from scheduler_core.engine.config import DEFAULT_RECLAIM_DELAY_S

from ..world import NOW, gang, members, node, nodes, pod, snapshot
from .qworld import GPU, amounts, cycles, queue, usage, with_queues


def filled(queue_name: str, count: int, gpu: int = 1, priority: int = 0, size: int = 1, node_gpus: int = 4):
    """Running single-GPU gangs of ``queue_name`` filling nodes of ``node_gpus`` GPUs in order."""
    gangs, pods = [], []
    slot = 0
    for i in range(count):
        key = f"ns/{queue_name}{i}"
        gangs.append(gang(key, size, queue=queue_name, created=float(i), priority=priority, satisfied=True))
        for j in range(size):
            where = f"n{slot // node_gpus}"
            slot += gpu
            pods.extend(members(key, 1, gpu=gpu, start=j, node=where, started=float(i), priority=priority))
    return gangs, pods


def world_full_of_a(b_gangs: int, b_size: int, reclaimable: bool = True, b_guarantee: int = 4):
    a, pa = filled("a", 8)
    b = [gang(f"ns/b{i}", b_size, queue="b", created=100.0 + i) for i in range(b_gangs)]
    pb = [p for g in b for p in members(g.key, b_size, gpu=1)]
    return with_queues(
        snapshot(nodes(2, cpu=32, memory=64, gpu=4), pa + pb, a + b),
        queue("a", guarantee=amounts(gpu=8 - b_guarantee), reclaimable=reclaimable),
        queue("b", guarantee=amounts(gpu=b_guarantee)),
    )


def test_reclaim_evicts_the_youngest_whole_gangs_it_needs_and_says_so():
    world = world_full_of_a(1, 3)
    result = run_cycle(world, NOW)
    assert sorted(e.gang for e in result.evictions) == ["ns/a5", "ns/a6", "ns/a7"]
    evict = result.evictions[0]
    # b stays within its guarantee (4 GPUs) once placed: the guarantee rule, at once.
    assert evict.reason.startswith("reclaimed by queue b (below its guarantee) for ns/b0: whole gang")
    assert {t.gang for t in result.transitions if t.kind == TransitionKind.PREEMPTED} == {
        "ns/a5",
        "ns/a6",
        "ns/a7",
    }
    why = result.explanations["ns/b0"]
    assert why.reason == Reason.WAITING_FOR_RECLAIM
    assert why.message.startswith("waiting for reclaim from a (over its guarantee by nvidia.com/gpu 4)")
    assert why.details["from"] == [{"queue": "a", "resource": GPU, "over_by": 4}]
    assert len(result.reservations) == 3  # nominated on the room


def test_reclaimed_room_binds_in_the_next_cycle_and_the_guarantee_is_reached():
    results, final = cycles(world_full_of_a(2, 2), 2)
    assert usage(final, "b") == 4 and usage(final, "a") == 4
    assert {bind.gang for bind in results[1].binds} == {"ns/b0", "ns/b1"}


def test_a_queue_that_is_not_reclaimable_keeps_what_it_borrowed():
    result = run_cycle(world_full_of_a(1, 3, reclaimable=False), NOW)
    assert result.evictions == []
    assert result.explanations["ns/b0"].reason == Reason.INSUFFICIENT_RESOURCES


def test_never_below_the_victims_fair_share():
    """a runs one gang of 8 GPUs; b wants 2. Taking a's gang would leave a at 0, below its fair
    share of 6: b waits."""
    a = gang("ns/big", 8, queue="a", satisfied=True)
    pa = [*members("ns/big", 4, gpu=1, node="n0"), *members("ns/big", 4, gpu=1, start=4, node="n1")]
    b = gang("ns/b0", 2, queue="b", created=100)
    world = with_queues(
        snapshot(nodes(2, cpu=32, memory=64, gpu=4), [*pa, *members("ns/b0", 2, gpu=1)], [a, b]),
        queue("a"),
        queue("b"),
    )
    result = run_cycle(world, NOW)
    assert result.evictions == []


def test_a_queue_at_its_fair_share_does_not_reclaim():
    """b's guarantee is 0 and its demand equals a's: shares 4 and 4. b holds 4 already."""
    a, pa = filled("a", 4)
    b, pb = filled("b", 4)
    pb = [p.__class__(p.namespace, p.name, p.requests, gang=p.gang, node="n1", started=1.0) for p in pb]
    extra = gang("ns/bx", 1, queue="b", created=200)
    world = with_queues(
        snapshot(
            nodes(2, cpu=32, memory=64, gpu=4), [*pa, *pb, *members("ns/bx", 1, gpu=1)], [*a, *b, extra]
        ),
        queue("a"),
        queue("b"),
    )
    assert run_cycle(world, NOW).evictions == []


def test_priority_preemption_stays_within_the_queue():
    """A high-priority gang of b cannot preempt a's low-priority work when b is not below its
    fair share; without queues it would."""
    a, pa = filled("a", 4, priority=0)
    b, pb = filled("b", 4, priority=0)
    pb = [p.__class__(p.namespace, p.name, p.requests, gang=p.gang, node="n1", started=1.0) for p in pb]
    urgent = gang("ns/urgent", 1, queue="b", priority=100, created=300)
    pods = [*pa, *pb, *members("ns/urgent", 1, gpu=1, priority=100)]
    world = snapshot(nodes(2, cpu=32, memory=64, gpu=4), pods, [*a, *b, urgent])
    without = run_cycle(world, NOW)
    assert len(without.evictions) == 1
    within = run_cycle(with_queues(world, queue("a"), queue("b")), NOW)
    assert len(within.evictions) == 1 and within.evictions[0].gang.startswith("ns/b")


def test_no_ping_pong_with_steady_demand():
    """Both queues keep more demand than the cluster: after the first reclaim nobody is evicted
    again, over many cycles."""
    a, pa = filled("a", 8)
    more_a = [gang(f"ns/a-more{i}", 1, queue="a", created=50.0 + i) for i in range(4)]
    b = [gang(f"ns/b{i}", 1, queue="b", created=100.0 + i) for i in range(8)]
    world = with_queues(
        snapshot(
            nodes(2, cpu=32, memory=64, gpu=4),
            [*pa, *(p for g in more_a + b for p in members(g.key, 1, gpu=1))],
            [*a, *more_a, *b],
        ),
        queue("a"),
        queue("b"),
    )
    results, final = cycles(world, 8)
    evicted = Counter(e.gang for r in results for e in r.evictions)
    assert evicted and max(evicted.values()) == 1
    assert usage(final, "a") == 4 and usage(final, "b") == 4


def test_volcano_two_queues_one_overusing_reclaims_an_elastic_member():
    """Volcano, pkg/scheduler/actions/reclaim/reclaim_test.go, TestReclaim, "Two Queue with one
    Queue overusing resource, should reclaim": q1's podgroup (minMember 1) runs three 1-CPU
    pods, two of them not preemptable, on a 3-CPU node; q2's pending pod reclaims exactly the
    preemptable one, preemptee2."""
    pg1 = gang("c1/pg1", 1, queue="q1", satisfied=True)
    running = [
        pod("c1/preemptee1", cpu=1, memory=1, gang="c1/pg1", node="n1", started=1.0, preemptible=False),
        pod("c1/preemptee2", cpu=1, memory=1, gang="c1/pg1", node="n1", started=2.0),
        pod("c1/preemptee3", cpu=1, memory=1, gang="c1/pg1", node="n1", started=3.0, preemptible=False),
    ]
    pg2 = gang("c1/pg2", 1, queue="q2", created=10)
    preemptor = pod("c1/preemptor1", cpu=1, memory=1, gang="c1/pg2")
    world = with_queues(
        snapshot([node("n1", cpu=3, memory=3)], [*running, preemptor], [pg1, pg2]), queue("q1"), queue("q2")
    )
    result = run_cycle(world, NOW)
    assert [e.pod for e in result.evictions] == ["c1/preemptee2"]
    assert result.transitions_of("c1/pg1") == []  # an elastic member: pg1 keeps running


def test_kai_reclaim_restores_the_fair_share_not_only_the_guarantee():
    """KAI-Scheduler #1934, open (reclaim only up to deserved quota): here no queue has a
    guarantee, yet with equal weights b's fair share is half the cluster, and reclaim brings it
    there (a guarantee-only reclaim would leave it at 0)."""
    world = with_queues(world_full_of_a(4, 1), queue("a"), queue("b"))
    results, final = cycles(world, 2)
    assert usage(final, "b") == 4 and usage(final, "a") == 4


def test_reclaim_beyond_the_guarantee_waits_for_the_delay():
    """No guarantee for b, so reclaiming for it is the fair-share rule: a unit created less than
    ``reclaim_delay_s`` ago waits for room (running work may end by itself); once it has waited
    that long it reclaims. YuniKorn's ``preemption.delay`` works the same way."""
    delay = EngineConfig().reclaim_delay_s
    assert delay == DEFAULT_RECLAIM_DELAY_S == 120.0

    def world(created: float):
        a, pa = filled("a", 8)
        b = gang("ns/b0", 2, queue="b", created=created)
        return with_queues(
            snapshot(nodes(2, cpu=32, memory=64, gpu=4), [*pa, *members("ns/b0", 2, gpu=1)], [*a, b]),
            queue("a"),
            queue("b"),
        )

    early = run_cycle(world(NOW - delay + 1), NOW)
    assert early.evictions == [] and early.explanations["ns/b0"].reason != Reason.WAITING_FOR_RECLAIM
    due = run_cycle(world(NOW - delay), NOW)
    assert sorted(e.gang for e in due.evictions) == ["ns/a6", "ns/a7"]
    assert due.evictions[0].reason.startswith("reclaimed by queue b (below its fair share) for ns/b0")
    assert due.explanations["ns/b0"].message.startswith("waiting for reclaim from a (over its fair share by")
    none = run_cycle(world(NOW - delay), NOW, EngineConfig(reclaim="guarantee"))
    assert none.evictions == []  # guarantee-only reclaim never takes b beyond its guarantee, 0


def test_a_queue_s_own_reclaim_delay_overrides_the_config_s():
    """A leaf queue's ``reclaim_delay_s`` is the delay its units wait before reclaiming beyond its
    guarantee: 0 (a Volcano queue) reclaims in the first cycle, 30 (YuniKorn's default
    ``preemption.delay``) after 30 s though the config says 120; None keeps the config's."""

    def world(created: float, delay: float | None):
        a, pa = filled("a", 8)
        b = gang("ns/b0", 2, queue="b", created=created)
        return with_queues(
            snapshot(nodes(2, cpu=32, memory=64, gpu=4), [*pa, *members("ns/b0", 2, gpu=1)], [*a, b]),
            queue("a"),
            queue("b", reclaim_delay_s=delay),
        )

    config = EngineConfig(reclaim_delay_s=120.0)
    at_once = run_cycle(world(NOW, 0.0), NOW, config)
    assert sorted(e.gang for e in at_once.evictions) == ["ns/a6", "ns/a7"]
    assert run_cycle(world(NOW - 29, 30.0), NOW, config).evictions == []
    assert len(run_cycle(world(NOW - 30, 30.0), NOW, config).evictions) == 2
    assert run_cycle(world(NOW - 30, None), NOW, config).evictions == []  # the config's 120 s


def test_gpus_as_words():
    """The amount a victim queue is over by is written as Kubernetes writes it."""
    world = world_full_of_a(1, 3)
    text = run_cycle(world, NOW).explanations["ns/b0"].message
    assert "nvidia.com/gpu 4" in text
    assert usage(world, "a") == 8


def test_reclaim_inside_a_subtree_names_the_queue_by_path():
    """ml = nlp + vision, 16 GPUs: vision runs 16 single-GPU gangs, nlp wants 8. Fair shares
    8 and 8: nlp reclaims 8 from ml/vision, which says by how much it was over."""
    gangs, pods = [], []
    for i in range(16):
        key = f"ns/v{i}"
        gangs.append(gang(key, 1, queue="vision", created=float(i), satisfied=True))
        pods.extend(members(key, 1, gpu=1, node=f"n{i // 8}", started=float(i)))
    nlp = gang("ns/nlp", 8, queue="nlp", created=100)
    world = with_queues(
        snapshot(nodes(2, cpu=64, memory=128, gpu=8), [*pods, *members("ns/nlp", 8, gpu=1)], [*gangs, nlp]),
        queue("ml"),
        queue("nlp", "ml"),
        queue("vision", "ml"),
    )
    result = run_cycle(world, NOW)
    assert len(result.evictions) == 8
    why = result.explanations["ns/nlp"]
    assert why.message.startswith(
        "waiting for reclaim from ml/vision (over its fair share by nvidia.com/gpu 8)"
    )
    assert result.evictions[0].reason.startswith("reclaimed by queue ml/nlp (below its fair share)")
    assert result.queues["vision"]["fair_share"][GPU] == 8
