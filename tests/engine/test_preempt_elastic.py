"""Preemption takes only what the preemptor's minimum needs, elastic members first.

Elastic members are the running members of a gang above its min_member; they go before any gang
is taken whole, and a victim gang keeps at least min_member running or loses all of them.
"""

import dataclasses

from scheduler_core.engine import Reason, TransitionKind, apply_result, run_cycle

from .world import NOW, bound_of, gang, members, node, pod, snapshot


def started(pods, first: float = NOW - 100):
    """The pods running on their node, the later ones started later (younger)."""
    return tuple(dataclasses.replace(p, started=first + i) for i, p in enumerate(pods))


def evicted(result) -> list[str]:
    return [evict.pod for evict in result.evictions]


def running_after(state, result, key: str) -> list[str]:
    after = apply_result(state, result, NOW)
    return sorted(p.key for p in after.pods if p.gang == key and p.node is not None)


def elastic_world(high_members: int = 2):
    """One node of 4 slots, a low-priority elastic job (minMember 1) running 4 pods."""
    low = started(members("batch/low", 4, cpu=1, node="n0", priority=0))
    high = members("prod/high", high_members, cpu=1, priority=10)
    gangs = [gang("batch/low", 1, satisfied=True, priority=0), gang("prod/high", 2, priority=10)]
    return snapshot([node("n0", cpu=4)], (*low, *high), gangs)


def test_a_two_slot_gang_evicts_exactly_two_youngest_members_and_leaves_two_plus_two_running():
    """A gang that needs 2 slots takes 2 elastic members, not the whole elastic job."""
    state = elastic_world()
    first = run_cycle(state, NOW)
    assert evicted(first) == ["batch/low-3", "batch/low-2"]  # the youngest two
    assert first.transitions_of("batch/low") == []  # not preempted: it keeps its minimum
    assert all("elastic member above minMember 1 of gang batch/low" in e.reason for e in first.evictions)
    explanation = first.explanations["prod/high"]
    assert explanation.reason == Reason.PREEMPTING
    assert (
        "batch/low-3, batch/low-2 (elastic members above minMember 1 of gang batch/low" in explanation.message
    )
    assert explanation.details["taken"] == [
        {"kind": "elastic", "gang": "batch/low", "priority": 0, "pods": ["batch/low-3", "batch/low-2"]}
    ]
    state = apply_result(state, first, NOW)
    second = run_cycle(state, NOW + 1)
    assert bound_of(second, "prod/high") == ["prod/high-0", "prod/high-1"]
    after = apply_result(state, second, NOW + 1)
    running = sorted(p.key for p in after.pods if p.node is not None)
    assert running == ["batch/low-0", "batch/low-1", "prod/high-0", "prod/high-1"]


def test_members_above_the_preemptors_minimum_never_preempt():
    # prod/high has 4 members but needs 2: it takes 2 and its 2 extras wait for free room.
    state = elastic_world(high_members=4)
    first = run_cycle(state, NOW)
    assert evicted(first) == ["batch/low-3", "batch/low-2"]
    assert sorted(r.pod for r in first.reservations) == ["prod/high-0", "prod/high-1"]
    assert first.explanations["prod/high"].details["nominated"] == 2
    now = NOW
    for _ in range(3):  # the satisfied gang's extras are ordinary pods now; they never evict
        state = apply_result(state, run_cycle(state, now), now)
        now += 1
        assert run_cycle(state, now).evictions == []
    running = sorted(p.key for p in state.pods if p.node is not None)
    assert running == ["batch/low-0", "batch/low-1", "prod/high-0", "prod/high-1"]


def test_a_missing_member_of_a_running_gang_below_its_minimum_may_still_preempt():
    # prod/high runs 1 of its minimum 2: its pending replacement is needed, not an extra.
    low = started(members("batch/low", 3, cpu=1, node="n0", priority=0))  # 3 + 1 on 4 slots
    high = (
        *members("prod/high", 1, cpu=1, node="n0", started=NOW - 5, priority=10),
        *members("prod/high", 1, start=1, cpu=1, priority=10),  # its replacement, pending
    )
    gangs = [gang("batch/low", 1, satisfied=True, priority=0), gang("prod/high", 2, satisfied=True)]
    result = run_cycle(snapshot([node("n0", cpu=4)], (*low, *high), gangs), NOW)
    assert evicted(result) == ["batch/low-2"]


def test_a_victim_gang_keeps_its_minimum_or_loses_every_member():
    # batch/low needs 3 of its 4: one elastic member is not enough room for 2, so it goes whole.
    low = started(members("batch/low", 4, cpu=1, node="n0", priority=0))
    high = members("prod/high", 2, cpu=1, priority=10)
    gangs = [gang("batch/low", 3, satisfied=True, priority=0), gang("prod/high", 2)]
    state = snapshot([node("n0", cpu=4)], (*low, *high), gangs)
    result = run_cycle(state, NOW)
    assert sorted(evicted(result)) == ["batch/low-0", "batch/low-1", "batch/low-2", "batch/low-3"]
    assert result.transitions_of("batch/low") == [TransitionKind.PREEMPTED]
    assert all("whole gang batch/low" in e.reason for e in result.evictions)
    transition = next(t for t in result.transitions if t.gang == "batch/low")
    assert "4 members: batch/low-0, batch/low-1, batch/low-2, batch/low-3" in transition.reason
    assert result.explanations["prod/high"].details["taken"][0]["kind"] == "whole"


def test_elastic_members_go_before_any_whole_gang_even_of_lower_priority():
    elastic = started(members("batch/elastic", 3, cpu=1, node="n0", priority=1))
    whole = members("batch/whole", 1, cpu=1, node="n0", started=NOW - 1, priority=0)
    high = members("prod/high", 2, cpu=1, priority=10)
    gangs = [
        gang("batch/elastic", 1, satisfied=True, priority=1),
        gang("batch/whole", 1, satisfied=True, priority=0),
        gang("prod/high", 2),
    ]
    result = run_cycle(snapshot([node("n0", cpu=4)], (*elastic, *whole, *high), gangs), NOW)
    assert evicted(result) == ["batch/elastic-2", "batch/elastic-1"]


def test_elastic_members_keep_the_victims_min_resources():
    # minMember 1 but minResources 3 CPUs: only one of the four 1-CPU members is elastic.
    low = started(members("batch/low", 4, cpu=1, node="n0", priority=0))
    high = members("prod/high", 2, cpu=1, priority=10)
    gangs = [
        gang("batch/low", 1, min_resources={"cpu": 3000}, satisfied=True, priority=0),
        gang("prod/high", 2),
    ]
    result = run_cycle(snapshot([node("n0", cpu=4)], (*low, *high), gangs), NOW)
    assert sorted(evicted(result)) == [f"batch/low-{i}" for i in range(4)]  # one is not enough
    one = snapshot([node("n0", cpu=4)], (*low, high[0]), [gangs[0], gang("prod/high", 1)])
    single = run_cycle(one, NOW)
    assert evicted(single) == ["batch/low-3"]


def test_the_preemptor_is_nominated_for_its_min_resources_not_only_its_min_member():
    low = started(members("batch/low", 4, cpu=1, node="n0", priority=0))
    high = members("prod/high", 4, cpu=1, priority=10)
    gangs = [
        gang("batch/low", 1, satisfied=True, priority=0),
        gang("prod/high", 1, min_resources={"cpu": 3000}),
    ]
    result = run_cycle(snapshot([node("n0", cpu=4)], (*low, *high), gangs), NOW)
    assert evicted(result) == ["batch/low-3", "batch/low-2", "batch/low-1"]
    assert len(result.reservations) == 3


def test_a_lone_pod_is_a_whole_victim_after_every_elastic_member():
    elastic = started(members("batch/low", 2, cpu=1, node="n0", priority=0))
    lone = pod("web/lone", cpu=2, node="n0", started=NOW - 1, priority=0)
    high = members("prod/high", 2, cpu=1, priority=10)
    gangs = [gang("batch/low", 1, satisfied=True, priority=0), gang("prod/high", 2)]
    result = run_cycle(snapshot([node("n0", cpu=4)], (*elastic, lone, *high), gangs), NOW)
    # The elastic member frees 1 CPU; the lone pod (2 CPUs) is needed after all, and then the
    # elastic member is given back: it was not needed.
    assert evicted(result) == ["web/lone"]
    assert "lone pod" in result.evictions[0].reason
