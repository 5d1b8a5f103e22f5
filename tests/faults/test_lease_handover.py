"""1,000 handovers of the scheduler lease between three workers whose holder dies at random.

The workers are threads of this process, each with its own PostgreSQL session, calling the real
lease service (``lease_acquire``, ``fenced``, ``lease_release``) on the real database: threads
rather than processes so that 1,000 handovers take seconds. A holder "killed" stops where it is:
it neither writes nor releases and its session is closed, as after a SIGKILL; the lease passes
when PostgreSQL has ended that session, or its TTL (0.1 s) has run out, whichever comes first.
The killed worker comes back later and tries to write with its old fencing token, once the lease
has moved on: every such write must be refused.
"""

import os
import random
import threading
import time

import pytest
from django.db import connection

from scheduler_core.models import SchedulerLease, SchedulingCycle
from scheduler_core.services.lease import Lease, LeaseLost, fenced, lease_acquire, lease_release

pytestmark = pytest.mark.django_db(transaction=True)
#: What the last run measured, for bench/soak.py.
FIGURES: dict = {}

HANDOVERS = int(os.environ.get("GANGSCHED_HANDOVERS", "1000"))  # bench/soak.py sets more
TTL_S = 0.1
KILLED = 0.1  # the share of holders that die holding the lease


class Run:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.epochs: list[tuple[int, str]] = []
        self.stale_writes = 0
        self.stale_accepted = 0
        self.killed = 0
        self.errors: list[BaseException] = []

    def done(self) -> bool:
        return len(self.epochs) >= HANDOVERS


def current_epoch() -> int:
    return SchedulerLease.objects.values_list("epoch", flat=True).get(name="scheduler")


def work(run: Run, index: int) -> None:
    rng = random.Random(index)
    zombie: Lease | None = None
    attempt = 0
    try:
        while not run.done():
            attempt += 1
            if zombie is not None and current_epoch() > zombie.epoch:
                stale_write(run, zombie)
                zombie = None
            lease = lease_acquire(holder=f"w{index}-{attempt}", ttl_s=TTL_S)
            if lease is None:
                time.sleep(0.002)  # busy: let the holder have the CPU
                continue
            with run.lock:
                run.epochs.append((lease.epoch, lease.holder))
            if rng.random() < KILLED:
                with run.lock:
                    run.killed += 1
                connection.close()  # dies holding the lease: no write, no release
                zombie = lease
                continue
            try:
                with fenced(lease):
                    SchedulingCycle.objects.create(epoch=lease.epoch, worker=lease.holder)
            except LeaseLost:
                pass  # its TTL ran out before it wrote: refused, as it should be
            lease_release(lease)
    except BaseException as error:  # noqa: BLE001 - reported by the test
        run.errors.append(error)
    finally:
        connection.close()


def stale_write(run: Run, lease: Lease) -> None:
    with run.lock:
        run.stale_writes += 1
    try:
        with fenced(lease):
            SchedulingCycle.objects.create(epoch=lease.epoch, worker=f"{lease.holder} (stale)")
    except LeaseLost:
        return
    with run.lock:
        run.stale_accepted += 1


@pytest.mark.timeout(300 + HANDOVERS // 10)
def test_a_thousand_handovers_never_give_one_epoch_two_holders_and_refuse_stale_tokens():
    run = Run()
    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(run, index)) for index in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not run.errors, run.errors
    FIGURES.update(
        handovers=len(run.epochs),
        killed_holders=run.killed,
        stale_writes=run.stale_writes,
        stale_writes_accepted=run.stale_accepted,
        seconds=time.monotonic() - started,
    )
    epochs = [epoch for epoch, _ in run.epochs]
    assert len(epochs) >= HANDOVERS
    assert len(set(epochs)) == len(epochs), "two holders were given the same epoch"
    assert run.killed > 0 and run.stale_writes > 0
    assert run.stale_accepted == 0
    holders = dict(run.epochs)
    for epoch, worker in SchedulingCycle.objects.values_list("epoch", "worker"):
        assert worker == holders[epoch], f"epoch {epoch} written by {worker}, held by {holders[epoch]}"
