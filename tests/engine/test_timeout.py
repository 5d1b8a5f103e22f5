"""Timeouts count from the first placed member; Hard stops the gang, Soft falls back."""

import dataclasses

from scheduler_core.engine import (
    GangMode,
    GangPhase,
    Reason,
    TimeoutStyle,
    TransitionKind,
    apply_result,
    run_cycle,
    sweep_timeouts,
)

from .world import NOW, bound_of, gang, members, nodes, pod, snapshot


def world(style: TimeoutStyle, mode: GangMode = GangMode.NON_STRICT):
    busy = pod("other/busy", cpu=4, node="n2", started=0.0)  # never ends on its own
    return snapshot(
        nodes(3),
        (busy, *members("team/job", 3, cpu=4)),
        [gang("team/job", 3, mode=mode, style=style, wait_seconds=60.0)],
    )


def run(world, start: float, cycles: int, step: float):
    results = []
    for i in range(cycles):
        now = start + i * step
        result = run_cycle(world, now)
        world = apply_result(world, result, now)
        results.append(result)
    return world, results


def test_the_clock_starts_at_the_first_placed_member_not_at_creation():
    state, results = run(world(TimeoutStyle.HARD), NOW, 1, 0)
    assert results[0].transitions_of("team/job") == [TransitionKind.WAIT_STARTED]
    assert state.gangs[0].wait_started == NOW


def test_hard_timeout_releases_everything_and_stops_scheduling_until_retried():
    state, results = run(world(TimeoutStyle.HARD), NOW, 3, 40.0)  # t = 0, 40, 80 s after start
    last = results[-1]
    assert last.transitions_of("team/job") == [TransitionKind.TIMED_OUT]
    assert sorted(release.pod for release in last.releases) == ["team/job-0", "team/job-1"]
    assert last.explanations["team/job"].reason == Reason.TIMED_OUT
    assert state.gangs[0].phase == GangPhase.TIMED_OUT
    assert all(p.reserved_node is None for p in state.pods)
    # Room appears, but a timed-out gang waits for an operator.
    freed = dataclasses.replace(state, pods=tuple(p for p in state.pods if p.name != "busy"))
    assert run_cycle(freed, NOW + 200).binds == []
    retried = dataclasses.replace(
        freed, gangs=(dataclasses.replace(freed.gangs[0], phase=GangPhase.PENDING, wait_started=None),)
    )
    assert len(bound_of(run_cycle(retried, NOW + 201), "team/job")) == 3


def test_soft_timeout_falls_back_to_pod_at_a_time():
    state, results = run(world(TimeoutStyle.SOFT), NOW, 3, 40.0)
    last = results[-1]
    assert last.transitions_of("team/job") == [TransitionKind.FELL_BACK]
    # Released at the timeout, then placed one by one in the same cycle: two of three start.
    assert len(bound_of(last, "team/job")) == 2
    assert state.gangs[0].fallen_back


def test_the_sweep_alone_times_out_without_placing_anything():
    state, _ = run(world(TimeoutStyle.HARD), NOW, 1, 0)
    result = sweep_timeouts(state, NOW + 61)
    assert result.transitions_of("team/job") == [TransitionKind.TIMED_OUT]
    assert result.binds == []


def test_a_gang_without_wait_time_waits_forever():
    no_timeout = dataclasses.replace(
        world(TimeoutStyle.HARD), gangs=(gang("team/job", 3, wait_seconds=None),)
    )
    _, results = run(no_timeout, NOW, 3, 1_000.0)
    assert all(TransitionKind.TIMED_OUT not in r.transitions_of("team/job") for r in results)
