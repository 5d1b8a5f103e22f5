"""Requeue: a unit that failed behind the head of the queue waits for an event (``requeue.py``).

The cluster: four 4-CPU nodes, each with a pod of another scheduler that never ends and may not
be preempted (3 CPUs on each), and ``ml/head``, three 4-CPU members at priority 1, first in the
queue: it fits only once three of those pods end, and is the head. On an empty cluster it would
take n0, n1 and n2, so what comes after it may use n3 only. Cycles follow each other a fraction
of a second apart, within the first backoff (1 s), and each unit's attempts are counted.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from scheduler_core.engine import Carry, CycleResult, EngineConfig, Reason, Snapshot, apply_result, run_cycle
from scheduler_core.engine.actions import allocate as allocate_module

from . import world
from .queues.qworld import amounts, queue, with_queues
from .world import NOW

HEAD = "ml/head"


def cluster(*, n3_used: float = 3, pods=(), gangs=()) -> Snapshot:
    others = [
        world.pod(f"other/f{i}", cpu=n3_used if i == 3 else 3, node=f"n{i}", started=0.0, preemptible=False)
        for i in range(4)
    ]
    head = world.members(HEAD, 3, cpu=4, priority=1)
    return world.snapshot(world.nodes(4), [*others, *head, *pods], [world.gang(HEAD, 3, priority=1), *gangs])


class Cycles:
    """Cycles with one carry kept across them, each result applied to the next snapshot."""

    def __init__(self, snapshot: Snapshot, config: EngineConfig | None = None) -> None:
        self.snapshot = snapshot
        self.config = config or EngineConfig()
        self.carry = Carry()

    def run(self, at: float, change=None) -> CycleResult:
        if change is not None:
            self.snapshot = change(self.snapshot)
        result = run_cycle(self.snapshot, NOW + at, self.config, self.carry)
        self.snapshot = apply_result(self.snapshot, result, NOW + at)
        return result


@pytest.fixture
def tried(monkeypatch) -> Counter:
    """How many times allocate tried each unit (its dry runs left out): a trial, or a failure
    by counting (``actions/counted.py``)."""
    counts: Counter = Counter()
    real, counted = allocate_module.attempt, allocate_module.counted_failure

    def counting(session, unit, limit=None, *, explain=True):
        if explain:
            counts[unit.key] += 1
        return real(session, unit, limit, explain=explain)

    def counting_failure(session, unit, limit):
        found = counted(session, unit, limit)
        counts[unit.key] += found is not None
        return found

    monkeypatch.setattr(allocate_module, "attempt", counting)
    monkeypatch.setattr(allocate_module, "counted_failure", counting_failure)
    return counts


def without(*keys: str):
    """A change: the pods ``keys`` are gone (ended, deleted)."""
    return lambda snapshot: dataclasses.replace(
        snapshot, pods=tuple(pod for pod in snapshot.pods if pod.key not in keys)
    )


def adding(*pods):
    return lambda snapshot: dataclasses.replace(snapshot, pods=snapshot.pods + tuple(pods))


SMALL = world.gang("ml/small", 2)
SMALL_PODS = world.members("ml/small", 2, cpu=1.5)


def test_a_gang_short_of_room_waits_for_a_pod_to_end_then_binds(tried):
    """kube-scheduler: noderesources ``Test_isSchedulableAfterPodChange`` ("queue-on-other-pod-
    deleted") and scheduling_queue_test.go ``TestPriorityQueue_MoveAllToActiveOrBackoffQueue``:
    a pod rejected for resources goes back to the queue when an assigned pod is deleted."""
    cycles = Cycles(cluster(pods=SMALL_PODS, gangs=[SMALL]))
    first = cycles.run(0.0)
    assert first.explanations["ml/small"].reason == Reason.INSUFFICIENT_RESOURCES
    assert tried["ml/small"] == 1 and first.parked == 0

    second = cycles.run(0.5)
    assert second.parked == 1 and tried["ml/small"] == 1
    assert "ml/small" not in second.explanations and not second.binds

    third = cycles.run(0.75, without("other/f3"))
    assert tried["ml/small"] == 2
    assert world.bound(third) == {"ml/small-0": "n3", "ml/small-1": "n3"}


def test_a_pending_pod_deleted_wakes_no_gang_short_of_room(tried):
    """kube-scheduler: noderesources ``Test_isSchedulableAfterPodChange``
    ("skip-queue-on-unscheduled-pod-deleted"): a pod that held no room frees none."""
    idle = world.pod("other/idle", cpu=8)
    cycles = Cycles(cluster(pods=[*SMALL_PODS, idle], gangs=[SMALL]))
    cycles.run(0.0)
    assert cycles.run(0.5, without("other/idle")).parked == 1
    assert tried["ml/small"] == 1


def test_a_gang_its_filters_keep_off_every_node_waits_for_a_node_change(tried):
    """kube-scheduler: nodeaffinity ``Test_isSchedulableAfterNodeChange``: a pod whose node
    selector no node matches is queued again when a node's labels come to match, not when a pod
    ends."""
    picky = world.gang("ml/picky", 2)
    pods = world.members("ml/picky", 2, cpu=1.5, node_selector={"gpu-model": "h100"})
    cycles = Cycles(cluster(pods=pods, gangs=[picky]))
    assert cycles.run(0.0).explanations["ml/picky"].reason == Reason.NO_FEASIBLE_NODES
    assert cycles.run(0.5).parked == 1
    assert cycles.run(0.75, without("other/f3")).parked == 1  # room on n3, but not a node it may use
    assert tried["ml/picky"] == 1

    def relabel(snapshot: Snapshot) -> Snapshot:
        nodes = list(snapshot.nodes)
        nodes[3] = dataclasses.replace(nodes[3], labels={"gpu-model": "h100"})
        return dataclasses.replace(snapshot, nodes=tuple(nodes))

    last = cycles.run(0.9, relabel)
    assert tried["ml/picky"] == 2
    assert world.bound(last) == {"ml/picky-0": "n3", "ml/picky-1": "n3"}


def test_a_gang_at_its_queue_max_waits_for_the_queue_usage_to_fall(tried):
    """Queue b (max 2 CPUs) runs a 1-CPU pod on n3, so its 2 x 1-CPU gang is held at the max;
    it is tried again when that pod ends, and binds. Its first trial placed a member, which
    started its timeout clock: that change of its own wakes it once more."""
    gang = world.gang("b/job", 2, queue="b")
    running = world.pod("b/run", cpu=1, node="n3", started=0.0, queue="b")
    snapshot = cluster(n3_used=2, pods=[running, *world.members("b/job", 2, cpu=1)], gangs=[gang])
    head = dataclasses.replace(snapshot.gangs[0], queue="a")
    snapshot = dataclasses.replace(snapshot, gangs=(head, *snapshot.gangs[1:]))
    cycles = Cycles(with_queues(snapshot, queue("a"), queue("b", max=amounts(cpu=2))))
    assert cycles.run(0.0).explanations["b/job"].reason == Reason.QUEUE_MAX
    assert cycles.run(0.25).parked == 0 and tried["b/job"] == 2
    assert cycles.run(0.5).parked == 1 and tried["b/job"] == 2

    last = cycles.run(0.75, without("b/run"))
    assert tried["b/job"] == 3
    assert world.bound(last) == {"b/job-0": "n3", "b/job-1": "n3"}


def test_a_gang_waiting_for_members_wakes_when_one_joins(tried):
    """Not when a pod ends: only its own members can complete it."""
    gang = world.gang("ml/late", 3)
    cycles = Cycles(cluster(pods=world.members("ml/late", 2, cpu=0.25), gangs=[gang]))
    assert cycles.run(0.0).explanations["ml/late"].reason == Reason.WAITING_FOR_MEMBERS
    assert cycles.run(0.5, without("other/f0")).parked == 1
    assert tried["ml/late"] == 1

    last = cycles.run(0.75, adding(*world.members("ml/late", 1, cpu=0.25, start=2)))
    assert tried["ml/late"] == 2
    assert sorted(world.bound(last)) == ["ml/late-0", "ml/late-1", "ml/late-2"]


@pytest.mark.parametrize(
    ("most", "schedule"),
    [
        # 1 s after the first failure, 2 s after the second, 4 s after the third...
        (30.0, [(0, True), (0.5, False), (1, True), (2.5, False), (3, True), (6.9, False), (7, True)]),
        # ... at most requeue_backoff_max_s
        (3.0, [(0, True), (1, True), (3, True), (5.9, False), (6, True), (8.9, False), (9, True)]),
    ],
)
def test_a_parked_gang_is_tried_again_after_its_backoff(tried, most, schedule):
    """kube-scheduler: scheduling_queue_test.go ``TestBackOffFlow`` (1 s doubling up to a
    maximum) and ``TestHighPriorityFlushUnschedulablePodsLeftover`` (an unschedulable pod is
    tried again after a while with no event)."""
    cycles = Cycles(cluster(pods=SMALL_PODS, gangs=[SMALL]), EngineConfig(requeue_backoff_max_s=most))
    for at, expected in schedule:
        before = tried["ml/small"]
        result = cycles.run(at)
        assert (tried["ml/small"] > before) == expected, f"at +{at} s"
        assert result.parked == (0 if expected else 1)


def test_no_backoff_tries_every_unit_in_every_cycle(tried):
    cycles = Cycles(cluster(pods=SMALL_PODS, gangs=[SMALL]), EngineConfig(requeue_backoff_max_s=0))
    for at in (0.0, 0.25, 0.5):
        assert cycles.run(at).parked == 0
    assert tried["ml/small"] == 3


def test_the_head_and_what_comes_before_it_are_always_tried(tried):
    """A unit reached before any head is set is tried (here one waiting for members, ahead of
    the head by priority), and so is the head: it may preempt and plans the backfill."""
    early = world.gang("ml/early", 2, priority=2)
    cycles = Cycles(
        cluster(pods=[*SMALL_PODS, *world.members("ml/early", 1, priority=2)], gangs=[SMALL, early])
    )
    for at in (0.0, 0.25, 0.5, 0.75):
        result = cycles.run(at)
    assert tried[HEAD] == 4 and tried["ml/early"] == 4
    assert tried["ml/small"] == 1 and result.parked == 1
    assert result.explanations[HEAD].reason == Reason.INSUFFICIENT_RESOURCES


def test_a_parked_gang_keeps_the_explanation_last_computed_with_its_time():
    cycles = Cycles(cluster(pods=SMALL_PODS, gangs=[SMALL]))
    explanation = cycles.run(0.0).explanations["ml/small"]
    assert "ml/small" not in cycles.run(0.5).explanations
    assert cycles.carry.requeue.explained("ml/small") == (explanation, NOW)
    third = cycles.run(0.75, without("other/f0"))  # tried again: a pod ended (n0 is the head's)
    assert cycles.carry.requeue.explained("ml/small") == (third.explanations["ml/small"], NOW + 0.75)


def test_a_cycle_without_a_carry_tries_every_unit(tried):
    snapshot = cluster(pods=SMALL_PODS, gangs=[SMALL])
    for at in (0.0, 0.5):
        assert run_cycle(snapshot, NOW + at).parked == 0
    assert tried["ml/small"] == 2


def test_a_head_that_leaves_more_spare_capacity_wakes_the_units_behind_it(tried):
    """The head's members are recreated smaller: nothing frees room on the nodes, but the head
    will need less of n0-n2 when it starts, and a gang behind it may now backfill there."""
    n3_full = cluster(n3_used=4)
    others = tuple(
        dataclasses.replace(pod, requests=world.requests(cpu=1)) if pod.key != "other/f3" else pod
        for pod in n3_full.pods
        if pod.gang is None
    )
    gang = world.gang("ml/tiny", 2)
    snapshot = dataclasses.replace(
        n3_full,
        pods=others + n3_full.pods[4:] + world.members("ml/tiny", 2, cpu=0.5),
        gangs=n3_full.gangs + (gang,),
    )
    cycles = Cycles(snapshot)
    assert cycles.run(0.0).explanations["ml/tiny"].reason == Reason.BLOCKED_BEHIND
    assert cycles.run(0.5).parked == 1

    def smaller_head(snapshot: Snapshot) -> Snapshot:
        pods = tuple(p for p in snapshot.pods if p.gang != HEAD) + world.members(HEAD, 3, cpu=3.5, priority=1)
        return dataclasses.replace(snapshot, pods=pods)

    last = cycles.run(0.75, smaller_head)
    assert tried["ml/tiny"] == 2
    assert sorted(world.bound(last).values()) == ["n0", "n1"]


def test_room_freed_by_preemption_ahead_of_the_head_wakes_the_units_behind_it(tried):
    """A priority-5 pod arrives and preempts a priority-0 pod on n3 before the head is reached:
    the gang parked behind the head is tried again in that cycle. The evicted pod holds n3 until
    it is gone, so the gang binds in the cycle after that, in the room the preemptor leaves.
    (The gang's first trial placed a member and started its clock, which wakes it once.)"""
    victim = world.pod("other/v", cpu=3, node="n3", started=0.0)
    base = cluster()
    pods = tuple(p for p in base.pods if p.key != "other/f3") + (victim, *world.members("ml/two", 2, cpu=1))
    cycles = Cycles(dataclasses.replace(base, pods=pods, gangs=base.gangs + (world.gang("ml/two", 2),)))
    cycles.run(0.0)
    cycles.run(0.25)
    assert cycles.run(0.5).parked == 1

    last = cycles.run(0.75, adding(world.pod("other/urgent", cpu=2, priority=5)))
    assert [evict.pod for evict in last.evictions] == ["other/v"]
    assert tried["ml/two"] == 3
    assert world.bound(last) == {}

    gone = cycles.run(1.0, without("other/v"))
    assert world.bound(gone) == {"other/urgent": "n3", "ml/two-0": "n3", "ml/two-1": "n3"}
