"""Celery tasks: thin wrappers that name a worker and call one service each.

Every task is safe to run twice (at-least-once delivery with acks_late): the cycle and the sweep
take the scheduler lease or return at once, the kubelet tick and the publisher are idempotent,
and a forecast run replaces the last one's forecasts whole.
"""

from __future__ import annotations

import functools
import logging
import os

import redis
from celery import shared_task
from django.conf import settings

import gangsched.celery  # noqa: F401  (the app @shared_task binds to: gangsched/__init__.py)
from scheduler_core.db.dry_run import dry_run_active
from scheduler_core.events import events_publish, forecasts_announce
from scheduler_core.reads.node_usage import usage_compact
from scheduler_core.services.cycle import cycle_run, timeouts_sweep
from scheduler_core.services.forecasts import forecasts_enabled, forecasts_run
from scheduler_core.services.kubelet import kubelet_tick
from scheduler_core.services.queue_history import queue_samples_prune
from scheduler_core.services.reconcile import LeaseBusy, reconcile
from scheduler_core.worker.cycle_wake import Waker

logger = logging.getLogger(__name__)

#: Set while a cycle is queued and not yet started, so that a burst of triggers queues one.
QUEUED_KEY = "gangsched:cycle:queued"
#: Held while a forecast run runs: a run due meanwhile is skipped. It expires with the task's
#: hard time limit, so a worker killed mid-run does not stop the forecasts.
FORECAST_LOCK_KEY = "gangsched:forecast:running"


def _holder(task) -> str:
    return f"{task.request.hostname or 'local'}:{os.getpid()}:{task.request.id or '-'}"


def _redis() -> redis.Redis:
    return _redis_client(settings.REDIS_URL)


@functools.lru_cache(maxsize=4)
def _redis_client(url: str) -> redis.Redis:
    """One client (and connection pool) per URL and process: every submission triggers a
    cycle, and a client made per call opened a new connection each time. redis-py's pool
    notices a fork and opens new connections in the child (Celery's prefork workers)."""
    return redis.Redis.from_url(url)


@shared_task(bind=True, ignore_result=True)
def schedule(self) -> dict:
    """One scheduling cycle (or nothing, if another worker is running one)."""
    _redis().delete(QUEUED_KEY)
    report = cycle_run(holder=_holder(self))
    if report.ran:
        events_publish()
        # One INFO line per cycle that changed something; an idle cycle (once a second) at DEBUG.
        changed = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in report.changes.items())
        logger.log(
            logging.INFO if report.changes else logging.DEBUG,
            "cycle epoch %d: %d considered%s, %s in %.3fs",
            report.epoch,
            report.pods_considered,
            f" ({report.units_parked} units parked)" if report.units_parked else "",
            changed or "nothing changed",
            report.duration_s,
        )
    return {"ran": report.ran, "reason": report.reason, "bound": report.pods_bound}


def cycle_trigger_now() -> bool:
    """Queue a cycle unless one is queued already; True if this call queued it."""
    if _redis().set(QUEUED_KEY, "1", nx=True, ex=10):
        schedule.delay()
        return True
    return False


_waker = Waker(lambda: cycle_trigger_now())  # looked up per call: tests replace it


def cycle_trigger() -> bool:
    """Ask for a cycle soon (work arrived): sent within ``cycle_wake.GAP_S`` by a thread of this
    process (scheduler_core/worker/cycle_wake.py), so the caller (a request) never waits for Redis; it
    coalesces with a cycle already queued. Nothing in a dry run: no work arrived."""
    if dry_run_active():
        return False
    _waker.request()
    return True


@shared_task(bind=True, ignore_result=True)
def sweep_timeouts(self) -> int:
    """Timeouts between cycles; also ages out the queue history (one indexed DELETE) and folds
    the per-node usage rows the cycles appended (``scheduler_core.reads.node_usage``)."""
    queue_samples_prune()
    usage_compact()
    timed_out = timeouts_sweep(holder=_holder(self))
    if timed_out:
        events_publish()  # committed: pages show the timeout now, not at the next publisher tick
        logger.info("timeout sweep: %d timed out", timed_out)
    return timed_out


@shared_task(ignore_result=True)
def kubelet() -> dict:
    """The simulated cluster's kubelet; a no-op on a real cluster, whose kubelets do this."""
    if settings.CLUSTER_BACKEND != "simulated":
        return {}
    counts = kubelet_tick()
    if any(counts.values()):
        cycle_trigger()  # finished pods freed room
        events_publish()
    return counts


@shared_task(ignore_result=True)
def publish_events() -> int:
    return events_publish()


@shared_task(bind=True, ignore_result=True)
def reconcile_drift(self) -> int:
    """Repair drift between the derived state and the truth (services/reconcile.py); how many."""
    try:
        repairs = reconcile(holder=_holder(self))
    except LeaseBusy:
        return 0  # a cycle runs; the next beat catches up
    if repairs:
        events_publish()
    return len(repairs)


@shared_task(ignore_result=True)
def forecast_gangs() -> dict:
    """Every pending gang's start forecast, stored (services/forecasts.py), and the pages told.
    Nothing while ``GANGSCHED_FORECAST_INTERVAL_S`` is 0, nor while another run is still going.
    It takes no lock a cycle waits for: the cycles go on meanwhile, on the worker's other
    processes."""
    if not forecasts_enabled():
        return {"ran": False, "reason": "disabled"}
    lock = _redis().lock(FORECAST_LOCK_KEY, timeout=settings.CELERY_TASK_TIME_LIMIT + 10)
    if not lock.acquire(blocking=False):
        return {"ran": False, "reason": "busy: the previous forecast run is still going"}
    try:
        run = forecasts_run()
    finally:
        try:
            lock.release()
        except redis.exceptions.LockError:  # expired meanwhile (another run may hold it now)
            logger.warning("forecast run outlived its lock (%s s)", settings.CELERY_TASK_TIME_LIMIT + 10)
    forecasts_announce(run.made_at, run.changed)
    logger.log(
        logging.INFO if run.changed else logging.DEBUG,
        "forecast: %d pending gangs, %d changed, in %.3fs",
        run.gangs,
        len(run.changed),
        run.duration_s,
    )
    return {"ran": True, "gangs": run.gangs, "changed": len(run.changed)}
