"""The forecast run (services/forecasts.py, tasks.forecast_gangs): every pending gang's forecast
stored, replaced by the next run, dropped once its gang no longer waits; nothing when turned off
or while another run holds the lock."""

from __future__ import annotations

from datetime import timedelta

import pytest

from scheduler_core import tasks
from scheduler_core.models import Gang, GangForecast
from scheduler_core.services.forecasts import forecasts_run
from tests.stored_forecasts.world import queue_world

pytestmark = pytest.mark.django_db


def stored() -> dict[str, GangForecast]:
    return {f.gang.name: f for f in GangForecast.objects.select_related("gang")}


def test_a_run_stores_every_pending_gang_forecast():
    gangs = queue_world()
    run = forecasts_run()

    rows = stored()
    assert set(rows) == {"first", "second", "third"}  # the running gang has none
    assert run.gangs == 3 and {key for _, key, _ in run.changed} == {"ml/first", "ml/second", "ml/third"}
    first, second, third = rows["first"], rows["second"], rows["third"]
    assert [f.status for f in (first, second, third)] == ["expected"] * 3
    # One after the other, each when the one before ends: the running gang's 600 s, then 60 s each.
    started = gangs["running"].members.first().started_at
    assert abs((first.start_p50 - started).total_seconds() - 600) < 5
    assert abs((second.start_p50 - first.start_p50).total_seconds() - 60) < 5
    assert abs((third.start_p50 - second.start_p50).total_seconds() - 60) < 5
    for f in rows.values():
        assert f.start_p10 <= f.start_p50 <= f.start_p90
    # Kueue's positions count everyone's; the own ones alice's and bob's only.
    assert [(f.position_in_queue, f.own_in_queue) for f in (first, second, third)] == [(0, 0), (1, 0), (2, 1)]
    assert [(f.position_in_cluster, f.own_in_cluster) for f in (first, second, third)] == [
        (0, 0),
        (1, 0),
        (2, 1),
    ]
    assert first.waiting_reason and first.waiting_message


def test_a_second_run_replaces_the_first():
    gangs = queue_world()
    forecasts_run()
    made = GangForecast.objects.get(gang=gangs["third"]).made_at

    Gang.objects.filter(pk=gangs["first"].pk).update(phase="Killed")  # no longer waits
    run = forecasts_run()

    rows = stored()
    assert set(rows) == {"second", "third"}  # the killed gang's forecast is gone
    assert rows["third"].made_at > made
    assert rows["third"].position_in_queue == 1  # one ahead now, not two
    assert GangForecast.objects.count() == 2
    assert {key for _, key, _ in run.changed} == {"ml/second", "ml/third"}


def test_an_unchanged_forecast_is_not_announced_again():
    queue_world()
    forecasts_run()
    assert forecasts_run().changed == []


def test_the_forecast_of_a_deleted_gang_is_never_read_and_goes_at_the_next_run():
    gangs = queue_world()
    forecasts_run()
    Gang.objects.filter(pk=gangs["second"].pk).delete()  # the forecast row waits for the next run
    assert set(stored()) == {"first", "third"}
    forecasts_run()
    assert GangForecast.objects.count() == 2


def test_the_task_does_nothing_at_interval_zero(settings, monkeypatch):
    queue_world()
    settings.GANGSCHED_FORECAST_INTERVAL_S = 0
    monkeypatch.setattr(tasks, "forecasts_run", lambda: pytest.fail("ran while turned off"))
    assert tasks.forecast_gangs() == {"ran": False, "reason": "disabled"}
    assert not GangForecast.objects.exists()


def test_the_task_skips_a_run_while_the_previous_one_holds_the_lock(redis_client):
    queue_world()
    held = tasks._redis().lock(tasks.FORECAST_LOCK_KEY, timeout=60)
    assert held.acquire(blocking=False)
    try:
        assert tasks.forecast_gangs()["ran"] is False
        assert not GangForecast.objects.exists()
    finally:
        held.release()
    assert tasks.forecast_gangs() == {"ran": True, "gangs": 3, "changed": 3}
    assert GangForecast.objects.count() == 3


def test_the_beat_schedule_follows_the_interval():
    from django.conf import settings

    entry = settings.CELERY_BEAT_SCHEDULE["gang-forecasts"]
    assert entry["task"] == "scheduler_core.tasks.forecast_gangs"
    assert entry["schedule"] == settings.GANGSCHED_FORECAST_INTERVAL_S == 30.0


def test_stale_rows_age():
    """A forecast older than three intervals is stale (reads/forecasts.py words it)."""
    from scheduler_core.reads.forecasts import is_stale

    queue_world()
    forecasts_run()
    row = GangForecast.objects.first()
    assert not is_stale(row, now=row.made_at + timedelta(seconds=89))
    assert is_stale(row, now=row.made_at + timedelta(seconds=91))


def test_a_gang_that_never_fits_is_not_said_to_wait_for_pods_without_an_estimate():
    """Every running pod here has an estimate: a gang too large for the cluster gets no start
    because nothing that ends makes room for it, and its note says so (services/forecasts.py,
    ``note_checked``: the forecast's own note blames pods without an estimate)."""
    from scheduler_core.services import forecasts
    from scheduler_core.services.submit import gang_submit

    queue_world()
    gang_submit(
        namespace="ml",
        name="huge",
        min_member=2,
        pods=[{"name": f"huge-{i}", "requests": {"cpu": "8"}, "duration_seconds": 60} for i in range(3)],
        submitter="alice",
    )
    forecasts_run()
    huge = GangForecast.objects.get(gang__name="huge")
    assert huge.status == "none"
    assert huge.note == forecasts.note_checked(forecasts.NO_MORE_ENDS, endless=False)
    assert huge.note.endswith("it does not fit the cluster as it is")
