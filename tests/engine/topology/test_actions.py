"""Backfill, preemption and reclaim with topology: the head's reservation is in its
domain, and victims are taken only inside the domain they free."""

from __future__ import annotations

import dataclasses

from scheduler_core.engine import Reason, run_cycle

from ..queues.qworld import amounts, queue, with_queues
from ..world import NOW, bound_of, gang, members, pod
from .tworld import RACK, fleet, required, world


def _rack(node_name: str) -> str:
    return node_name.split("-")[0]


def test_backfill_never_takes_the_head_gangs_rack():
    nodes = fleet("b0:r0=2,r1=2")
    # Higher priority than the head: nothing to preempt.
    ending = pod("x/ending", gpu=8, node="r0-h0", started=NOW - 10, duration=100, priority=9)
    forever = pod("x/forever", gpu=8, node="r1-h0", started=NOW - 10, priority=9)
    head = gang("t/head", 2, priority=5, topology=required(RACK), created=0.0)
    small = [gang(f"t/s{i}", 1, priority=1, created=float(i + 1)) for i in range(2)]
    pods = (
        ending,
        forever,
        *members("t/head", 2, gpu=8, priority=5),
        *members("t/s0", 1, gpu=8, priority=1),
        *members("t/s1", 1, gpu=8, priority=1),
    )
    result = run_cycle(world(nodes, pods, [head, *small]), NOW)
    # The head fits no rack now (one free node in each); it will fit r0 once x/ending ends, so
    # r0-h1 is kept for it and only r1's free node is backfilled.
    assert bound_of(result, "t/head") == []
    placed = {b.node for b in result.binds}
    assert placed == {"r1-h1"}
    assert result.explanations["t/s1"].reason == Reason.BLOCKED_BEHIND


def test_preemption_takes_victims_only_in_the_rack_it_frees():
    nodes = fleet("b0:r0=2,r1=2")
    low = [
        pod(f"x/low-{n}", gpu=8, node=n, started=NOW - 10, priority=p)
        for n, p in (
            ("r0-h0", 0),
            ("r1-h0", 1),
            ("r1-h1", 1),
            ("r0-h1", 5),
        )
    ]
    snap = world(
        nodes,
        (*low, *members("t/high", 2, gpu=8, priority=10)),
        [gang("t/high", 2, priority=10, topology=required(RACK))],
    )
    result = run_cycle(snap, NOW)
    evicted = {e.pod for e in result.evictions}
    # r1 costs two priority-1 pods; r0 would cost the priority-5 one: r1 is freed.
    assert evicted == {"x/low-r1-h0", "x/low-r1-h1"}
    assert {_rack(r.node) for r in result.reservations} == {"r1"}
    assert result.explanations["t/high"].reason == Reason.PREEMPTING


def test_preemption_for_a_rack_when_the_cluster_has_room_but_no_rack_does():
    nodes = fleet("b0:r0=2,r1=2")
    low = [
        pod("x/low-0", gpu=8, node="r0-h0", started=NOW - 10),
        pod("x/low-1", gpu=8, node="r1-h0", started=NOW - 5),
    ]
    snap = world(
        nodes,
        (*low, *members("t/high", 2, gpu=8, priority=10)),
        [gang("t/high", 2, priority=10, topology=required(RACK))],
    )
    result = run_cycle(snap, NOW)
    assert len(result.evictions) == 1  # the youngest, x/low-1: its rack is then whole
    assert {e.pod for e in result.evictions} == {"x/low-1"}
    assert {_rack(r.node) for r in result.reservations} == {"r1"}


def test_reclaim_takes_victims_only_in_the_rack_it_frees():
    nodes = fleet("b0:r0=1,r1=1", cpu=32, gpu=4)
    gangs, pods = [], []
    for i in range(8):  # queue a holds every GPU, its gangs alternating racks
        key = f"ns/a{i}"
        gangs.append(gang(key, 1, queue="a", created=float(i), satisfied=True))
        pods.extend(members(key, 1, gpu=1, node=f"r{i % 2}-h0", started=float(i)))
    gangs.append(gang("ns/b0", 2, queue="b", created=100.0, topology=required(RACK)))
    pods.extend(members("ns/b0", 2, gpu=1))
    snap = with_queues(
        world(nodes, pods, gangs),
        queue("a", guarantee=amounts(gpu=4)),
        queue("b", guarantee=amounts(gpu=4)),
    )
    result = run_cycle(snap, NOW)
    # The youngest are a7 (r1), a6 (r0), a5 (r1): freeing one rack takes a7 and a5, not a6.
    assert sorted(e.gang for e in result.evictions) == ["ns/a5", "ns/a7"]
    assert {_rack(r.node) for r in result.reservations} == {"r1"}
    assert result.explanations["ns/b0"].reason == Reason.WAITING_FOR_RECLAIM


def test_a_preempting_gang_binds_in_its_rack_once_the_victims_are_gone():
    from scheduler_core.engine import apply_result

    nodes = fleet("b0:r0=2,r1=2")
    low = [
        pod("x/low-0", gpu=8, node="r0-h0", started=NOW - 10),
        pod("x/low-1", gpu=8, node="r1-h0", started=NOW - 5),
    ]
    snap = world(
        nodes,
        (*low, *members("t/high", 2, gpu=8, priority=10)),
        [gang("t/high", 2, priority=10, topology=required(RACK))],
    )
    first = run_cycle(snap, NOW)
    after = apply_result(snap, first, NOW)
    after = dataclasses.replace(after, pods=tuple(p for p in after.pods if not p.terminating))
    second = run_cycle(after, NOW + 10)
    assert {_rack(b.node) for b in second.binds if b.gang == "t/high"} == {"r1"}
    assert len(bound_of(second, "t/high")) == 2
