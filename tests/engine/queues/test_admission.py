"""Admission (``engine/ledger.py``): max on the path, borrowing only what nobody is owed,
lending limits, closed and unknown queues, and the explanations that say so."""

from __future__ import annotations

from scheduler_core.engine import EngineConfig, HeadOfLine, Reason, run_cycle

from ..world import NOW, bound, bound_of, gang, members, node, nodes, pod, snapshot
from .qworld import GPU, amounts, full_at_max, queue, usage, with_queues


def gpu_gangs(prefix: str, count: int, size: int, queue_name: str, created: float = 0.0, **kwargs):
    gangs, pods = [], []
    for i in range(count):
        key = f"ns/{prefix}{i}"
        gangs.append(gang(key, size, queue=queue_name, created=created + i, **kwargs))
        pods.extend(members(key, size, gpu=1))
    return gangs, pods


def test_queue_at_its_max_waits_and_says_so():
    """ml/nlp may use 4 GPUs: the first gang of 4 binds, the second waits with the queue's words."""
    gangs, pods = gpu_gangs("j", 2, 4, "nlp")
    world = with_queues(
        snapshot(nodes(2, cpu=32, memory=64, gpu=8), pods, gangs),
        queue("ml"),
        queue("nlp", "ml", max=amounts(gpu=4)),
    )
    result = run_cycle(world, NOW)
    assert len(bound_of(result, "ns/j0")) == 4 and bound_of(result, "ns/j1") == []
    why = result.explanations["ns/j1"]
    assert why.reason == Reason.QUEUE_MAX
    assert why.message == "queue ml/nlp at its max: nvidia.com/gpu 4/4"
    shapes = why.details.pop("shapes")
    assert why.details == {"queue": "ml/nlp", "resource": GPU, "used": 4, "max": 4}
    # Both nodes have room for a member: the queue's quota, not the nodes, rules them out.
    assert [shape["reasons"] for shape in shapes] == [
        [{"reason": "QueueQuota", "count": 2, "detail": "ml/nlp"}]
    ]
    assert shapes[0]["available"] == 0 and shapes[0]["nodes"] == 2


def test_parent_max_binds_the_children():
    """The max of ml (6 GPUs) holds for nlp and vision together."""
    a, pa = gpu_gangs("a", 1, 4, "nlp")
    b, pb = gpu_gangs("b", 1, 4, "vision", created=5)
    world = with_queues(
        snapshot(nodes(2, cpu=32, memory=64, gpu=8), pa + pb, a + b),
        queue("ml", max=amounts(gpu=6)),
        queue("nlp", "ml"),
        queue("vision", "ml"),
    )
    result = run_cycle(world, NOW)
    assert len(result.binds) == 4
    held = [e for e in result.explanations.values() if e.reason == Reason.QUEUE_MAX]
    assert len(held) == 1 and held[0].details["queue"] == "ml" and held[0].details["used"] == 4


def test_elastic_gang_is_placed_up_to_the_max():
    """min_member 2 of 6 members, queue max 4 GPUs: 4 members bind, the rest wait."""
    g = gang("ns/e", 2, queue="q")
    world = with_queues(
        snapshot(nodes(1, cpu=32, memory=64, gpu=8), members("ns/e", 6, gpu=1), [g]),
        queue("q", max=amounts(gpu=4)),
    )
    assert len(run_cycle(world, NOW).binds) == 4


def test_borrowing_stops_at_what_others_are_owed():
    """8 GPUs; a and b are guaranteed 4 each; b has a pending gang of 2 (created later, and a
    goes first): a uses its 4 and borrows only the 2 that b does not need."""
    a, pa = gpu_gangs("a", 8, 1, "a")
    b, pb = gpu_gangs("b", 1, 2, "b", created=100)
    world = with_queues(
        snapshot(nodes(2, cpu=32, memory=64, gpu=4), pa + pb, a + b),
        queue("a", guarantee=amounts(gpu=4)),
        queue("b", guarantee=amounts(gpu=4)),
    )
    result = run_cycle(world, NOW)
    assert len(bound_of(result, "ns/b0")) == 2
    a_bound = sum(1 for bind in result.binds if bind.gang.startswith("ns/a"))
    assert a_bound == 6  # its 4, plus the 2 b does not want
    held = {e.reason for k, e in result.explanations.items() if k.startswith("ns/a")}
    assert held == {Reason.INSUFFICIENT_RESOURCES}  # the cluster is full now: nodes, not queues


def test_without_demand_nothing_is_kept_and_everything_may_be_borrowed():
    """b is guaranteed 4 GPUs but wants none (and lends without limit): a borrows all 8."""
    a, pa = gpu_gangs("a", 8, 1, "a")
    world = with_queues(
        snapshot(nodes(2, cpu=32, memory=64, gpu=4), pa, a),
        queue("a", guarantee=amounts(gpu=4)),
        queue("b", guarantee=amounts(gpu=4)),
    )
    assert len(run_cycle(world, NOW).binds) == 8


def test_lending_limit_keeps_the_rest_even_without_demand():
    """Kueue, pkg/scheduler/scheduler_test.go, "hierarchical cohort respects lending limit when
    borrowing": lender (nominal 10 CPU, lendingLimit 3), borrower (nominal 5, using 5); a
    pending 4 CPU workload of borrower is inadmissible (only 3 lendable); here 3 CPU fit."""
    running = pod("ns/existing", cpu=5, memory=0, node="n0", queue="borrower")
    four = pod("ns/four", cpu=4, memory=0, queue="borrower")
    queues = (
        queue("cohort"),
        queue("lender", "cohort", guarantee=amounts(cpu=10), lending=amounts(cpu=3)),
        queue("borrower", "cohort", guarantee=amounts(cpu=5), max=amounts(cpu=15)),
    )
    world = with_queues(snapshot([node("n0", cpu=15, memory=64)], [running, four]), *queues)
    assert run_cycle(world, NOW).binds == []
    three = pod("ns/three", cpu=3, memory=0, queue="borrower")
    world = with_queues(snapshot([node("n0", cpu=15, memory=64)], [running, three]), *queues)
    assert bound(run_cycle(world, NOW)) == {"ns/three": "n0"}


def test_lending_limit_explained_on_a_gang():
    """The same with a gang: the explanation names the lender that keeps its capacity."""
    running = pod("ns/existing", cpu=5, memory=0, node="n0", queue="borrower")
    g = gang("ns/wl", 1, queue="borrower")
    queues = (
        queue("lender", guarantee=amounts(cpu=10), lending=amounts(cpu=3)),
        queue("borrower", guarantee=amounts(cpu=5)),
    )
    world = with_queues(
        snapshot([node("n0", cpu=15, memory=64)], [running, *members("ns/wl", 1, cpu=4, memory=0)], [g]),
        *queues,
    )
    why = run_cycle(world, NOW).explanations["ns/wl"]
    assert why.reason == Reason.QUEUE_BORROW
    assert why.details["kept_for"] == ["lender"] and why.details["kept_for_others"] == 7000
    assert "7 are kept for the guarantees of lender" in why.message


def test_yunikorn_headroom_of_a_parent_max():
    """YuniKorn core, pkg/scheduler/objects/queue_test.go, TestHeadroom: root 20/10, parent max
    20/8, leaf1 and leaf2 each using 5/3: a leaf's headroom is the parent's, 10/2. Here cpu and
    memory (GiB) stand for "first" and "second": 10 CPU + 2 GiB fits, 1 CPU + 3 GiB does not."""
    running = [
        pod("ns/l1", cpu=5, memory=3, node="n0", queue="leaf1"),
        pod("ns/l2", cpu=5, memory=3, node="n0", queue="leaf2"),
    ]
    queues = (
        queue("parent", max=amounts(cpu=20, memory=8)),
        queue("leaf1", "parent"),
        queue("leaf2", "parent"),
    )
    fits = pod("ns/fits", cpu=10, memory=2, queue="leaf1")
    world = with_queues(snapshot([node("n0", cpu=20, memory=10)], [*running, fits]), *queues)
    assert bound(run_cycle(world, NOW)) == {"ns/fits": "n0"}
    too_much = pod("ns/big", cpu=1, memory=3, queue="leaf2")
    world = with_queues(snapshot([node("n0", cpu=20, memory=10)], [*running, too_much]), *queues)
    assert run_cycle(world, NOW).binds == []


def _volcano_world(pending_pod):
    """Volcano, pkg/scheduler/plugins/proportion/proportion_test.go, TestEnqueueAndAllocable:
    n1 and n2 with 2 CPU / 2G each; q1 capability 2 CPU / 2G runs pod1 (1 CPU, 2G), q2
    capability 3 CPU / 3G runs pod2 (2 CPU, 1G)."""
    g = 1.0  # "1G" written as GiB: only proportions matter
    n1, n2 = node("n1", cpu=2, memory=2 * g), node("n2", cpu=2, memory=2 * g)
    pod1 = pod("ns1/pod1", cpu=1, memory=2 * g, node="n1", queue="q1")
    pod2 = pod("ns1/pod2", cpu=2, memory=1 * g, node="n2", queue="q2")
    queues = (
        queue("q1", max=amounts(cpu=2, memory=2 * g)),
        queue("q2", max=amounts(cpu=3, memory=3 * g)),
        queue("q3", max=amounts(cpu=3, memory=3 * g), open=False),
    )
    pg = gang(f"ns1/pg-{pending_pod.name}", 1, queue=pending_pod.queue)
    member = pending_pod.__class__(pending_pod.namespace, pending_pod.name, pending_pod.requests, gang=pg.key)
    return with_queues(snapshot([n1, n2], [pod1, pod2, member], [pg]), *queues), pg.key


def test_volcano_case0_memory_full_cpu_only_job_is_allocated():
    """TestEnqueueAndAllocable "case0: memory exceed derserved, job only request cpu can be
    enqueued and allocated": pod3 (1 CPU, 0 memory) of q1 binds on n1."""
    world, _ = _volcano_world(pod("ns1/pod3", cpu=1, memory=0, queue="q1"))
    assert bound(run_cycle(world, NOW)) == {"ns1/pod3": "n1"}


def test_volcano_case1_cpu_full_memory_only_job_is_allocated():
    """TestEnqueueAndAllocable "case1: cpu exceed derserved, job only request memory can be
    enqueued and allocated": pod4 (0 CPU, 1G) of q2 binds on n2."""
    world, _ = _volcano_world(pod("ns1/pod4", cpu=0, memory=1, queue="q2"))
    assert bound(run_cycle(world, NOW)) == {"ns1/pod4": "n2"}


def test_volcano_case3_over_capability_is_not_allocated():
    """TestEnqueueAndAllocable "case3: exceed deserved, can not allocate": pod5 (1 CPU, 1G) of
    q1 would take q1's memory to 3G over its 2G: nothing binds, and the queue is named."""
    world, key = _volcano_world(pod("ns1/pod5", cpu=1, memory=1, queue="q1"))
    result = run_cycle(world, NOW)
    assert result.binds == []
    assert result.explanations[key].reason == Reason.QUEUE_MAX
    assert result.explanations[key].message == "queue q1 at its max: memory 2Gi/2Gi"


def test_volcano_case4_closed_queue_places_nothing():
    """TestEnqueueAndAllocable "case4: queue with non-open state, can not enqueue"."""
    world, key = _volcano_world(pod("ns1/pod6", cpu=1, memory=1, queue="q3"))
    result = run_cycle(world, NOW)
    assert result.binds == []
    assert result.explanations[key].reason == Reason.QUEUE_CLOSED
    assert result.explanations[key].message == "queue q3 closed"


def test_unknown_queue_waits_and_default_is_implicit():
    a = gang("ns/a", 1, queue="nope")
    b = gang("ns/b", 1)  # the default queue, not declared
    world = with_queues(
        snapshot([node("n0")], [*members("ns/a", 1), *members("ns/b", 1)], [a, b]), queue("team")
    )
    result = run_cycle(world, NOW)
    assert bound_of(result, "ns/b") == ["ns/b-0"] and bound_of(result, "ns/a") == []
    assert result.explanations["ns/a"].reason == Reason.QUEUE_UNKNOWN
    assert result.explanations["ns/a"].message == "no queue named nope"


def test_an_inner_queue_takes_no_work():
    g = gang("ns/a", 1, queue="ml")
    world = with_queues(snapshot([node("n0")], members("ns/a", 1), [g]), queue("ml"), queue("nlp", "ml"))
    why = run_cycle(world, NOW).explanations["ns/a"]
    assert why.reason == Reason.QUEUE_UNKNOWN and "has child queues" in why.message


def test_a_unit_held_by_its_queue_blocks_no_other_queue():
    """Strict FIFO (head-of-line BLOCK): a's first gang is at a's max, and is neither the head
    nor holding anything: b's gang behind it binds."""
    a, pa = gpu_gangs("a", 1, 4, "a")
    b, pb = gpu_gangs("b", 1, 2, "b", created=50)
    world = with_queues(
        snapshot(nodes(1, cpu=32, memory=64, gpu=8), pa + pb, a + b),
        queue("a", max=amounts(gpu=2)),
        queue("b"),
    )
    result = run_cycle(world, NOW, EngineConfig(head_of_line=HeadOfLine.BLOCK))
    assert len(bound_of(result, "ns/b0")) == 2 and result.reservations == []
    assert result.explanations["ns/a0"].reason == Reason.QUEUE_MAX


def test_no_queue_ever_goes_over_its_max_across_cycles():
    from .qworld import cycles

    gangs, pods = gpu_gangs("j", 6, 3, "q")
    world = with_queues(
        snapshot(nodes(3, cpu=32, memory=64, gpu=8), pods, gangs), queue("q", max=amounts(gpu=7))
    )
    _, final = cycles(world, 3)
    assert usage(final, "q") == 6


def test_at_its_max_a_higher_priority_gang_preempts_within_its_queue():
    """q may use 4 GPUs and runs a priority-0 gang of 4: a priority-10 gang of 2 in q evicts it
    (Kueue's preemption within a ClusterQueue at its quota), binds in the next cycle, and the
    queue stays within its max; a gang of the same priority only waits."""
    from .qworld import cycles

    results, final = cycles(full_at_max("ns/high", 10, queue("q", max=amounts(gpu=4))), 2)
    assert sorted(e.pod for e in results[0].evictions) == [f"ns/low-{i}" for i in range(4)]
    assert (
        results[0]
        .evictions[0]
        .reason.startswith("preempted by ns/high (priority 10) within queue q, at its max")
    )
    why = results[0].explanations["ns/high"]
    assert why.reason == Reason.PREEMPTING and "within queue q, at its max" in why.message
    assert bound_of(results[1], "ns/high") == ["ns/high-0", "ns/high-1"]
    assert usage(final, "q") == 2
    result = run_cycle(full_at_max("ns/same", 0, queue("q", max=amounts(gpu=4))), NOW)
    assert result.evictions == [] and result.explanations["ns/same"].reason == Reason.QUEUE_MAX
