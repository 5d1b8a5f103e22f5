"""Forecasts in Chromium, without a reload: the Gangs list's Starts column fills in when a
forecast run is stored, and a gang's page's card follows the next run (its place moves up once
a gang ahead of it is gone). Each waiting page carries a marker in ``window`` that a reload
would lose."""

from __future__ import annotations

import re

import pytest

from scheduler_core.events import forecasts_announce
from scheduler_core.models import Gang
from scheduler_core.services.forecasts import forecasts_run
from tests.stored_forecasts.world import queue_world

from .conftest import log_in, wait_live
from .test_live_lists import off_the_loop
from .test_live_pages import assert_not_reloaded, mark

pytestmark = pytest.mark.django_db(transaction=True)


def forecast_and_announce() -> None:
    run = forecasts_run()
    forecasts_announce(run.made_at, run.changed)


def starts(page, key: str) -> str:
    return page.inner_text(f'td.starts[data-gang="{key}"]').strip()


def test_the_starts_column_and_the_gang_page_follow_forecast_runs(page, live, olga):
    queue_world()
    log_in(page, live, "olga", "olga-pass-123")
    page.goto(live + "/gangs/")
    wait_live(page)
    mark(page)
    assert starts(page, "ml/third") == "—"  # no run yet

    off_the_loop(forecast_and_announce)
    cell = "document.querySelector('td.starts[data-gang=\"ml/third\"]')"
    page.wait_for_function(f"() => {cell}.textContent.trim().startsWith('in ~')", timeout=15_000)
    assert re.fullmatch(r"in ~\d+ min \(.+\)", starts(page, "ml/third")), starts(page, "ml/third")
    assert starts(page, "ml/running") == "—"
    assert_not_reloaded(page)

    page.goto(live + "/gangs/ml/third/")
    wait_live(page)
    mark(page)
    assert "3rd in queue default" in page.inner_text("#gang-forecast")
    Gang.objects.filter(namespace="ml", name="first").update(phase="Killed")  # no longer waits
    off_the_loop(forecast_and_announce)
    page.wait_for_function(
        "() => document.getElementById('gang-forecast').textContent.includes('2nd in queue default')",
        timeout=15_000,
    )
    assert re.search(r"made \d+ s ago", page.inner_text("#gang-forecast"))
    assert_not_reloaded(page)
