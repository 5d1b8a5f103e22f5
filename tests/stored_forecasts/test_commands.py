"""``manage.py get gangs`` has a START column (as ``squeue --start``: the expected start, or
N/A) and ``-o json`` the forecast; ``describe gang`` a Forecast section. The commands are the
operator's (no user): Kueue's positions, the explanation as it is."""

from __future__ import annotations

import io
import json
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from scheduler_core.models import GangForecast
from scheduler_core.services.forecasts import forecasts_run
from tests.stored_forecasts.world import queue_world

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_get_gangs_prints_each_expected_start(settings):
    queue_world()
    forecasts_run()
    lines = run("get", "gangs", "-n", "ml").splitlines()
    header = lines[0].split()
    assert header[:4] == ["NAMESPACE", "NAME", "STATE", "START"]
    starts = {line.split()[1]: line.split()[3] for line in lines[1:]}
    assert starts["running"] == "N/A"
    third = timezone.localtime(GangForecast.objects.get(gang__name="third").start_p50)
    assert starts["third"] == third.strftime("%Y-%m-%dT%H:%M:%S")
    rows = {row["name"]: row for row in json.loads(run("get", "gangs", "-n", "ml", "-o", "json"))}
    assert rows["third"]["forecast"]["position_in_queue"] == 2 and rows["running"]["forecast"] is None


def test_describe_gang_has_a_forecast_section():
    queue_world()
    forecasts_run()
    text = run("describe", "gang", "ml/third")
    section = text[text.index("Forecast:") :].splitlines()
    assert re.match(
        r"  Starts: +in ~\d+ min \(.+\): at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d, between .+ and .+", section[1]
    )
    assert (
        section[2].split(":", 1)[1].strip()
        == "3rd in queue default (3rd in its local queue), 3rd in the cluster"
    )
    assert section[3].startswith("  Waiting for:  InsufficientResources: needs 2 x {cpu 4, memory 1Gi}")
    assert "stale" not in section[4]
    GangForecast.objects.update(made_at=timezone.now() - timedelta(minutes=5))
    assert "(stale: older than three forecast intervals)" in run("describe", "gang", "ml/third")
    assert "Forecast:" not in run("describe", "gang", "ml/running")
