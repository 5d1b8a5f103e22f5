"""Each queue's own preemption rules (``engine.model.Queue``): ``preempt_within``, whether its
work may evict its own lower-priority work (``actions/preempt.py`` and ``reclaim.within_max``),
and ``reclaim_up_to``, how far it reclaims from other queues (``actions/reclaim.py``,
``actions/reclaim_declared.py``).

Kueue: a ClusterQueue's ``preemption.withinClusterQueue`` is Never unless set
(``pkg/scheduler/preemption/preemption_test.go``, "can't preempt workloads in ClusterQueue for
withinClusterQueue=Never" against "preempt lowest priority" with LowerPriority). YuniKorn: no
intra-queue preemption (its preemption design, "Non goals"), and preemption only up to the
guarantee of the queue or an ancestor (``yunikorn-core`` ``pkg/scheduler/objects/preemption.go``;
``preemption_test.go`` ``TestCheckPreemptionQueueGuaranteesWithNoGuaranteedResources``, from
YUNIKORN-1951), from queues that stay at or above theirs, after ``preemption.delay``.
"""

from __future__ import annotations

from scheduler_core.engine import Queue, Reason, run_cycle

from ..world import NOW, gang, members, node, nodes, snapshot
from .qworld import amounts, full_at_max, queue, usage, with_queues

YUNIKORN = {"preempt_within": False, "reclaim_up_to": "guarantee", "reclaim_delay_s": 30.0}


def test_the_defaults_keep_gangsched_s_rules():
    plain = Queue("q")
    assert plain.preempt_within is True and plain.reclaim_up_to == "fair-share"


def kueue_world(within: bool):
    """Kueue's cases on one 6-CPU node: the ClusterQueue runs low (priority -1), mid (0) and high
    (1), 2 CPUs each; an incoming workload of priority 1 asks 2 CPUs."""
    running = []
    gangs = []
    for name, priority in (("low", -1), ("mid", 0), ("high", 1)):
        gangs.append(gang(f"ns/{name}", 1, queue="cq", priority=priority, satisfied=True))
        running.extend(members(f"ns/{name}", 1, cpu=2, node="n0", started=1.0, priority=priority))
    incoming = gang("ns/incoming", 1, queue="cq", priority=1, created=5)
    world = snapshot(
        [node("n0", cpu=6, memory=16)],
        [*running, *members("ns/incoming", 1, cpu=2, priority=1)],
        [*gangs, incoming],
    )
    return with_queues(world, queue("cq", guarantee=amounts(cpu=6), preempt_within=within))


def test_lower_priority_preempts_the_lowest_and_never_does_not():
    """ "preempt lowest priority" (withinClusterQueue LowerPriority): the low workload is
    evicted; "can't preempt workloads in ClusterQueue for withinClusterQueue=Never": nothing
    is, and the incoming workload waits for room."""
    lower = run_cycle(kueue_world(True), NOW)
    assert [e.gang for e in lower.evictions] == ["ns/low"]

    never = run_cycle(kueue_world(False), NOW)
    assert never.evictions == []
    assert never.explanations["ns/incoming"].reason == Reason.INSUFFICIENT_RESOURCES


def test_at_its_max_a_queue_that_does_not_preempt_within_itself_waits():
    """As ``test_admission``'s case of a queue at its max, but the queue does not preempt within
    itself (Kueue's Never, YuniKorn): the higher-priority gang waits at the max."""
    world = full_at_max("ns/high", 10, queue("q", max=amounts(gpu=4), preempt_within=False))
    result = run_cycle(world, NOW)
    assert result.evictions == []
    assert result.explanations["ns/high"].reason == Reason.QUEUE_MAX


def filled(queue_name: str, count: int, first: int = 0, created: float = 0.0):
    """Running 1-GPU gangs of ``queue_name``, on 4-GPU nodes from slot ``first`` on."""
    gangs, pods = [], []
    for i in range(count):
        key = f"ns/{queue_name}{i}"
        gangs.append(gang(key, 1, queue=queue_name, created=created + i, satisfied=True))
        slot = first + i
        pods.extend(members(key, 1, gpu=1, node=f"n{slot // 4}", started=created + i))
    return gangs, pods


def yunikorn_world(created: float, b: Queue, *extra: Queue, a: Queue | None = None, want: int = 2):
    """a fills the 8 GPUs; b's gang of ``want`` GPUs was created at ``created``."""
    gangs, pods = filled("a", 8)
    waiting = gang("ns/b0", want, queue="b", created=created)
    return with_queues(
        snapshot(
            nodes(2, cpu=32, memory=64, gpu=4), [*pods, *members("ns/b0", want, gpu=1)], [*gangs, waiting]
        ),
        a or queue("a", **YUNIKORN),
        b,
        *extra,
    )


def test_up_to_its_guarantee_after_its_delay():
    """b is guaranteed 4 GPUs: its gang of 2 reclaims once it has waited b's delay (30 s),
    not before; the fair-share rule's own delay (``EngineConfig.reclaim_delay_s``) is not
    what it waits."""
    b = queue("b", guarantee=amounts(gpu=4), **YUNIKORN)
    early = run_cycle(yunikorn_world(NOW - 29, b), NOW)
    assert early.evictions == []
    due = run_cycle(yunikorn_world(NOW - 30, b), NOW)
    assert sorted(e.gang for e in due.evictions) == ["ns/a6", "ns/a7"]
    assert due.evictions[0].reason.startswith("reclaimed by queue b (below its guarantee) for ns/b0")


def test_no_guarantee_on_its_path_never_reclaims():
    """NoGuaranteed: neither b nor its parent declares a guarantee; its fair share is half the
    cluster, which the fair-share rule would reclaim, but a YuniKorn queue never preempts."""
    b = queue("b", "p", **YUNIKORN)
    parent = queue("p", **YUNIKORN)
    assert run_cycle(yunikorn_world(NOW - 600, b, parent), NOW).evictions == []
    fair = queue("b", "p", reclaim_delay_s=30.0)
    assert len(run_cycle(yunikorn_world(NOW - 600, fair, queue("p")), NOW).evictions) == 2


def test_a_parent_s_guarantee_lets_a_leaf_without_one_reclaim():
    """ParentGuaranteed: b declares nothing, its parent p is guaranteed 4 GPUs: b reclaims
    within p's guarantee."""
    b = queue("b", "p", **YUNIKORN)
    parent = queue("p", guarantee=amounts(gpu=4), **YUNIKORN)
    result = run_cycle(yunikorn_world(NOW - 60, b, parent), NOW)
    assert sorted(e.gang for e in result.evictions) == ["ns/a6", "ns/a7"]


def test_never_beyond_its_guarantee():
    """b is guaranteed 2 GPUs and wants 4: once placed it would be over its guarantee, so it
    reclaims nothing (YuniKorn's ask must fit within the queue's guarantee), where the
    fair-share rule would take 4."""
    b = queue("b", guarantee=amounts(gpu=2), **YUNIKORN)
    assert run_cycle(yunikorn_world(NOW - 60, b, want=4), NOW).evictions == []
    fair = queue("b", guarantee=amounts(gpu=2), reclaim_delay_s=30.0)
    assert len(run_cycle(yunikorn_world(NOW - 60, fair, want=4), NOW).evictions) == 4


def test_victim_queues_keep_their_guarantee():
    """a is guaranteed 6 and runs 6 (its youngest gangs, the first victims in order); c, with no
    guarantee, runs 2. b, guaranteed 2, takes c's two: taking a's would leave a below its
    guarantee."""
    a_gangs, a_pods = filled("a", 6, first=2, created=50.0)
    c_gangs, c_pods = filled("c", 2)
    waiting = gang("ns/b0", 2, queue="b", created=NOW - 60)
    world = with_queues(
        snapshot(
            nodes(2, cpu=32, memory=64, gpu=4),
            [*a_pods, *c_pods, *members("ns/b0", 2, gpu=1)],
            [*a_gangs, *c_gangs, waiting],
        ),
        queue("a", guarantee=amounts(gpu=6), **YUNIKORN),
        queue("b", guarantee=amounts(gpu=2), **YUNIKORN),
        queue("c", **YUNIKORN),
    )
    result = run_cycle(world, NOW)
    assert sorted(e.gang for e in result.evictions) == ["ns/c0", "ns/c1"]
    # a alone: nothing b may take without putting a below 6.
    alone = with_queues(world, queue("a", guarantee=amounts(gpu=7), **YUNIKORN), *world.queues[1:])
    assert all(not e.gang.startswith("ns/a") for e in run_cycle(alone, NOW).evictions)


def test_a_queue_that_reclaims_up_to_its_guarantee_is_not_taken_below_it():
    """After b took its guarantee back, a (no guarantee, still pending work) never takes it
    back: usage settles at b 4, a 4."""
    from .qworld import cycles

    b = queue("b", guarantee=amounts(gpu=4), **YUNIKORN)
    world = yunikorn_world(NOW - 60, b, want=4)
    more = gang("ns/a-more", 1, queue="a", created=NOW - 60)
    world = with_queues(
        snapshot(world.nodes, [*world.pods, *members("ns/a-more", 1, gpu=1)], [*world.gangs, more]),
        *world.queues,
    )
    results, final = cycles(world, 4)
    assert usage(final, "b") == 4 and usage(final, "a") == 4
    assert sum(len(r.evictions) for r in results) == 4
