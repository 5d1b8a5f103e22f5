"""Hand-made traces whose outcome under each policy is known by hand (see helpers.py)."""

import pytest

from scheduler_core.simulation.metrics import summarise

from .helpers import (
    JOB_A_JOB_B,
    LEAST_WORK,
    ONE_NODE,
    OVERTAKE_BOUND,
    PERMIT_FAR,
    PERMIT_NEAR,
    STARVATION,
    THREE_NODES,
    TWO_NODES,
    run,
    times,
)


@pytest.mark.parametrize("policy", ["pod", "nonstrict"])
def test_it_deadlocks_job_a_and_job_b_when_partial_gangs_hold_resources(policy):
    result = run(JOB_A_JOB_B, THREE_NODES, policy)
    outcome = times(result, JOB_A_JOB_B)
    assert outcome["A"] == (None, None) and outcome["B"] == (None, None)
    assert int(result.deadlocked.sum()) == 2
    assert result.stopped_by == "no event left"
    # A holds n0's 4 GPUs from t=20, B 6 GPUs from t=102, until the last event (R ends, t=1001).
    gpu = result.resources.index("nvidia.com/gpu")
    assert result.held_seconds[gpu] == pytest.approx(4 * (1001 - 20) + 6 * (1001 - 102))


def test_it_never_deadlocks_under_gangsched_and_backfills_b_before_a():
    result = run(JOB_A_JOB_B, THREE_NODES, "gangsched")
    outcome = times(result, JOB_A_JOB_B)
    assert int(result.deadlocked.sum()) == 0
    assert outcome["B"] == (102.0, 112.0)  # backfilled: it ends long before A can start
    assert outcome["A"] == (1001.0, 1011.0)  # as soon as R ends, as under FIFO
    assert result.held_seconds.sum() == 0


def test_fifo_gang_makes_b_wait_behind_a_while_coscheduling_lets_it_pass():
    fifo = times(run(JOB_A_JOB_B, THREE_NODES, "fifo-gang"), JOB_A_JOB_B)
    greedy = times(run(JOB_A_JOB_B, THREE_NODES, "coscheduling"), JOB_A_JOB_B)
    assert fifo["A"] == (1001.0, 1011.0) and fifo["B"] == (1011.0, 1021.0)
    assert greedy["B"] == (102.0, 112.0) and greedy["A"] == (1001.0, 1011.0)


def test_backfill_finishes_a_small_job_earlier_without_delaying_the_big_one():
    gangsched = times(run(STARVATION, ONE_NODE, "gangsched"), STARVATION)
    fifo = times(run(STARVATION, ONE_NODE, "fifo-gang"), STARVATION)
    assert gangsched["BIG"] == fifo["BIG"] == (100.0, 150.0)
    assert gangsched["S3"] == (3.0, 53.0)  # backfilled: ends before BIG's shadow time
    assert fifo["S3"] == (150.0, 200.0)
    assert gangsched["S2"] == (150.0, 350.0)  # too long to backfill: waits behind BIG


def test_coscheduling_starves_the_big_gang_that_gangsched_protects():
    greedy = times(run(STARVATION, ONE_NODE, "coscheduling"), STARVATION)
    assert greedy["S2"] == (2.0, 202.0)  # took the free half at once
    assert greedy["S3"] == (100.0, 150.0)
    assert greedy["BIG"] == (202.0, 252.0)  # 102 s later than under gangsched


def test_coscheduling_holds_a_gang_near_its_quorum_at_permit_until_the_timeout():
    result = run(PERMIT_NEAR, TWO_NODES, "coscheduling")
    outcome = times(result, PERMIT_NEAR)
    assert outcome["X"] == (0.0, 100.0)
    assert outcome["C"] == (61.0, 71.0)  # waited behind A's Permit hold until it timed out
    assert outcome["A"] == (100.0, 110.0)
    assert result.permit_timeouts == 1 and summarise(result)["permit_timeouts"] == 1
    gpu = result.resources.index("nvidia.com/gpu")
    # 9 GPUs held at Permit from t=1 to the timeout at t=61, and again from t=71 to t=100.
    assert result.held_seconds[gpu] == pytest.approx(9 * (61 - 1) + 9 * (100 - 71))
    assert int(result.deadlocked.sum()) == 0


def test_coscheduling_rolls_back_a_gang_missing_more_than_the_reject_percentage():
    result = run(PERMIT_FAR, TWO_NODES, "coscheduling")
    outcome = times(result, PERMIT_FAR)
    assert outcome["C"] == (2.0, 12.0)  # A's 9 placed pods were rejected at once
    assert outcome["A"] == (100.0, 110.0)
    assert result.permit_timeouts == 0 and result.held_seconds.sum() == 0


def test_gangsched_backfills_the_small_job_that_coscheduling_holds_back():
    outcome = times(run(PERMIT_NEAR, TWO_NODES, "gangsched"), PERMIT_NEAR)
    assert outcome["C"] == (2.0, 12.0)  # ends long before A can start: backfilled
    assert outcome["A"] == (100.0, 110.0)


def test_gangsched_starts_the_small_job_first_and_the_fifo_policies_do_not():
    gangsched = times(run(LEAST_WORK, ONE_NODE, "gangsched"), LEAST_WORK)
    assert gangsched["SMALL"] == (100.0, 110.0)
    assert gangsched["BIG"] == (110.0, 1110.0)
    for policy in ("fifo-gang", "coscheduling"):
        fifo = times(run(LEAST_WORK, ONE_NODE, policy), LEAST_WORK)
        assert fifo["BIG"] == (100.0, 1100.0) and fifo["SMALL"] == (1100.0, 1110.0)
    waits = summarise(run(LEAST_WORK, ONE_NODE, "gangsched"))["avg_wait_s"]
    assert waits == pytest.approx((0 + 109 + 98) / 3)


def test_no_job_is_passed_by_one_submitted_more_than_the_limit_after_it():
    outcome = times(run(OVERTAKE_BOUND, ONE_NODE, "gangsched"), OVERTAKE_BOUND)
    assert outcome["EARLY"] == (5000.0, 5010.0)  # 3,499 s after BIG: within the hour, passes
    assert outcome["BIG"] == (5010.0, 6010.0)
    assert outcome["LATE"] == (6010.0, 6020.0)  # 3,699 s after BIG: waits behind it
