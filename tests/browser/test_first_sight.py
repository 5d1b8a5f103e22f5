"""The dashboard as a new user first sees it, in Chromium at 1440x900:
requests and capacities as Kubernetes writes them, also once the live layer has redrawn the
bars; the pods a node runs counted against its ``pods``; one line per worker process however
many cycle tasks it ran; a legend and a tooltip for the progress bars."""

from __future__ import annotations

import re

import pytest

from tests.loop.factories import make_nodes

from .conftest import api_post, kick_until, log_in, wait_live
from .test_live_pages import assert_not_reloaded, bar, bound, gang_json, mark

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_new_user_reads_quantities_pod_counts_workers_and_the_progress_legend(page, live, olga):
    page.set_viewport_size({"width": 1440, "height": 900})
    make_nodes(2)  # 4 CPUs, 16Gi and 110 pods each
    log_in(page, live, "olga", "olga-pass-123")
    wait_live(page)
    mark(page)
    memory = page.locator('#overview-bars .bar[data-resource="memory"] .bar-label')
    assert memory.inner_text().startswith("memory 0 / 32Gi")
    response = api_post(page, live, "/api/v1/gangs/", gang_json("sight", 2))  # 2 CPUs and 1Gi each
    assert response.status == 201, response.text()
    kick_until(lambda: bound("ml/sight") == 2, what="ml/sight bound")
    page.wait_for_function(  # redrawn by charts.js from /api/v1/cluster/, in the same notation
        """() => document.querySelector('#overview-bars .bar[data-resource="memory"] .bar-label')
                       .textContent.startsWith('memory 2Gi / 32Gi')""",
        timeout=10_000,
    )
    assert (
        page.locator('#overview-bars .bar[data-resource="cpu"] .bar-label')
        .inner_text()
        .startswith("cpu 4 / 8")
    )
    assert_not_reloaded(page)

    page.goto(live + "/")  # the worker ran several cycle tasks, all in one process
    workers = page.locator("#workers [data-worker-process]")
    assert workers.count() == 1
    assert re.fullmatch(r"\S+:\d+: \d+ cycles?, last .+ ago", workers.first.inner_text().strip())

    page.goto(live + "/gangs/ml/sight/")
    assert page.locator(".members td.requests").first.inner_text() == "cpu 2, memory 1Gi"
    assert page.locator(".progress-legend").is_visible()
    assert bar(page, "ml/sight").get_attribute("title").startswith("2 bound, 0 reserved (room held")

    page.goto(live + "/nodes/")
    pods = page.locator('.bar[data-resource="pods"]')
    assert pods.count() == 2
    assert sum(int(pods.nth(i).get_attribute("data-used")) for i in range(2)) == 2
    for i in range(2):
        assert re.fullmatch(r"pods [0-2] / 110 \(\d+%\)", pods.nth(i).locator(".bar-label").inner_text())
