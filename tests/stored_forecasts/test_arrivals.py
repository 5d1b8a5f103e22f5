"""The forecast run's arrival model (services/forecast_arrivals.py): the gangs submitted in the
last GANGSCHED_FORECAST_ARRIVAL_WINDOW_S seconds, finished or not, are handed to the forecast,
and small ones repeated ahead of a big waiting gang make its forecast later; 0 turns it off."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from scheduler_core.models import Gang, GangForecast, Member
from scheduler_core.services.forecast_arrivals import recent_arrivals
from scheduler_core.services.forecasts import forecasts_run
from tests.cluster.world import cpu_node
from tests.stored_forecasts.world import bind, submit

pytestmark = pytest.mark.django_db


def _world() -> Gang:
    """One 8-CPU node that ``running`` fills for ten minutes; ``big`` (the whole node for 3,000 s)
    waits; five one-minute gangs of the whole node were submitted over the last 500 s, every
    100 s, and are done."""
    cpu_node("cpu-a", cpu="8")
    running = submit("running", "alice", duration=600.0)
    bind(running)
    Member.objects.filter(gang=running).update(phase="Running", started_at=timezone.now())
    big = submit("big", "alice", duration=3000.0)
    now = timezone.now()
    for i in range(5):
        small = submit(f"small-{i}", "bob")
        Gang.objects.filter(pk=small.pk).update(
            phase="Finished", created=now - timedelta(seconds=500 - 100 * i)
        )
        Member.objects.filter(gang=small).update(phase="Succeeded")
    return big


def _big_start() -> float:
    forecasts_run()
    row = GangForecast.objects.get(gang__name="big")
    return (row.start_p50 - row.made_at).total_seconds()


def test_recent_submissions_repeated_ahead_of_a_big_gang_make_it_start_later(settings):
    _world()
    settings.GANGSCHED_FORECAST_ARRIVAL_WINDOW_S = 0
    alone = _big_start()
    assert 590 < alone < 640  # when ``running`` ends
    settings.GANGSCHED_FORECAST_ARRIVAL_WINDOW_S = 600
    later = _big_start()
    # The copies come from +100 s to +500 s and go first, one minute each, once the node is free.
    assert later > alone + 240
    assert set(GangForecast.objects.values_list("gang__name", flat=True)) == {"big"}  # no copy stored


def test_the_submissions_handed_to_the_forecast(settings):
    _world()
    settings.GANGSCHED_FORECAST_ARRIVAL_WINDOW_S = 600
    arrivals = recent_arrivals(time.time())
    assert arrivals.window_s == 600
    shapes = sorted((s.min_member, s.pods, s.duration, s.source, s.queue) for s in arrivals.submissions)
    assert len(shapes) == 7  # the five small ones, done; running; big
    assert shapes[0] == (2, 2, 60.0, "declared", "default")
    assert all(s.requests == {"cpu": 4000, "memory": 2**30} for s in arrivals.submissions)
    left = recent_arrivals(time.time(), leave_out={"ml/big"})
    assert len(left.submissions) == 6


def test_a_window_of_zero_hands_none(settings):
    _world()
    settings.GANGSCHED_FORECAST_ARRIVAL_WINDOW_S = 0
    assert recent_arrivals(time.time()) is None
