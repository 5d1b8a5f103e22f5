"""The replay's wake-ups for the reclaim delay (``scheduler_core/simulation/reclaim_due.py``):
each pending job wakes a cycle at its submission + its own queue's delay."""

from scheduler_core.simulation.reclaim_due import ReclaimDue


def test_each_job_wakes_at_its_own_queue_s_delay():
    due = ReclaimDue(120.0, {"yk": 30.0, "volcano": 0.0, "plain": None})
    due.arrived(0, 10.0, "yk")
    due.arrived(1, 10.0, "volcano")  # reclaims in its first cycle: nothing to wake for
    due.arrived(2, 10.0, "plain")  # the global delay
    due.arrived(3, 20.0, "unknown")  # the global delay

    def waiting(_index: int) -> bool:
        return True

    assert due.next_time(waiting) == 40.0
    assert due.reached(40.0, waiting)
    assert due.next_time(waiting) == 130.0
    assert due.reached(140.0, waiting) and due.next_time(waiting) == float("inf")


def test_no_wake_up_when_the_policy_does_not_reclaim_beyond_the_guarantee():
    due = ReclaimDue(0.0)
    due.arrived(0, 10.0, "yk")
    assert due.next_time(lambda _index: True) == float("inf")
