"""The scheduling loop in real Celery worker processes, on the real PostgreSQL and Redis.

Workers are separate processes, so these tests commit their rows (transaction=True) and poll
the database for the outcome. Timeouts in ``wait_for`` bound the waiting; nothing asserts speed.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from scheduler_core import tasks
from scheduler_core.models import (
    BindIntent,
    BindJournal,
    BindState,
    Gang,
    IntentState,
    Member,
    SchedulingCycle,
)

from .factories import make_gang, make_nodes
from .workers import Worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def workers():
    started: list[Worker] = []

    def start(name: str, **kwargs) -> Worker:
        worker = Worker(name, **kwargs)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def bound(gang: Gang) -> int:
    return Member.objects.filter(gang=gang, node__isnull=False).count()


def test_a_gang_of_8_that_fits_is_bound_all_at_once_by_a_worker(workers):
    make_nodes(4)
    gang = make_gang("team/train", 8, cpu=2)
    workers("w1")
    tasks.schedule.delay()
    wait_for(lambda: bound(gang) == 8, what="the gang to be bound")
    cycles = set(BindJournal.objects.filter(gang=gang).values_list("cycle_id", flat=True))
    assert len(cycles) == 1  # all eight in one cycle, not trickled over several


def test_a_gang_that_does_not_fit_binds_nothing_and_shows_why(workers):
    make_nodes(3)
    gang = make_gang("team/train", 8, cpu=2)
    workers("w1")
    tasks.schedule.delay()
    wait_for(lambda: Gang.objects.get(pk=gang.pk).reason, what="an explanation")
    gang.refresh_from_db()
    assert bound(gang) == 0
    assert "short by 2" in gang.message


def test_a_gang_that_times_out_releases_everything(workers):
    make_nodes(2, cpu=2)
    Member.objects.create(namespace="x", name="busy", requests={"cpu": 2000}, node="n1", phase="Running")
    gang = make_gang("team/train", 3, cpu=1, mode="NonStrict", wait_seconds=30)
    workers("w1")
    tasks.schedule.delay()
    wait_for(
        lambda: Member.objects.filter(gang=gang, reserved_node__isnull=False).count() == 2,
        what="reservations",
    )
    Gang.objects.filter(pk=gang.pk).update(wait_started=timezone.now() - timedelta(seconds=60))
    tasks.sweep_timeouts.delay()
    wait_for(lambda: Gang.objects.get(pk=gang.pk).phase == "TimedOut", what="the timeout")
    assert not Member.objects.filter(gang=gang, reserved_node__isnull=False).exists()
    assert bound(gang) == 0


def test_a_worker_killed_in_the_middle_of_binding_leaves_the_gang_fully_bound_after_recovery(workers):
    make_nodes(4)
    gang = make_gang("team/train", 8, cpu=2)
    doomed = workers("doomed", GANGSCHED_FAULT_PAUSE_AFTER_JOURNAL_S="60")
    tasks.schedule.delay()
    wait_for(lambda: _intended(gang) == 8, what="the journal")
    doomed.kill()  # SIGKILL between journaling and binding
    assert bound(gang) == 0
    workers("survivor")

    def recovered() -> bool:
        tasks.schedule.delay()  # no beat in tests: keep asking; the lease expires after 3 s
        return not _pending() and bound(gang) == 8

    wait_for(recovered, timeout=40, interval=1.0, what="recovery")
    gang.refresh_from_db()
    assert bound(gang) == 8
    assert not BindIntent.objects.filter(gang=gang, state=IntentState.PENDING).exists()
    # Bound once: one journal row per pod, written by the recovery.
    assert BindJournal.objects.filter(gang=gang, state=BindState.BOUND).count() == 8


def _intended(gang: Gang) -> int:
    """Pods of ``gang`` in pending bind intents (the journal written before the binds)."""
    intents = BindIntent.objects.filter(gang=gang, state=IntentState.PENDING)
    return sum(len(ids) for ids in intents.values_list("member_ids", flat=True))


def _pending() -> bool:
    return BindIntent.objects.filter(state=IntentState.PENDING).exists()


def test_two_workers_never_run_two_cycles_at_once(workers):
    make_nodes(4)
    for i in range(6):
        make_gang(f"team/g{i}", 2, cpu=1)
    pair = [workers("a", concurrency=2), workers("b", concurrency=2)]
    for _ in range(30):
        tasks.schedule.delay()

    def enough_cycles() -> bool:
        # A task that finds the lease busy returns without a cycle: keep the workers racing.
        tasks.schedule.delay()
        return SchedulingCycle.objects.count() >= 5

    wait_for(enough_cycles, timeout=90, interval=0.3, what="cycles")
    for worker in pair:
        worker.stop()  # a warm shutdown: running cycles finish and record their duration
    cycles = list(SchedulingCycle.objects.order_by("started_at"))
    epochs = [c.epoch for c in cycles]
    assert len(set(epochs)) == len(epochs)
    for earlier, later in zip(cycles, cycles[1:], strict=False):
        assert earlier.started_at + timedelta(seconds=earlier.duration_s) <= later.started_at, (
            f"cycle {earlier.epoch} overlaps cycle {later.epoch}"
        )
