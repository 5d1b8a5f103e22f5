"""A forecast run never delays a scheduling cycle (services/forecasts.py says how): held paused
inside its read transaction, then inside its write transaction, while cycles run, bind, and take
and change the very gang rows the run read and writes forecasts of.

The main thread's statements run with a lock timeout, so a lock the run held would fail the
test with an error instead of hanging it; ``NOWAIT`` asks for every gang row at once."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from scheduler_core.models import Gang, GangForecast
from scheduler_core.services import forecasts
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.nodes import node_add
from scheduler_core.services.operator import gang_kill
from scheduler_core.snapshot import build
from tests.stored_forecasts.world import queue_world

pytestmark = pytest.mark.django_db(transaction=True)


class Pause:
    """Where the run waits until the test lets it go on."""

    def __init__(self) -> None:
        self.reached, self.go = threading.Event(), threading.Event()

    def __call__(self) -> None:
        self.reached.set()
        assert self.go.wait(30), "the test never let the forecast go on"


def run_paused(monkeypatch, reading: Pause, writing: Pause) -> tuple[threading.Thread, list]:
    facts, bulk_create = forecasts.gang_facts, GangForecast.objects.bulk_create

    def facts_then_pause():
        out = facts()
        reading()  # inside the read transaction, the snapshot read
        return out

    def write_then_pause(*args, **kwargs):
        out = bulk_create(*args, **kwargs)
        writing()  # inside the write transaction, the rows written, not committed
        return out

    monkeypatch.setattr(forecasts, "gang_facts", facts_then_pause)
    monkeypatch.setattr(GangForecast.objects, "bulk_create", write_then_pause)
    errors: list = []

    def run():
        try:
            forecasts.forecasts_run()
        except Exception as error:  # reported by the test, not lost in the thread
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=run, name="forecast")
    thread.start()
    return thread, errors


def no_lock_waits() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '5s'")


def every_gang_row_free() -> None:
    """Every gang row can be locked FOR UPDATE at once: the run holds none of them."""
    with transaction.atomic():
        list(Gang.objects.select_for_update(nowait=True).values_list("pk", flat=True))


class WatchedLock:
    """The cycle's snapshot-cache lock, noting every thread that takes it."""

    def __init__(self, lock) -> None:
        self.lock, self.takers = lock, set()

    def __enter__(self):
        self.takers.add(threading.current_thread().name)
        return self.lock.__enter__()

    def __exit__(self, *exc):
        return self.lock.__exit__(*exc)

    def locked(self) -> bool:
        return self.lock.locked()


def test_cycles_run_bind_and_change_gangs_while_a_forecast_reads_and_writes(monkeypatch):
    gangs = queue_world()
    no_lock_waits()
    cycle_lock = WatchedLock(build.REUSE.lock)
    monkeypatch.setattr(build.REUSE, "lock", cycle_lock)
    reading, writing = Pause(), Pause()
    thread, errors = run_paused(monkeypatch, reading, writing)
    try:
        assert reading.reached.wait(30), errors
        every_gang_row_free()
        node_add(name="cpu-b", allocatable={"cpu": "8", "memory": "32Gi"})
        report = cycle_run(holder="test")
        assert report.ran and report.pods_bound == 2  # ml/first, on the new node
        reading.go.set()

        assert writing.reached.wait(30), errors
        # Its rows written, not committed: the gangs it writes forecasts of are free, a cycle
        # runs, an operator kills one of them (FOR UPDATE of its row), another is deleted.
        every_gang_row_free()
        node_add(name="cpu-c", allocatable={"cpu": "8", "memory": "32Gi"})
        report = cycle_run(holder="test")
        assert report.ran and report.pods_bound == 2  # ml/second
        gang_kill(gang=Gang.objects.get(pk=gangs["third"].pk), by="olga")
        Gang.objects.filter(pk=gangs["second"].pk).delete()
    finally:
        reading.go.set()
        writing.go.set()
        thread.join(30)
    assert errors == []
    # The run built its snapshot with caches of its own: the cycle's lock only the cycles took.
    assert cycle_lock.takers == {threading.main_thread().name}
    assert forecasts.FORECAST_REUSE.gangs.built > 0
    # The run wrote its forecasts (of the snapshot's moment), which readers now ignore for gangs
    # that no longer wait; the next run drops them.
    assert GangForecast.objects.count() == 3
    monkeypatch.undo()
    forecasts.forecasts_run()
    assert not GangForecast.objects.exists()
