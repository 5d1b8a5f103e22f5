"""SIGKILL the Celery pool process that runs a cycle, many times, at known points.

One real ``celery worker`` (prefork, two pool processes, lease TTL 1 s). Each kill stops a cycle
where a PostgreSQL lock held by this test made it wait, so the point is exact, not a guess:

* deciding: the new gang's row locked FOR UPDATE makes the cycle wait inside the fenced
  transaction that writes its decisions, after its bind intents were written: nothing of that
  cycle commits;
* binding: the nodes locked FOR UPDATE make it wait inside the bind transaction, after its
  bind intents were committed: the next cycle must recover them;
* recovering: with the nodes still locked, the next cycle (after the dead holder's lease
  expired) waits inside the recovery of those intents, and is killed there too.

The worker's main process forks a new pool process and the task, acknowledged late, is
delivered again; the other pool process goes on taking tasks meanwhile. The worker's sessions
check every 100 ms that their client is still there (PostgreSQL's
``client_connection_check_interval``, through ``PGOPTIONS``): a session whose process was killed
while it waited for a lock ends then, instead of when the lock comes free, and gives back what
it held (the lease row's key-share lock); the next cycle then takes the dead holder's lease at
once (its session is gone), and may already wait on the test's lock in turn. What a killed
cycle left is therefore checked by its epoch. The nodes stay locked from the first kill of a
round to the third, so no cycle completes a bind in between. After every kill the invariants
hold; after every round a later cycle has recovered the killed one's binds (the journal is
empty, the gang bound whole); at the end every pod was bound exactly once.

A round is set up with the lease's row locked by the test, once no cycle holds the lease: the
cycles the test asked for are still queued, and one that started between the new gang's insert
and the test's locks would bind it, or wait on the nodes holding the lease, and no cycle would
ever stop where the round expects.
"""

import itertools
import os
import time

import pytest

from scheduler_core import tasks
from scheduler_core.models import BindIntent, BindJournal, BindState, Member, SchedulerLease
from tests.loop.factories import make_gang, make_nodes

from .invariants import assert_invariants, pending_binds
from .processes import Blocker, Worker, cycle_pid, kill_cycle, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

# Three kills a round: 51 in ``make test``; bench/soak.py sets more.
ROUNDS = int(os.environ.get("GANGSCHED_KILL_ROUNDS", "17"))
#: What the last run measured, for bench/soak.py.
FIGURES: dict = {}


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
def blockers():
    """Three sessions: one holds the nodes, one a gang's row, one the lease while a round is set up."""
    held = Blocker(), Blocker(), Blocker()
    yield held
    for blocker in held:
        blocker.close()


def stopped_cycle(worker: Worker, blocker: Blocker) -> int:
    """Ask for cycles until one waits on ``blocker``'s lock; the pid of its pool process."""

    def waiting() -> int | None:
        if blocker.waiting():
            return cycle_pid(worker)
        tasks.schedule.delay()
        return None

    return wait_for(waiting, timeout=60, interval=0.1, what="a cycle waiting on the test's lock")


def kill(worker: Worker, blocker: Blocker, kills) -> int:
    """Kill the cycle stopped on ``blocker``'s lock; return its lease epoch once its session has
    ended too (the next holder's may be waiting on the lock by then)."""
    pid = stopped_cycle(worker, blocker)
    epoch = SchedulerLease.objects.values_list("epoch", flat=True).get(name="scheduler")
    session = blocker.waiters()
    kill_cycle(worker, pid)
    wait_for(
        lambda: not blocker.waiters() & session, timeout=20, interval=0.05, what="the killed session to end"
    )
    next(kills)
    return epoch


@pytest.mark.timeout(200 + 15 * ROUNDS)
def test_fifty_kills_mid_cycle_leave_no_partial_gang_and_no_pod_bound_twice(worker, blockers):
    nodes, pender, gate = blockers
    make_nodes(ROUNDS // 4 + 1, cpu=8)  # room for every gang (2 pods of 1 CPU, 1Gi; 16Gi a node)
    kills = itertools.count()
    started = time.monotonic()
    for round_ in range(ROUNDS):
        wait_for(lambda: gate.hold_lease() or gate.release(), timeout=60, interval=0.1, what="no cycle")
        gang = make_gang(f"team/g{round_}", 2, cpu=1)
        # The nodes stay locked until the third kill: no cycle completes a bind in between.
        nodes.lock_nodes()
        pender.pend(gang.members.order_by("name").first().pk)
        gate.release()
        deciding = kill(worker, pender, kills)  # deciding
        pender.release()
        assert not BindJournal.objects.filter(gang=gang, epoch=deciding).exists()
        assert not BindIntent.objects.filter(gang=gang, epoch=deciding).exists()
        assert_invariants()
        kill(worker, nodes, kills)  # binding
        assert [row["gang_id"] for row in pending_binds()].count(gang.pk) == 2
        kill(worker, nodes, kills)  # recovering
        nodes.release()
        assert_invariants()
        wait_for(lambda gang=gang: recovered(gang), timeout=60, interval=0.2, what="the journal's recovery")
        wait_for(no_cycle, timeout=60, interval=0.1, what="the recovering cycle to end")
        assert_invariants(idle=True)
    FIGURES.update(kills=next(kills), seconds=time.monotonic() - started)
    assert FIGURES["kills"] >= 3 * ROUNDS
    bound_rows = BindJournal.objects.filter(state=BindState.BOUND)
    assert bound_rows.count() == Member.objects.filter(node__isnull=False).count() == 2 * ROUNDS
    assert bound_rows.values("member").distinct().count() == 2 * ROUNDS


def no_cycle() -> bool:
    """Nobody holds the lease: the cycle that finished the binds has ended too. One still running
    when the next round locks the nodes would wait on their lock, holding (and renewing) the
    lease, and no cycle could reach the gang's lock that round waits for."""
    return not SchedulerLease.objects.filter(name="scheduler").exclude(holder="").exists()


def recovered(gang) -> bool:
    """The killed cycle's binds were finished by a later cycle (asked for here: no beat)."""
    if pending_binds():
        tasks.schedule.delay()
        return False
    return Member.objects.filter(gang=gang, node__isnull=False).count() == 2
