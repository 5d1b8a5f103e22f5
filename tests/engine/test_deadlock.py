"""JobA/JobB: two NonStrict gangs each holding half of what the other needs never wait forever."""

import dataclasses

from scheduler_core.engine import EngineConfig, GangMode, GangPhase, TransitionKind, apply_result, run_cycle

from .world import NOW, bound_of, gang, members, nodes, snapshot


def job_a_job_b():
    """6 slots; JobA and JobB need 4 each and each already holds 3 (the coscheduling article)."""
    cluster = nodes(3, cpu=2)
    held_a = [
        dataclasses.replace(p, reserved_node=f"n{i // 2}") for i, p in enumerate(members("ns/job-a", 3))
    ]
    held_b = [
        dataclasses.replace(p, reserved_node=f"n{(i + 3) // 2}") for i, p in enumerate(members("ns/job-b", 3))
    ]
    pods = (*held_a, *members("ns/job-a", 1, start=3), *held_b, *members("ns/job-b", 1, start=3))
    gangs = [
        gang("ns/job-a", 4, mode=GangMode.NON_STRICT, created=1.0, wait_started=NOW - 5),
        gang("ns/job-b", 4, mode=GangMode.NON_STRICT, created=2.0, wait_started=NOW - 5),
    ]
    return snapshot(cluster, pods, gangs)


def test_the_younger_gang_gives_way_and_the_older_completes_in_the_same_cycle():
    result = run_cycle(job_a_job_b(), NOW)
    assert len(bound_of(result, "ns/job-a")) == 4
    assert bound_of(result, "ns/job-b") == []
    assert {r.pod for r in result.releases} == {"ns/job-b-0", "ns/job-b-1", "ns/job-b-2"}
    # Its clock restarts: it was robbed, not slow; it reserves the two slots JobA left at once.
    assert result.transitions_of("ns/job-b") == [TransitionKind.DEADLOCK_BROKEN, TransitionKind.WAIT_STARTED]
    assert sorted(r.pod for r in result.reservations) == ["ns/job-b-0", "ns/job-b-1"]
    assert "ns/job-a" in result.releases[0].reason


def test_the_higher_priority_gang_wins_even_when_younger():
    world = job_a_job_b()
    world = dataclasses.replace(
        world, gangs=(world.gangs[0], dataclasses.replace(world.gangs[1], priority=10))
    )
    result = run_cycle(world, NOW)
    assert len(bound_of(result, "ns/job-b")) == 4
    assert bound_of(result, "ns/job-a") == []


def test_the_loser_completes_after_the_winner():
    world = job_a_job_b()
    first = run_cycle(world, NOW)
    world = apply_result(world, first, NOW)
    world = dataclasses.replace(world, pods=tuple(p for p in world.pods if p.gang != "ns/job-a"))
    second = run_cycle(world, NOW + 10)
    assert len(bound_of(second, "ns/job-b")) == 4


def test_without_deadlock_resolution_both_wait_forever():
    world = job_a_job_b()
    config = EngineConfig(deadlock_resolution=False)
    for i in range(3):
        result = run_cycle(world, NOW + i, config)
        assert result.binds == []
        world = apply_result(world, result, NOW + i)


def test_a_loser_that_cannot_reserve_again_is_pending_with_no_clock():
    """Two 4-CPU nodes. JobA (6 x 1 CPU) holds 4 on n0; JobB (2 x 3 CPU) holds one on n1. JobB
    gives way; once JobA has completed on n1, no 3-CPU slot is left, so JobB holds nothing."""
    cluster = nodes(2, cpu=4)
    held_a = tuple(dataclasses.replace(p, reserved_node="n0") for p in members("ns/job-a", 4))
    held_b = tuple(dataclasses.replace(p, reserved_node="n1") for p in members("ns/job-b", 1, cpu=3))
    pods = (*held_a, *members("ns/job-a", 2, start=4), *held_b, *members("ns/job-b", 1, cpu=3, start=1))
    holding = {"mode": GangMode.NON_STRICT, "wait_started": NOW - 5, "phase": GangPhase.SCHEDULING}
    gangs = [gang("ns/job-a", 6, created=1.0, **holding), gang("ns/job-b", 2, created=2.0, **holding)]
    world = snapshot(cluster, pods, gangs)
    result = run_cycle(world, NOW)
    assert len(bound_of(result, "ns/job-a")) == 6
    assert result.transitions_of("ns/job-b") == [TransitionKind.DEADLOCK_BROKEN]
    loser = next(g for g in apply_result(world, result, NOW).gangs if g.key == "ns/job-b")
    assert (loser.phase, loser.wait_started, loser.satisfied) == (GangPhase.PENDING, None, False)
