"""SIGKILL the Celery pool process that runs a cycle, many times, at known points.

One real ``celery worker`` (prefork, two pool processes, lease TTL 1 s). Each kill stops a cycle
where a PostgreSQL lock held by this test made it wait, so the point is exact, not a guess:

* deciding: an uncommitted pending journal row for a pod of the new gang makes the cycle wait
  inside the fenced transaction that writes its decisions: nothing of that cycle commits;
* binding: the nodes locked FOR UPDATE make it wait inside the bind transaction, after its
  journal rows were committed: the next cycle must recover them;
* recovering: with the nodes still locked, the next cycle (after the dead holder's lease
  expired) waits inside the recovery of those rows, and is killed there too.

The worker's main process forks a new pool process and the task, acknowledged late, is
delivered again; the other pool process goes on taking tasks meanwhile, so a kill costs about
one lease TTL. The worker's sessions check every 100 ms
that their client is still there (PostgreSQL's ``client_connection_check_interval``, through
``PGOPTIONS``): a session whose process was killed while it waited for a lock ends then,
instead of when the lock comes free, and gives back what it held (the lease row's share lock).
After every kill the invariants hold; at the end every gang is bound whole and every pod was
bound exactly once.
"""

import itertools

import pytest

from scheduler_core import tasks
from scheduler_core.models import BindJournal, BindState, Member
from tests.loop.factories import make_gang, make_nodes

from .invariants import assert_invariants
from .processes import Blocker, Worker, cycle_pid, kill_cycle, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 17  # three kills each: 51


@pytest.fixture
def worker():
    started = Worker(
        "killed",
        concurrency=2,
        GANGSCHED_LEASE_TTL_S="1",
        PGOPTIONS="-c client_connection_check_interval=100",
    )
    yield started
    started.stop()


@pytest.fixture
def blocker():
    held = Blocker()
    yield held
    held.close()


def stopped_cycle(worker: Worker, blocker: Blocker) -> int:
    """Ask for cycles until one waits on ``blocker``'s lock; the pid of its pool process."""

    def waiting() -> int | None:
        if blocker.waiting():
            return cycle_pid(worker)
        tasks.schedule.delay()
        return None

    return wait_for(waiting, timeout=60, interval=0.1, what="a cycle waiting on the test's lock")


def kill(worker: Worker, blocker: Blocker, kills) -> None:
    """Kill the cycle stopped on ``blocker``'s lock; return once its session has ended too."""
    kill_cycle(worker, stopped_cycle(worker, blocker))
    wait_for(lambda: not blocker.waiting(), timeout=20, interval=0.05, what="the killed session to end")
    next(kills)


@pytest.mark.timeout(400)
def test_fifty_kills_mid_cycle_leave_no_partial_gang_and_no_pod_bound_twice(worker, blocker):
    make_nodes(4, cpu=16)
    kills = itertools.count()
    for round_ in range(ROUNDS):
        gang = make_gang(f"team/g{round_}", 2, cpu=1)
        # deciding
        blocker.pend(gang.members.order_by("name").first().pk)
        kill(worker, blocker, kills)
        blocker.release()
        assert not BindJournal.objects.filter(gang=gang).exists()
        assert_invariants()
        # binding, then recovering, with the nodes locked
        blocker.lock_nodes()
        kill(worker, blocker, kills)
        assert BindJournal.objects.filter(gang=gang, state=BindState.PENDING).count() == 2
        kill(worker, blocker, kills)
        blocker.release()
        assert_invariants()
    assert next(kills) >= 50

    def finished() -> bool:
        tasks.schedule.delay()
        return (
            not BindJournal.objects.filter(state=BindState.PENDING).exists()
            and not Member.objects.filter(node__isnull=True).exists()
        )

    wait_for(finished, timeout=60, interval=0.3, what="every gang to be bound")
    assert_invariants(idle=True)
    bound_rows = BindJournal.objects.filter(state=BindState.BOUND)
    assert bound_rows.count() == Member.objects.count() == 2 * ROUNDS
    assert bound_rows.values("member").distinct().count() == 2 * ROUNDS
