"""SIGKILL the Celery pool process that holds the scheduler lease: the next cycle takes the lease
over without waiting for its TTL.

A real ``celery worker`` (prefork, two pool processes) and ``celery beat`` asking for a cycle
every second, as ``make run`` runs them. Every cycle pauses between journaling its binds and
binding them (``GANGSCHED_FAULT_PAUSE_AFTER_JOURNAL_S``), so it holds the lease long enough to be
killed there. In ``make test`` the lease's TTL is an hour: a takeover within the test's patience
can only come from the taker seeing the holder dead (its PostgreSQL session ended, its process
gone). ``bench/handover.py`` runs it with the default TTL and more kills, and records each
hand-over: from the SIGKILL to the next holder's taking the lease. At the end every pod is bound
once and the invariants hold.
"""

import os
import statistics
import time
from datetime import UTC, datetime

import pytest
from django.conf import settings

from scheduler_core.models import Member, SchedulerLease
from tests.loop.factories import make_gang, make_nodes

from .invariants import assert_invariants, pending_binds
from .processes import Beat, Worker, cycle_pid, kill_cycle, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

KILLS = int(os.environ.get("GANGSCHED_HANDOVER_KILLS", "5"))  # bench/handover.py sets more
#: The lease TTL of the worker; empty: the product's default (bench/handover.py).
TTL_S = os.environ.get("GANGSCHED_HANDOVER_TTL_S", "3600")
PAUSE_S = "2"
#: What the last run measured, for bench/handover.py.
FIGURES: dict = {}


@pytest.fixture
def loop(tmp_path):
    worker = Worker(
        "handover",
        concurrency=2,
        GANGSCHED_LEASE_TTL_S=TTL_S or str(settings.GANGSCHED_LEASE_TTL_S),
        GANGSCHED_FAULT_PAUSE_AFTER_JOURNAL_S=PAUSE_S,
    )
    beat = Beat("handover", tmp_path)
    yield worker
    beat.stop()
    worker.stop()


def lease() -> tuple[int, datetime | None]:
    return SchedulerLease.objects.filter(name="scheduler").values_list("epoch", "acquired_at").first() or (
        0,
        None,
    )


@pytest.mark.timeout(120 + 30 * KILLS)
def test_a_killed_holders_lease_is_taken_over_without_waiting_for_its_ttl(loop):
    make_nodes(KILLS // 4 + 1, cpu=8)
    handovers: list[float] = []
    killed_epoch = 0
    for kill in range(KILLS):
        make_gang(f"team/g{kill}", 2, cpu=1)
        # A holder other than the one killed last: a pool process of the test's worker.
        pid = wait_for(
            lambda killed=killed_epoch: lease()[0] > killed and cycle_pid(loop),
            timeout=60,
            interval=0.05,
            what="a cycle holding the lease",
        )
        killed_epoch = lease()[0]
        killed_at = datetime.now(UTC)
        kill_cycle(loop, pid)
        epoch, acquired_at = wait_for(
            lambda killed=killed_epoch: lease()[0] > killed and lease(),
            timeout=60,
            interval=0.05,
            what=f"the lease of the killed holder (epoch {killed_epoch}) to be taken",
        )
        handovers.append((acquired_at - killed_at).total_seconds())
    wait_for(lambda: not pending_binds() and all_bound(), timeout=120, what="every pod bound")
    assert_invariants(idle=True)
    FIGURES.update(
        kills=len(handovers),
        ttl_s=float(TTL_S or settings.GANGSCHED_LEASE_TTL_S),
        handover_p50_s=round(statistics.median(handovers), 3),
        handover_max_s=round(max(handovers), 3),
        handovers_s=[round(seconds, 3) for seconds in handovers],
        measured_at=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    )


def all_bound() -> bool:
    return not Member.objects.filter(node__isnull=True, phase="Pending").exists()
