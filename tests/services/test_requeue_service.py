"""The worker's side of the engine's requeue book: a parked gang keeps its stored explanation and
the time it was computed, the cycle row counts the units parked, and the worker's log says so."""

from __future__ import annotations

import logging

import pytest

from scheduler_core.engine.actions import park
from scheduler_core.models import Gang, SchedulingCycle
from scheduler_core.services.cycle import CycleReport, cycle_run
from tests.loop.factories import make_gang, make_nodes

pytestmark = pytest.mark.django_db


@pytest.fixture
def long_backoff(monkeypatch):
    """Parked units stay parked between this test's cycles however slow the machine is."""
    monkeypatch.setattr(park, "backoff", lambda failures, most: 3600.0)


def test_a_parked_gang_keeps_its_explanation_and_its_time(long_backoff):
    make_nodes(4, cpu=4)
    make_gang("other/fill", 4, cpu=3)
    cycle_run(holder="test")  # one 3-CPU pod on each node
    fill = Gang.objects.get(name="fill")
    fill.members.update(preemptible=False)
    Gang.objects.filter(pk=fill.pk).update(preemptible=False)
    head = make_gang("ml/head", 3, cpu=4, priority=1)  # waits for three of them to end
    head.members.update(priority=1)
    small = make_gang("ml/small", 2, cpu=1.5)  # behind it, with no room on n3

    cycle_run(holder="test")
    first = SchedulingCycle.objects.first()
    small.refresh_from_db()
    assert small.reason == "InsufficientResources"
    assert small.details["explained_at"] == first.started_at.isoformat()
    assert first.units_parked == 0

    cycle_run(holder="test")
    second = SchedulingCycle.objects.first()
    assert second.pk != first.pk and second.units_parked == 1
    small.refresh_from_db()
    assert small.details["explained_at"] == first.started_at.isoformat()


def test_the_worker_logs_the_units_parked(caplog, monkeypatch):
    from scheduler_core import tasks

    monkeypatch.setattr(tasks, "events_publish", lambda: 0)
    monkeypatch.setattr(tasks, "_redis", lambda: type("R", (), {"delete": lambda self, key: 0})())
    report = CycleReport(ran=True, epoch=3, pods_considered=5, units_parked=2, duration_s=0.01)
    monkeypatch.setattr(tasks, "cycle_run", lambda holder: report)
    with caplog.at_level(logging.DEBUG, logger="scheduler_core.tasks"):
        tasks.schedule.apply()
    messages = [r.getMessage() for r in caplog.records if r.name == "scheduler_core.tasks"]
    assert messages == ["cycle epoch 3: 5 considered (2 units parked), nothing changed in 0.010s"]
