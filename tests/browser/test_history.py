"""The History page in Chromium, as an operator in Tokyo: the page comes back once in the browser's
zone, then filtering by kind (the boxes) and by gang (the field) shows the right rows, and the
gang page's link opens that gang's history."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from playwright.sync_api import Error as PlaywrightError

from scheduler_core.models import GangEvent
from tests.cast import make_gang

from .conftest import log_in

pytestmark = pytest.mark.django_db(transaction=True)

T0 = dt.datetime(2025, 5, 1, 12, 0, tzinfo=dt.UTC)


def shown(page) -> list[list[str]]:
    """(gang, kind, by) of each row, top to bottom; without the ``explained`` events the live
    worker's cycles add to these pending gangs whenever they run (newest, so first)."""
    rows = page.locator("table.history tbody tr[data-gang]").evaluate_all(
        "rows => rows.map(r => [r.dataset.gang, r.dataset.kind, r.querySelector('.actor').textContent])"
    )
    return [row for row in rows if row[1] != "explained"]


ZONE_SHOWN = "() => (document.getElementById('history-zone') || {dataset: {}}).dataset.zone"


def wait_for_zone(page, zone: str) -> None:
    """Until the page shows times in ``zone``: history.js reloads the page once, and an
    evaluation that the reload interrupts is tried again on the new page."""
    deadline = time.monotonic() + 20
    while True:
        try:
            page.wait_for_load_state()
            if (
                page.evaluate("() => (document.getElementById('history-zone') || {dataset: {}}).dataset.zone")
                == zone
            ):
                return
        except PlaywrightError:
            pass  # the execution context went with the reload
        if time.monotonic() > deadline:
            raise AssertionError(f"the History page never showed times in {zone}")
        time.sleep(0.1)


def test_an_operator_filters_the_history_by_kind_and_by_gang(browser, live, olga):
    train = make_gang("ml", "train", submitter="alice", queue="gpu")
    detect = make_gang("cv", "detect", submitter="bob", queue="gpu")
    GangEvent.objects.filter(gang__in=[train, detect]).update(created=T0)
    for minute, gang, kind, details in [
        (1, train, "bound", {}),
        (2, detect, "timed_out", {}),
        (3, detect, "retried", {"by": "olga"}),
        (4, train, "killed", {"by": "olga"}),
    ]:
        created = T0 + dt.timedelta(minutes=minute)
        GangEvent.objects.create(gang=gang, kind=kind, reason=kind, details=details, created=created)
    context = browser.new_context(viewport={"width": 1440, "height": 900}, timezone_id="Asia/Tokyo")
    page = context.new_page()
    try:
        log_in(page, live, "olga", "olga-pass-123")
        page.click("nav >> text=History")
        wait_for_zone(page, "Asia/Tokyo")
        assert [row[1] for row in shown(page)] == [
            "killed",
            "retried",
            "timed_out",
            "bound",
            "created",
            "created",
        ]
        first = page.locator("table.history tbody tr[data-kind=killed] time").inner_text()
        assert first == "2025-05-01 21:04:00"  # 12:04 UTC

        page.check("input[name=kind][value=retried]")
        page.check("input[name=kind][value=killed]")
        page.click("form.filters button[type=submit]")
        page.wait_for_url("**kind=killed**")
        assert shown(page) == [["ml/train", "killed", "olga"], ["cv/detect", "retried", "olga"]]

        page.uncheck("input[name=kind][value=retried]")
        page.uncheck("input[name=kind][value=killed]")
        page.fill("input[name=gang]", "cv/detect")
        page.click("form.filters button[type=submit]")
        page.wait_for_url("**gang=cv%2Fdetect**")
        assert shown(page) == [
            ["cv/detect", "retried", "olga"],
            ["cv/detect", "timed_out", "scheduler"],
            ["cv/detect", "created", "bob"],
        ]

        page.goto(live + "/gangs/ml/train/")
        page.click("a.history-link")
        page.wait_for_url("**/history/?gang=ml/train")
        assert [row[1] for row in shown(page)] == ["killed", "bound", "created"]
        assert "Times in Asia/Tokyo" in page.locator("#history-zone").inner_text()
    finally:
        context.close()
