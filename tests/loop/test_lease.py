"""The scheduler lease: one holder at a time, a stale holder's writes are refused, a dead
holder's lease is taken at once, and a long holder keeps it."""

import subprocess
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from scheduler_core.models import Member, SchedulerLease, SchedulingCycle
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.lease import (
    LeaseLost,
    fenced,
    lease_acquire,
    lease_held,
    lease_release,
    lease_renew,
    this_machine,
)
from tests.loop.factories import make_gang, make_nodes
from tests.loop.workers import wait_for

pytestmark = pytest.mark.django_db


def expire(name: str = "scheduler") -> None:
    SchedulerLease.objects.filter(name=name).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_every_new_holder_gets_a_higher_epoch():
    first = lease_acquire(holder="a", ttl_s=60)
    assert lease_acquire(holder="b", ttl_s=60) is None
    lease_release(first)
    second = lease_acquire(holder="b", ttl_s=60)
    assert second.epoch == first.epoch + 1


def test_an_expired_lease_is_taken_over_and_the_stale_holder_cannot_write():
    stale = lease_acquire(holder="a", ttl_s=60)
    expire()
    fresh = lease_acquire(holder="b", ttl_s=60)
    assert fresh.epoch == stale.epoch + 1
    with pytest.raises(LeaseLost, match="stale fencing token"), fenced(stale):
        SchedulingCycle.objects.create(epoch=stale.epoch)
    assert not SchedulingCycle.objects.exists()
    with pytest.raises(LeaseLost):
        lease_renew(stale, ttl_s=60)
    with fenced(fresh):
        SchedulingCycle.objects.create(epoch=fresh.epoch)


def test_a_holder_whose_time_ran_out_writes_nothing_even_if_nobody_took_over():
    lease = lease_acquire(holder="a", ttl_s=60)
    expire()
    with pytest.raises(LeaseLost, match="expired"), fenced(lease):
        SchedulingCycle.objects.create(epoch=lease.epoch)


@pytest.mark.django_db(transaction=True)
def test_racing_workers_never_both_hold_the_lease():
    winners: list[int] = []
    barrier = threading.Barrier(8)
    raced = threading.Barrier(8)

    def race(index: int) -> None:
        try:
            barrier.wait()
            lease = lease_acquire(holder=f"w{index}", ttl_s=60)
            if lease is not None:
                winners.append(lease.epoch)
        finally:
            raced.wait()  # the winner's session stays open while the others try: it lives
            connection.close()

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(winners) == 1


def gone_pid() -> int:
    """The pid of a process that ran on this machine and has exited (and been reaped)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.django_db(transaction=True)
def test_the_lease_of_a_holder_whose_session_ended_is_taken_without_waiting_for_its_ttl():
    """A SIGKILLed worker's connection closes and PostgreSQL ends its session: with an hour of
    TTL left, the next worker takes the lease, and the dead holder's token writes nothing."""
    held: list = []

    def hold() -> None:
        try:
            held.append(lease_acquire(holder="doomed", ttl_s=3600))
        finally:
            connection.close()  # dies holding the lease: no release

    thread = threading.Thread(target=hold)
    thread.start()
    thread.join()
    (dead,) = held
    # The server ends the closed session's backend soon after; until then the holder looks alive.
    fresh = wait_for(lambda: lease_acquire(holder="next", ttl_s=3600), what="the dead holder's lease")
    assert fresh.epoch == dead.epoch + 1
    with pytest.raises(LeaseLost, match="stale fencing token"), fenced(dead):
        SchedulingCycle.objects.create(epoch=dead.epoch)
    assert not SchedulingCycle.objects.exists()


def test_the_lease_of_a_holder_process_gone_from_this_machine_is_taken_at_once():
    """The holder's session may still be running a statement when its process died; a taker on
    the same machine sees the process gone."""
    dead = lease_acquire(holder="doomed", ttl_s=3600)
    SchedulerLease.objects.filter(name="scheduler").update(holder_pid=gone_pid())
    fresh = lease_acquire(holder="next", ttl_s=3600)
    assert fresh is not None and fresh.epoch == dead.epoch + 1


def test_a_live_holder_keeps_its_lease_and_a_pid_of_another_machine_proves_nothing():
    lease_acquire(holder="alive", ttl_s=3600)
    assert lease_acquire(holder="next", ttl_s=3600) is None  # its session and process are there
    assert this_machine()
    SchedulerLease.objects.filter(name="scheduler").update(
        holder_host="elsewhere/pid:[1]", holder_pid=gone_pid()
    )
    assert lease_acquire(holder="next", ttl_s=3600) is None


@pytest.mark.django_db(transaction=True)
def test_a_cycle_longer_than_the_lease_ttl_keeps_its_lease_and_binds(settings):
    """The cycle pauses for three TTLs between journaling and binding its pods; the lease is
    renewed meanwhile, so its binds are not refused as a stale holder's would be."""
    settings.GANGSCHED_LEASE_TTL_S = 1.0
    settings.GANGSCHED_FAULT_PAUSE_AFTER_JOURNAL_S = 3.0
    make_nodes(1)
    make_gang("team/long", 2, cpu=1)
    report = cycle_run(holder="long-cycle")
    assert report.ran and report.pods_bound == 2
    assert Member.objects.filter(node__isnull=False).count() == 2
    assert SchedulerLease.objects.get(name="scheduler").holder == ""  # given back at the end


@pytest.mark.django_db(transaction=True)
def test_the_renewal_does_not_wait_for_the_holders_own_fenced_transaction():
    """A long fenced transaction (a bind of many pods) holds the lease row; the renewal still
    moves the expiry on, so the lease has not run out when the transaction ends."""
    with lease_held(holder="binding", ttl_s=1.0) as lease, fenced(lease):

        def renewed_twice():
            expires, acquired = SchedulerLease.objects.values_list("expires_at", "acquired_at").get(
                name="scheduler"
            )
            return expires > acquired + timedelta(seconds=1.5)

        wait_for(renewed_twice, interval=0.05, what="the lease's renewal")
        SchedulingCycle.objects.create(epoch=lease.epoch)
    assert SchedulingCycle.objects.count() == 1
