"""The running side of ``bench/service.py``: its Celery worker, its stand-in for beat, and the
way its backlog phase loads pods with no cycle running.

Split from the script so that each part reads on its own; nothing here is used by the service.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
QUEUE = f"bench-service-{os.getpid()}"


class Worker:
    """``celery worker`` (prefork, concurrency 2) on the bench database and queue."""

    def __init__(self, concurrency: int = 2) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "gangsched",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                str(concurrency),
                "--hostname",
                f"bench-{os.getpid()}@%h",
                "--queues",
                QUEUE,
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                "WARNING",
            ],
            cwd=ROOT,
            env=dict(os.environ),
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGTERM)  # warm shutdown: the main process stops its pool
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def trigger() -> None:
    from scheduler_core.tasks import cycle_trigger

    cycle_trigger()


def wait_first_cycle(worker: Worker, tick: float, timeout: float = 120.0) -> None:
    """Warm-up: the worker is up when it has run one (empty) cycle."""
    from scheduler_core.models import SchedulingCycle

    deadline = time.monotonic() + timeout
    while not SchedulingCycle.objects.exists():
        if not worker.alive():
            raise SystemExit("the celery worker exited during start-up")
        if time.monotonic() > deadline:
            raise SystemExit("the celery worker ran no cycle within two minutes")
        trigger()
        time.sleep(tick)


def wait_quiet(tick: float, quiet_s: float = 1.0, timeout: float = 60.0) -> int:
    """After the warm-up, wait until no cycle has started for ``quiet_s`` (a warm-up trigger
    still queued has run by then); returns the id of the last cycle, 0 if none."""
    from scheduler_core.models import SchedulingCycle

    def last() -> int:
        return SchedulingCycle.objects.order_by("-pk").values_list("pk", flat=True).first() or 0

    deadline = time.monotonic() + timeout
    seen, since = last(), time.monotonic()
    while time.monotonic() - since < quiet_s:
        if time.monotonic() > deadline:
            raise SystemExit("the celery worker kept running cycles with nothing asking for one")
        time.sleep(tick)
        now = last()
        if now != seen:
            seen, since = now, time.monotonic()
    return seen


@contextlib.contextmanager
def triggers_suppressed() -> Iterator[None]:
    """Submissions in this block (in this process) do not wake the scheduler.

    ``gang_submit`` asks for a cycle on commit (``cycle_trigger``), which is what the service
    must do; the backlog phase wants every pod pending before the first cycle, so it replaces
    the name ``submit.py`` calls for the length of the load, here and not in the service. With
    no beat and the bench's own queue, nothing else asks the worker for a cycle; the phase still
    checks afterwards that no cycle ran (``backlog_loaded_check``), so a trigger this misses
    aborts the run instead of skewing it.
    """
    with mock.patch("scheduler_core.services.submit.cycle_trigger", lambda: False):
        yield


def backlog_loaded_check(last_cycle_id: int, namespace: str, redis_url: str) -> dict:
    """Before the drain: no cycle ran since ``last_cycle_id``, none is asked for, and no pod is
    bound. Aborts the run (SystemExit) otherwise: the drain would not start from a real backlog."""
    import redis

    from scheduler_core.models import BindIntent, BindJournal, Member, SchedulingCycle
    from scheduler_core.tasks import QUEUED_KEY

    client = redis.Redis.from_url(redis_url)
    try:
        requested = int(client.exists(QUEUED_KEY)) + int(client.llen(QUEUE))
    finally:
        client.close()
    evidence = {
        "cycle_requests_queued_after_loading": requested,
        "cycles_during_loading": SchedulingCycle.objects.filter(pk__gt=last_cycle_id).count(),
        "pods_bound_before_drain": Member.objects.filter(namespace=namespace, node__isnull=False).count(),
        "bind_journal_rows_before_drain": BindJournal.objects.filter(member__namespace=namespace).count(),
        "bind_intents_before_drain": BindIntent.objects.count(),
    }
    if any(evidence.values()):
        raise SystemExit(f"backlog phase aborted: the backlog was not loaded idle: {evidence}")
    return evidence


class Ticker(threading.Thread):
    """The script's stand-in for beat: ``cycle_trigger()`` every ``tick`` seconds, and at once
    when a submission ``kick()``s it (the submitting thread itself never waits on Redis)."""

    def __init__(self, tick: float, kicked=None) -> None:
        """``kicked``: the event to wait on, one other processes can set too (default: a
        ``threading.Event``)."""
        super().__init__(daemon=True)
        self.tick = tick
        self.stopped = threading.Event()
        self.kicked = kicked if kicked is not None else threading.Event()

    def kick(self) -> None:
        self.kicked.set()

    def run(self) -> None:
        from django.db import connection

        while not self.stopped.is_set():
            self.kicked.wait(self.tick)
            self.kicked.clear()
            trigger()
        connection.close()

    def stop(self) -> None:
        """Stop it; a no-op on one never started (a backlog run that aborted while loading)."""
        self.stopped.set()
        self.kicked.set()
        if self.is_alive():
            self.join()
