"""The simulated cluster failing binds, deletes and lists at a rate, in-process cycles.

The failures are drawn from a seeded ``random.Random`` (``SimulatedCluster(failure_rate=...,
seed=...)``), so each run is the same run; the assertions hold for any seed.
"""

import pytest

from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.models import BindJournal, BindState, Gang, GangEvent, Member
from scheduler_core.services.operator import gang_kill
from tests.loop.factories import make_gang, make_nodes

from .invariants import assert_invariants
from .loop import Clock, settle, step

pytestmark = pytest.mark.django_db


def gangs(count: int) -> list[Gang]:
    """Gangs of 2 to 4 pods; every other one may run with fewer than all (after gang)."""
    made = []
    for i in range(count):
        size = 2 + i % 3
        gang = make_gang(f"team/g{i}", size, cpu=1, min_member=size - (i % 2))
        Member.objects.filter(gang=gang).update(duration_seconds=25)
        made.append(gang)
    return made


def test_bind_failures_roll_back_whole_gangs_or_leave_after_gang_members_waiting():
    make_nodes(6, cpu=4)
    gangs(30)
    clock = Clock()
    backend = SimulatedCluster(failure_rate=0.3, seed=8)
    for _ in range(25):
        step(backend, clock)
    failed = BindJournal.objects.filter(state=BindState.FAILED, error__contains="injected failure")
    assert failed.count() > 10
    rolled_back = GangEvent.objects.filter(kind="restarted", reason__contains="rolled back whole")
    after_gang = GangEvent.objects.filter(kind="bound", reason__contains="wait as ordinary pods")
    assert rolled_back.exists() and after_gang.exists()
    # A gang rolled back had minMember = all its pods, or lost more than it could spare.
    settle(clock)


def test_failed_deletes_still_free_what_a_killed_or_requeued_gang_held():
    make_nodes(2, cpu=4)
    first, second = make_gang("team/a", 4, cpu=1), make_gang("team/b", 4, cpu=1)
    clock = Clock()
    step(SimulatedCluster(failure_rate=0.0), clock)
    assert Member.objects.filter(node__isnull=False).count() == 8
    failing = SimulatedCluster(failure_rate=1.0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("scheduler_core.services.operator.get_backend", lambda: failing)
        gang_kill(gang=first, by="faults")
    assert not Member.objects.filter(gang=first, phase__in=["Pending", "Running"]).exists()
    assert_invariants()
    # Every bind fails: nothing of a third gang is bound half, and b keeps running.
    third = make_gang("team/c", 4, cpu=1)
    step(failing, clock)
    assert Member.objects.filter(gang=third, node__isnull=False).count() == 0
    assert Member.objects.filter(gang=second, node__isnull=False).count() == 4
    settle(clock)
    assert Member.objects.filter(gang=third, node__isnull=False).count() == 4


def test_list_failures_skip_cycles_and_lose_nothing():
    make_nodes(4, cpu=4)
    gangs(8)
    clock = Clock()
    backend = SimulatedCluster(list_failure_rate=0.5, seed=3)
    skipped = 0
    for _ in range(20):
        report = step(backend, clock)
        skipped += not report.ran
        if not report.ran:
            assert "not been fully read" in report.reason
    assert 0 < skipped < 20
    settle(clock)
