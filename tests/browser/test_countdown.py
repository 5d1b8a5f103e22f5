"""The gang page counts down to the gang's timeout in the browser, from the deadline the server
rendered, and says when no clock runs."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from scheduler_core.models import Gang
from tests.loop.factories import make_gang, make_nodes

from .conftest import ARTIFACTS, log_in

pytestmark = pytest.mark.django_db(transaction=True)

COUNTING = re.compile(r"Hard after 120 s: times out in (\d+) s \(at \d\d:\d\d:\d\d\)")


def test_the_gang_page_counts_down_to_the_timeout_and_says_when_no_clock_runs(page, live, olga):
    page.set_viewport_size({"width": 1440, "height": 900})
    make_nodes(1, cpu=1)
    started = make_gang("team/started", 4, cpu=1, mode="NonStrict", wait_seconds=120)
    Gang.objects.filter(pk=started.pk).update(
        phase="Scheduling", wait_started=timezone.now() - timedelta(seconds=10)
    )
    make_gang("team/unplaced", 2, cpu=8, wait_seconds=60)  # no node could take a member
    log_in(page, live, "olga", "olga-pass-123")

    page.goto(live + "/gangs/team/started/")
    timeout = page.locator("dd.timeout")
    first = COUNTING.fullmatch(timeout.inner_text().strip())
    assert first, timeout.inner_text()
    page.wait_for_function(
        "(before) => !document.querySelector('dd.timeout').textContent.includes(before)",
        arg=f"in {first.group(1)} s",
        timeout=10_000,
    )
    second = COUNTING.fullmatch(timeout.inner_text().strip())
    assert second and int(second.group(1)) < int(first.group(1)) <= 110
    page.screenshot(path=str(ARTIFACTS / "gang-countdown.png"))

    page.goto(live + "/gangs/team/unplaced/")
    assert page.locator("dd.timeout").inner_text().strip() == (
        "Hard after 60 s, counted from when a member can first be placed: no clock yet"
    )
