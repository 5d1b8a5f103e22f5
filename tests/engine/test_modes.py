"""Strict rolls the attempt back; NonStrict keeps partial reservations and accumulates."""

import dataclasses

from scheduler_core.engine import GangMode, Reason, TransitionKind, apply_result, run_cycle
from scheduler_core.engine.config import EngineConfig, HeadOfLine, permit_quorum

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


def permit_world(free_cpu: int):
    """One 10-CPU node with ``free_cpu`` free, and a Strict gang of 10 one-CPU members."""
    busy = pod("other/busy", cpu=10 - free_cpu, node="n0", started=0.0, duration=100.0)
    return snapshot(nodes(1, cpu=10), (busy, *members("team/job", 10, cpu=1)), [gang("team/job", 10)])


HOLD = EngineConfig(head_of_line=HeadOfLine.NONE, permit_hold=0.1)


def test_permit_hold_keeps_a_strict_gang_missing_at_most_its_share_of_min_member():
    result = run_cycle(permit_world(9), NOW, HOLD)
    assert result.binds == []
    assert len(result.reservations) == 9
    assert all("waiting at Permit" in r.reason for r in result.reservations)
    # The tenth member fits once the busy pod is gone: the nine held bind with it.
    later = apply_result(permit_world(9), result, NOW)
    later = dataclasses.replace(later, pods=tuple(p for p in later.pods if p.name != "busy"))
    assert len(bound_of(run_cycle(later, NOW + 1, HOLD), "team/job")) == 10


def test_permit_hold_rolls_back_a_gang_further_from_its_quorum_and_is_off_by_default():
    assert run_cycle(permit_world(8), NOW, HOLD).reservations == []  # 2 of 10 missing: 20%
    assert run_cycle(permit_world(9), NOW, EngineConfig(head_of_line=HeadOfLine.NONE)).reservations == []


def test_permit_quorum_counts_like_the_plugins_float_comparison():
    assert [permit_quorum(m, 0.1) for m in (1, 9, 10, 19, 20, 30, 256)] == [1, 9, 9, 18, 18, 27, 231]
    assert permit_quorum(10, 0.0) == 10
