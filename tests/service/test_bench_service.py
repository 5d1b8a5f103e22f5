"""bench/service.py's backlog phase measures a real backlog.

It used to submit with every ``gang_submit`` waking the scheduler, so cycles ran while it
"loaded" and its drain figure (with a negative gang p50) measured something else. Now it loads
with the trigger suppressed, checks that no cycle ran and no pod is bound before the drain, times
the drain from its first cycle and aborts on a negative latency. These tests check those
invariants on a tiny run of the real script (its own database, Celery worker and Redis
database) and the checks that abort it; they never assert on a timing.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from bench.service_measure import MeasurementError, latencies_check
from bench.service_worker import backlog_loaded_check, triggers_suppressed
from scheduler_core.models import Member, SchedulingCycle
from scheduler_core.tasks import QUEUED_KEY, cycle_trigger
from tests.cast import make_gang

ROOT = Path(__file__).resolve().parents[2]
GANGS, MEMBERS = 4, 5
BENCH_REDIS_DB = "13"  # neither the tests' (15) nor a bench run's by hand (14)
BENCH_REDIS_URL = f"redis://127.0.0.1:6379/{BENCH_REDIS_DB}"


@pytest.mark.parametrize("processes", [1, 2])
def test_the_backlog_phase_drains_a_backlog_loaded_with_no_cycle_running(tmp_path, processes):
    """Also with the submitters in processes of their own (``--submit-processes``)."""
    out = tmp_path / "service.json"
    env = {
        **os.environ,
        "GANGSCHED_BENCH_DB": f"{os.environ.get('GANGSCHED_TEST_DB', 'test_gangsched')}_bench",
        "GANGSCHED_BENCH_REDIS_DB": BENCH_REDIS_DB,
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)  # the script configures its own, as when run by hand
    args = ["--no-stream", "--nodes", "4", "--gangs", str(GANGS), "--members", str(MEMBERS)]
    args += ["--submit-processes", str(processes)]
    run = subprocess.run(
        [sys.executable, "bench/service.py", *args, "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    backlog = json.loads(out.read_text())["backlog"]
    assert backlog["cycles_during_loading"] == 0
    assert backlog["cycle_requests_queued_after_loading"] == 0
    assert backlog["pods_bound_before_drain"] == 0
    assert backlog["bind_journal_rows_before_drain"] == 0
    assert backlog["started_at"] >= backlog["loaded_at"]  # the drain's first cycle began after the load
    assert backlog["pods_bound"] == GANGS * MEMBERS
    assert backlog["gangs_bound"] == GANGS
    assert backlog["gang_bound_min_s"] >= 0
    assert backlog["gang_bound_p50_s"] >= 0
    assert backlog["pods_bound_per_second"] == pytest.approx(backlog["pods_bound"] / backlog["elapsed_s"])


def test_a_negative_latency_aborts_the_run():
    latencies_check([0.0, 0.5])
    latencies_check([])
    with pytest.raises(MeasurementError, match="measurement bug"):
        latencies_check([0.5, -0.01])


@pytest.mark.django_db
def test_loading_submits_through_the_service_without_waking_the_scheduler(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks, triggers_suppressed():
        make_gang(name="quiet")
    assert callbacks and cycle_trigger not in callbacks
    assert Member.objects.filter(gang__name="quiet").count() == 2
    with django_capture_on_commit_callbacks() as callbacks:
        make_gang(name="loud")
    assert cycle_trigger in callbacks  # outside the block, submitting wakes the scheduler again


@pytest.fixture
def bench_redis():
    """The Redis database the bench's test run uses (not the tests' own, where other tests'
    submissions queue cycles), emptied before and after."""
    client = redis.Redis.from_url(BENCH_REDIS_URL)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.mark.django_db
def test_a_cycle_asked_for_or_run_or_a_bound_pod_before_the_drain_aborts_the_run(bench_redis):
    gang = make_gang(namespace="bench", name="g")
    assert not any(backlog_loaded_check(0, "bench", BENCH_REDIS_URL).values())
    bench_redis.set(QUEUED_KEY, "1")
    with pytest.raises(SystemExit, match="cycle_requests_queued_after_loading': 1"):
        backlog_loaded_check(0, "bench", BENCH_REDIS_URL)
    bench_redis.delete(QUEUED_KEY)
    cycle = SchedulingCycle.objects.create(worker="w")
    with pytest.raises(SystemExit, match="cycles_during_loading': 1"):
        backlog_loaded_check(cycle.pk - 1, "bench", BENCH_REDIS_URL)
    Member.objects.filter(gang=gang).update(node="node-0")
    with pytest.raises(SystemExit, match="pods_bound_before_drain': 2"):
        backlog_loaded_check(cycle.pk, "bench", BENCH_REDIS_URL)
