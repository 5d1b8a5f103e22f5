"""Preemption of gangs running at their minimum: lowest priority first, whole gangs only, and
only when it makes the preemptor fit (elastic members: ``test_preempt_elastic.py``)."""

import dataclasses

from scheduler_core.engine import Reason, TransitionKind, apply_result, run_cycle

from .world import NOW, bound_of, gang, members, node, nodes, pod, snapshot


def running(key: str, count: int, node: str, cpu: float, priority: int, **gang_kwargs):
    pods = members(key, count, cpu=cpu, node=node, started=NOW - 10, priority=priority)
    return pods, gang(key, count, satisfied=True, priority=priority, **gang_kwargs)


def world(high_members: int = 2, high_cpu: float = 2, low_kwargs=None, mid_priority: int = 1):
    low_pods, low = running("batch/low", 2, "n0", cpu=2, priority=0, **(low_kwargs or {}))
    mid_pods, mid = running("batch/mid", 1, "n1", cpu=4, priority=mid_priority)
    high = members("prod/high", high_members, cpu=high_cpu, priority=10)
    return snapshot(nodes(2), (*low_pods, *mid_pods, *high), [low, mid, gang("prod/high", high_members)])


def evicted(result) -> set[str]:
    return {evict.pod for evict in result.evictions}


def test_the_cheapest_lower_priority_gang_is_evicted_whole_and_the_preemptor_nominated():
    result = run_cycle(world(), NOW)
    assert evicted(result) == {"batch/low-0", "batch/low-1"}
    assert result.transitions_of("batch/low") == [TransitionKind.PREEMPTED]
    assert sorted((r.pod, r.node) for r in result.reservations) == [
        ("prod/high-0", "n0"),
        ("prod/high-1", "n0"),
    ]
    assert result.explanations["prod/high"].reason == Reason.PREEMPTING


def test_a_gang_is_never_half_evicted_even_when_one_pod_would_do():
    result = run_cycle(world(high_members=1, high_cpu=2), NOW)
    assert evicted(result) == {"batch/low-0", "batch/low-1"}


def test_a_non_preemptible_gang_is_never_a_victim():
    result = run_cycle(world(low_kwargs={"preemptible": False}), NOW)
    assert evicted(result) == {"batch/mid-0"}


def test_nothing_is_evicted_unless_the_eviction_makes_the_preemptor_fit():
    # Only batch/low is lower priority than prod/high, and its node alone cannot take 2 x 4 CPU.
    result = run_cycle(world(high_cpu=4, mid_priority=20), NOW)
    assert result.evictions == []
    assert result.explanations["prod/high"].reason == Reason.INSUFFICIENT_RESOURCES


def test_victims_not_needed_after_all_are_given_back():
    small = pod("batch/small", cpu=1, node="n0", started=NOW - 5, priority=0)
    pinned = pod("sys/pinned", cpu=3, node="n0", started=NOW - 5, priority=0, preemptible=False)
    big = pod("batch/big", cpu=4, node="n1", started=NOW - 5, priority=1)
    world_ = snapshot(
        nodes(2), (small, pinned, big, *members("prod/high", 1, cpu=4, priority=10)), [gang("prod/high", 1)]
    )
    result = run_cycle(world_, NOW)
    assert evicted(result) == {"batch/big"}


def test_the_preemptor_binds_once_its_victims_are_gone():
    state = world()
    first = run_cycle(state, NOW)
    state = apply_result(state, first, NOW)
    # Evicted members are pending again (their gang is requeued whole); the preemptor goes first.
    second = run_cycle(state, NOW + 1)
    assert bound_of(second, "prod/high") == ["prod/high-0", "prod/high-1"]
    assert bound_of(second, "batch/low") == []


def test_a_lone_preemptor_binds_on_its_nomination_once_its_victim_is_gone():
    """A pod of no gang evicts a lower-priority pod and is nominated on its node; in the next
    cycle it binds there (its own reservation used to count against it: it waited forever)."""
    low = pod("batch/low", cpu=4, node="n0", started=NOW - 10, priority=0)
    high = pod("prod/high", cpu=4, priority=10)
    state = snapshot(nodes(1), (low, high), [])
    first = run_cycle(state, NOW)
    assert evicted(first) == {"batch/low"} and [(r.pod, r.node) for r in first.reservations] == [
        ("prod/high", "n0")
    ]
    state = apply_result(state, first, NOW)
    state = dataclasses.replace(state, pods=tuple(p for p in state.pods if p.key != "batch/low"))  # deleted

    second = run_cycle(state, NOW + 1)

    assert [(b.pod, b.node) for b in second.binds] == [("prod/high", "n0")]


def test_equal_priority_is_never_preempted():
    state = world()
    state = dataclasses.replace(
        state,
        pods=tuple(dataclasses.replace(p, priority=10) for p in state.pods),
        gangs=tuple(dataclasses.replace(g, priority=10) for g in state.gangs),
    )
    assert run_cycle(state, NOW).evictions == []


def test_a_pending_replacement_of_a_preempted_gang_waits_for_its_whole_gang():
    state = world()
    replacement = members("batch/low", 1, start=2, cpu=0.5, priority=0)
    spare = node("spare", cpu=1)  # room the replacement could take, were it an ordinary pod
    state = dataclasses.replace(state, nodes=(*state.nodes, spare), pods=(*state.pods, *replacement))
    result = run_cycle(state, NOW)
    assert evicted(result) == {"batch/low-0", "batch/low-1"}
    assert bound_of(result, "batch/low") == []
