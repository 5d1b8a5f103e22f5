"""The scheduling cycle against the real database and the simulated cluster (no Celery here)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from scheduler_core.models import BindJournal, BindState, Gang, GangEvent, Member, SchedulingCycle
from scheduler_core.services.cycle import TIMEOUT_ANNOTATION, cycle_run, timeouts_sweep
from scheduler_core.services.lease import lease_acquire

from .factories import GI, bound_nodes, make_gang, make_nodes

pytestmark = pytest.mark.django_db


def kinds(gang: Gang) -> list[str]:
    return list(GangEvent.objects.filter(gang=gang).order_by("id").values_list("kind", flat=True))


def test_a_gang_of_8_that_fits_is_bound_all_at_once():
    make_nodes(4)
    gang = make_gang("team/train", 8, cpu=2)
    report = cycle_run(holder="test")
    assert report.ran and report.pods_bound == 8
    assert Member.objects.filter(gang=gang, node__isnull=False).count() == 8
    assert set(BindJournal.objects.filter(gang=gang).values_list("state", flat=True)) == {BindState.BOUND}
    gang.refresh_from_db()
    assert gang.satisfied and gang.schedule_start_time is not None
    assert kinds(gang) == ["satisfied", "bound"]
    cycle = SchedulingCycle.objects.get()
    assert cycle.pods_bound == 8 and cycle.epoch == report.epoch and "allocate" in cycle.timings


def test_a_gang_that_does_not_fit_binds_nothing_and_shows_why():
    make_nodes(3)
    gang = make_gang("team/train", 8, cpu=2)
    cycle_run(holder="test")
    assert Member.objects.filter(gang=gang, node__isnull=False).count() == 0
    gang.refresh_from_db()
    assert gang.reason == "InsufficientResources"
    assert gang.message.startswith("needs 8 x {cpu 2, memory 1Gi}; 3 nodes can take 6 in all; short by 2")
    assert gang.details["short_by"] == 2
    assert kinds(gang) == ["explained"]
    cycle_run(holder="test")  # the same explanation again is not history
    assert kinds(gang) == ["explained"]


def test_each_cycle_records_what_it_left_pending():
    """The overview's pending-demand chart reads SchedulingCycle.pending_demand."""
    make_nodes(3)
    fits = make_gang("team/fits", 2, cpu=2)
    make_gang("team/huge", 8, cpu=2)
    cycle_run(holder="test")
    assert bound_nodes(fits) == ["n0", "n0"]
    assert SchedulingCycle.objects.get().pending_demand == {"cpu": 16_000, "memory": 8 * GI}


def test_a_busy_lease_means_no_cycle():
    make_nodes(1)
    make_gang("team/a", 1)
    assert lease_acquire(holder="someone-else", ttl_s=60) is not None
    report = cycle_run(holder="test")
    assert not report.ran and "busy" in report.reason
    assert not Member.objects.filter(node__isnull=False).exists()


def test_pending_binds_left_by_a_crashed_cycle_are_finished_by_the_next():
    make_nodes(2)
    gang = make_gang("team/train", 2, cpu=1)
    Gang.objects.filter(pk=gang.pk).update(satisfied=True, phase="Scheduling")
    for member in gang.members.all():  # decided and journaled, then the worker died
        BindJournal.objects.create(epoch=1, gang=gang, member=member, node="n0")
    report = cycle_run(holder="test")
    assert report.recovered == 2
    assert sorted(gang.members.values_list("node", flat=True)) == ["n0", "n0"]
    assert not BindJournal.objects.filter(state=BindState.PENDING).exists()


def test_pending_binds_that_cannot_complete_roll_the_whole_gang_back():
    make_nodes(1)
    gang = make_gang("team/train", 2, cpu=1)
    Gang.objects.filter(pk=gang.pk).update(satisfied=True, phase="Scheduling")
    first, second = gang.members.order_by("name")
    BindJournal.objects.create(epoch=1, gang=gang, member=first, node="n0")
    BindJournal.objects.create(epoch=1, gang=gang, member=second, node="gone-node")
    cycle_run(holder="test")
    gang.refresh_from_db()
    # One bind failed below minMember: the gang was rolled back whole and requeued, and the same
    # cycle then placed it again on the node that exists.
    assert "restarted" in kinds(gang)
    assert BindJournal.objects.get(member=second, node="gone-node").state == BindState.FAILED
    assert sorted(gang.members.values_list("node", flat=True)) == ["n0", "n0"]


def test_a_gang_that_times_out_releases_everything_and_is_annotated():
    make_nodes(2, cpu=2)
    Member.objects.create(namespace="x", name="busy", requests={"cpu": 2000}, node="n1", phase="Running")
    gang = make_gang("team/train", 3, cpu=1, mode="NonStrict", wait_seconds=30)
    cycle_run(holder="test")
    assert Member.objects.filter(gang=gang, reserved_node="n0").count() == 2
    Gang.objects.filter(pk=gang.pk).update(wait_started=timezone.now() - timedelta(seconds=31))
    assert timeouts_sweep(holder="test") == 1
    gang.refresh_from_db()
    assert gang.phase == "TimedOut"
    assert not Member.objects.filter(gang=gang, reserved_node__isnull=False).exists()
    assert all(m.annotations.get(TIMEOUT_ANNOTATION) == "true" for m in gang.members.all())
    assert kinds(gang)[-3:] == ["released", "timed_out", "explained"]
    assert gang.reason == "TimedOut"
    # The sweep's history row says what stays queued: the timed-out gang is no demand.
    assert SchedulingCycle.objects.order_by("-id").first().pending_demand == {}


@pytest.mark.parametrize(("limit", "first"), [(3600.0, "team/short"), (0.0, "team/long")])
def test_the_cycle_queues_least_work_first_unless_the_limit_is_zero(settings, limit, first):
    """One node of 4 CPUs, two 4-CPU gangs: the later, shorter one goes first by default."""
    settings.GANGSCHED_OVERTAKE_LIMIT_S = limit
    make_nodes(1)
    now = timezone.now()
    long = make_gang("team/long", 1, cpu=4, created=now - timedelta(seconds=60))
    short = make_gang("team/short", 1, cpu=4, created=now - timedelta(seconds=30))
    Member.objects.filter(gang=long).update(duration_seconds=7200)  # 28,800 core-s: capped at 3,600
    Member.objects.filter(gang=short).update(duration_seconds=60)  # 240 core-s
    cycle_run(holder="test")
    bound = {g.key: bound_nodes(g) for g in (long, short)}
    assert bound[first] == ["n0"]
    assert [key for key, nodes in bound.items() if nodes == [""]] == [k for k in bound if k != first]
