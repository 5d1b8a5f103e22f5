"""At most ``EngineConfig.preempt_depth`` units search for victims in one cycle; the next one that
would search becomes the head of the queue, says why, and preempts in a later cycle.

KAI-Scheduler bounds the same work with ``queueDepthPerAction`` (its
``pkg/scheduler/actions/preempt`` and ``reclaim`` tests run with a per-queue job depth)."""

import dataclasses

from scheduler_core.engine import EngineConfig, Reason, apply_result, run_cycle

from .world import NOW, gang, members, node, snapshot


def _two_urgent_gangs():
    """Two nodes full of priority-0 work; two priority-10 gangs, each needing one whole node."""
    low = [
        *members("batch/low-a", 1, cpu=4, node="n0", started=NOW - 10, priority=0),
        *members("batch/low-b", 1, cpu=4, node="n1", started=NOW - 20, priority=0),
    ]
    urgent = [
        *members("prod/first", 1, cpu=4, priority=10, created=1.0),
        *members("prod/second", 1, cpu=4, priority=10, created=2.0),
    ]
    gangs = [
        gang("batch/low-a", 1, satisfied=True, priority=0),
        gang("batch/low-b", 1, satisfied=True, priority=0),
        gang("prod/first", 1, priority=10, created=1.0),
        gang("prod/second", 1, priority=10, created=2.0),
    ]
    return snapshot((node("n0"), node("n1")), (*low, *urgent), gangs)


def _gone(world, result):
    """The next snapshot, the evicted pods gone (their kubelet stopped them)."""
    after = apply_result(world, result, NOW)
    evicted = {evict.pod for evict in result.evictions}
    return dataclasses.replace(after, pods=tuple(p for p in after.pods if p.key not in evicted))


def test_past_the_depth_the_next_preemptor_waits_at_the_head_and_says_why():
    world = _two_urgent_gangs()

    result = run_cycle(world, NOW, EngineConfig(preempt_depth=1))

    assert [evict.pod for evict in result.evictions] == ["batch/low-a-0"]  # the youngest
    assert result.explanations["prod/first"].reason == Reason.PREEMPTING
    second = result.explanations["prod/second"]
    assert second.reason == Reason.INSUFFICIENT_RESOURCES
    assert "it may preempt in a later cycle (1 units searched for victims in this one" in second.message
    assert second.details["preemption_deferred"] is True

    # The next cycle searches for it: it takes the other node's work.
    later = run_cycle(_gone(world, result), NOW + 1, EngineConfig(preempt_depth=1))
    assert [evict.pod for evict in later.evictions] == ["batch/low-b-0"]
    assert later.explanations["prod/second"].reason == Reason.PREEMPTING


def test_depth_zero_bounds_nothing():
    result = run_cycle(_two_urgent_gangs(), NOW, EngineConfig(preempt_depth=0))
    assert sorted(evict.pod for evict in result.evictions) == ["batch/low-a-0", "batch/low-b-0"]
    assert "preemption_deferred" not in result.explanations["prod/second"].details


def test_the_default_depth_leaves_a_few_preemptors_unbounded():
    result = run_cycle(_two_urgent_gangs(), NOW)
    assert len(result.evictions) == 2
