"""Things that happen twice: a task delivered twice, two beats by mistake, two workers racing
for the lease, operators pressing Retry and Kill together."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from scheduler_core import tasks
from scheduler_core.cluster import get_backend
from scheduler_core.engine import run_cycle
from scheduler_core.models import BindJournal, BindState, Gang, GangEvent, Member, SchedulingCycle
from scheduler_core.services.cycle import cycle_run, decisions_record, engine_config
from scheduler_core.services.lease import lease_acquire
from scheduler_core.services.operator import GangActionError, gang_kill, gang_retry
from scheduler_core.snapshot.build import build_snapshot
from tests.loop.factories import make_gang, make_nodes

from .invariants import assert_invariants
from .processes import Beat, Worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


class Processes(list):
    """The workers and beats a test started; all stopped at its end (or earlier by the test)."""

    def stop(self) -> None:
        for process in self:
            process.stop()


@pytest.fixture
def processes():
    started = Processes()
    yield started
    started.stop()


def each_pod_bound_once() -> None:
    bound = BindJournal.objects.filter(state=BindState.BOUND)
    assert bound.count() == bound.values("member").distinct().count()


def no_cycles_overlap() -> None:
    cycles = list(SchedulingCycle.objects.order_by("started_at"))
    assert len({c.epoch for c in cycles}) == len(cycles)
    for earlier, later in zip(cycles, cycles[1:], strict=False):
        assert earlier.started_at + timedelta(seconds=earlier.duration_s) <= later.started_at


def test_the_same_task_delivered_twice_binds_each_pod_once(processes):
    make_nodes(4)
    gangs = [make_gang(f"team/g{i}", 2, cpu=1) for i in range(6)]
    processes.extend([Worker("a", concurrency=2), Worker("b", concurrency=2)])
    for _ in range(2):
        tasks.schedule.apply_async(task_id="the-same-cycle")

    def bound() -> bool:
        return Member.objects.filter(gang__in=gangs, node__isnull=False).count() == 12

    wait_for(bound, timeout=60, what="every gang to be bound")
    assert_invariants(idle=True)
    each_pod_bound_once()


@pytest.mark.timeout(240)
def test_two_beats_and_two_workers_by_mistake_schedule_each_pod_once(processes, tmp_path):
    make_nodes(2, cpu=4)
    gangs = [make_gang(f"team/g{i}", 3, cpu=1) for i in range(6)]  # 18 CPUs asked, 8 free
    Member.objects.update(duration_seconds=1)
    processes.extend(Beat(name, tmp_path, GANGSCHED_CYCLE_INTERVAL_S="0.3") for name in ("beat-1", "beat-2"))
    processes.extend(Worker(name, concurrency=2) for name in ("w1", "w2"))

    def finished() -> bool:
        return Gang.objects.filter(pk__in=[g.pk for g in gangs], phase="Finished").count() == len(gangs)

    wait_for(finished, timeout=180, interval=0.5, what="every gang to finish")
    processes.stop()  # a warm shutdown: running cycles finish and record their duration
    assert_invariants(idle=True)
    each_pod_bound_once()
    no_cycles_overlap()


def test_retry_and_kill_pressed_ten_times_each_at_once_change_the_gang_once_each():
    make_nodes(2)
    gang = make_gang("team/stuck", 3, cpu=1, mode="NonStrict", wait_seconds=30)
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")
    outcomes: list[str] = []
    barrier = threading.Barrier(21)

    def press(action) -> None:
        try:
            barrier.wait()
            action(gang=Gang.objects.get(pk=gang.pk), by="operator")
            outcomes.append(action.__name__)
        except GangActionError:
            outcomes.append("refused")
        finally:
            connection.close()

    def schedule() -> None:
        try:
            barrier.wait()
            for _ in range(5):
                cycle_run(holder="racing-cycle")
        finally:
            connection.close()

    threads = [threading.Thread(target=press, args=(action,)) for action in (gang_retry, gang_kill) * 10]
    threads.append(threading.Thread(target=schedule))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    retried = GangEvent.objects.filter(gang=gang, kind="retried").count()
    assert outcomes.count("gang_kill") == 1 == GangEvent.objects.filter(gang=gang, kind="killed").count()
    assert outcomes.count("gang_retry") == retried <= 1
    assert Gang.objects.get(pk=gang.pk).phase == "Killed"
    assert not Member.objects.filter(gang=gang, phase__in=["Pending", "Running"]).exists()
    assert_invariants()


@pytest.mark.django_db
def test_a_cycle_that_decided_before_a_kill_does_not_bring_the_gang_back():
    """The race the presses above found: a cycle's snapshot saw the gang Pending, an operator
    killed it, then the cycle wrote its transition (Scheduling, satisfied) over Killed."""
    make_nodes(2)
    gang = make_gang("team/raced", 2, cpu=1)
    lease = lease_acquire(holder="racing-cycle", ttl_s=60)
    with transaction.atomic():
        snapshot = build_snapshot()
    result = run_cycle(snapshot, time.time(), engine_config())
    gang_kill(gang=gang, by="operator")
    decisions_record(
        lease=lease,
        result=result,
        started_at=timezone.now(),
        started=time.perf_counter(),
        backend=get_backend(),
        worker=lease.holder,
    )
    gang.refresh_from_db()
    assert (gang.phase, gang.satisfied) == ("Killed", False)
    assert_invariants()
