"""Strict rolls the attempt back; NonStrict keeps partial reservations and accumulates."""

import dataclasses

from scheduler_core.engine import GangMode, Reason, TransitionKind, apply_result, run_cycle

from .world import NOW, bound_of, gang, members, nodes, pod, snapshot


def world(mode: GangMode):
    busy = pod("other/busy", cpu=4, node="n2", started=0.0, duration=100.0)
    return snapshot(nodes(3), (busy, *members("team/job", 3, cpu=4)), [gang("team/job", 3, mode=mode)])


def test_strict_rolls_the_whole_attempt_back():
    result = run_cycle(world(GangMode.STRICT), NOW)
    assert result.binds == []
    assert result.reservations == []
    assert result.transitions_of("team/job") == [TransitionKind.WAIT_STARTED]


def test_non_strict_keeps_what_it_placed_and_completes_when_room_appears():
    first = run_cycle(world(GangMode.NON_STRICT), NOW)
    assert first.binds == []
    assert sorted(r.node for r in first.reservations) == ["n0", "n1"]
    assert first.explanations["team/job"].reason == Reason.INSUFFICIENT_RESOURCES
    later = apply_result(world(GangMode.NON_STRICT), first, NOW)
    # The busy pod finishes: the third member fits and the reserved two bind with it.
    later = dataclasses.replace(later, pods=tuple(p for p in later.pods if p.name != "busy"))
    second = run_cycle(later, NOW + 1)
    assert len(bound_of(second, "team/job")) == 3
    assert second.transitions_of("team/job") == [TransitionKind.SATISFIED]
