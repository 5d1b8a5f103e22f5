"""EASY backfilling: small gangs start behind a blocked head only where they never delay it."""

import dataclasses

import pytest

from scheduler_core.engine import EngineConfig, HeadOfLine, Reason, apply_result, run_cycle

from .world import NOW, bound_of, gang, members, node, nodes, pod, snapshot

# These tests are about what may pass a blocked head, so the gangs queue in creation order
# (FIFO); least-work-first would put q/short ahead of the head (tests/engine/test_queue.py).
FIFO = EngineConfig(overtake_limit_s=0)


def world():
    """n0 is busy until NOW+100; the head needs both n0 and n1; small gangs queue behind it."""
    busy = pod("other/busy", cpu=4, node="n0", started=NOW - 50, duration=150.0)
    pods = (
        busy,
        *members("q/head", 2, cpu=4, duration=30.0),
        *members("q/long", 1, cpu=4, duration=500.0),
        *members("q/short", 1, cpu=4, duration=50.0),
        *members("q/unknown", 1, cpu=4),
    )
    gangs = [
        gang("q/head", 2, created=1.0),
        gang("q/long", 1, created=2.0),
        gang("q/short", 1, created=3.0),
        gang("q/unknown", 1, created=4.0),
    ]
    return snapshot(nodes(2, cpu=4), pods, gangs)


def finish(world, now):
    """What the kubelet does: pods whose declared duration has passed leave the cluster."""
    alive = tuple(
        p for p in world.pods if p.started is None or p.duration is None or p.started + p.duration > now
    )
    return dataclasses.replace(world, pods=alive)


def test_a_short_gang_backfills_and_a_long_one_does_not():
    result = run_cycle(world(), NOW, FIFO)
    assert bound_of(result, "q/short") == ["q/short-0"]
    assert bound_of(result, "q/long") == []
    assert bound_of(result, "q/head") == []
    assert result.explanations["q/long"].reason == Reason.BLOCKED_BEHIND
    assert "q/head" in result.explanations["q/long"].message
    assert bound_of(result, "q/unknown") == []  # q/short took the last room it could have used


def test_a_gang_with_no_duration_may_use_capacity_the_head_will_not_need():
    base = world()
    small = node("small", cpu=2)  # too small for a head member: the head never needs it
    state = dataclasses.replace(
        base,
        nodes=(*base.nodes, small),
        pods=(*base.pods, *members("q/anywhere", 1, cpu=2)),
        gangs=(*base.gangs, gang("q/anywhere", 1, created=5.0)),
    )
    result = run_cycle(state, NOW, FIFO)
    assert bound_of(result, "q/anywhere") == ["q/anywhere-0"]
    assert bound_of(result, "q/unknown") == []


@pytest.mark.parametrize("head_of_line", [HeadOfLine.RESERVE, HeadOfLine.BLOCK])
def test_backfilling_never_delays_the_head(head_of_line):
    config = dataclasses.replace(FIFO, head_of_line=head_of_line)
    state, started = world(), {}
    for now in (NOW, NOW + 50, NOW + 100, NOW + 150):
        state = finish(state, now)
        result = run_cycle(state, now, config)
        state = apply_result(state, result, now)
        for bind in result.binds:
            started.setdefault(bind.gang, now)
    assert started["q/head"] == NOW + 100  # the moment the busy pod ends, with or without backfill
    if head_of_line == HeadOfLine.RESERVE:
        assert started["q/short"] == NOW  # finished in the head's shadow
    else:
        assert started["q/short"] > started["q/head"]


def test_greedy_policy_lets_small_gangs_starve_the_head():
    config = dataclasses.replace(FIFO, head_of_line=HeadOfLine.NONE)
    result = run_cycle(world(), NOW, config)
    assert bound_of(result, "q/long") == ["q/long-0"]  # takes n1: the head now waits past NOW+100


def test_fifo_blocks_everything_behind_the_head():
    result = run_cycle(world(), NOW, dataclasses.replace(FIFO, head_of_line=HeadOfLine.BLOCK))
    assert result.binds == []
    assert result.explanations["q/short"].reason == Reason.BLOCKED_BEHIND


def test_a_gang_blocked_behind_a_newer_one_is_told_it_is_ahead_as_less_work():
    """Least work first: q/late (2 x 4 CPUs, 10 s) is the head though created after q/early."""
    pods = (
        pod("other/busy", cpu=4, node="n0", started=NOW - 50, duration=150.0),
        *members("q/early", 1, cpu=4, duration=5000.0),
        *members("q/late", 2, cpu=4, duration=10.0),
    )
    state = snapshot(
        nodes(2, cpu=4), pods, [gang("q/early", 1, created=1.0), gang("q/late", 2, created=31.0)]
    )
    result = run_cycle(state, NOW)
    assert result.binds == []
    early = result.explanations["q/early"]
    assert early.reason == Reason.BLOCKED_BEHIND
    assert early.message.endswith("has capacity reserved (ahead as less work, though created 30 s later)")
    assert early.details == {"head": "q/late", "head_created_later_s": 30.0}
    fifo = run_cycle(state, NOW, FIFO).explanations["q/late"]  # FIFO: q/early runs, q/late waits
    assert "ahead as less work" not in fifo.message
