"""The scheduler lease: one holder at a time, and a stale holder's writes are refused."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from scheduler_core.models import SchedulerLease, SchedulingCycle
from scheduler_core.services.lease import LeaseLost, fenced, lease_acquire, lease_release, lease_renew

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

    def race(index: int) -> None:
        try:
            barrier.wait()
            lease = lease_acquire(holder=f"w{index}", ttl_s=60)
            if lease is not None:
                winners.append(lease.epoch)
        finally:
            connection.close()

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(winners) == 1
