"""The overview's charts follow the cluster without a reload: utilisation rises when a
gang binds, and pending demand, a share of capacity that may pass 100%, rises when a gang too
big for the cluster waits. Each line is a ``<path data-series data-last>`` (static/js/charts.js)."""

from __future__ import annotations

import pytest

from scheduler_core.models import Gang
from tests.loop.factories import make_nodes

from .conftest import api_post, kick_until, log_in, wait_live
from .test_live_pages import assert_not_reloaded, bound, gang_json, mark

pytestmark = pytest.mark.django_db(transaction=True)

UTIL_CPU = '#chart-util path[data-series="cpu"]'
DEMAND_CPU = '#chart-demand path[data-series="cpu"]'


def wait_last(page, selector: str, value: str) -> None:
    page.wait_for_function(
        "([selector, value]) => { const p = document.querySelector(selector);"
        " return p && p.getAttribute('data-last') === value; }",
        arg=[selector, value],
        timeout=10_000,
    )


def test_utilisation_and_pending_demand_move_live(page, live, olga):
    make_nodes(2)  # 8 CPUs, 32Gi in all
    log_in(page, live, "olga", "olga-pass-123")
    wait_live(page)
    mark(page)
    assert page.locator("#chart-demand").count() == 1
    assert page.get_attribute(UTIL_CPU, "data-last") == "0"
    assert page.get_attribute(DEMAND_CPU, "data-last") == "0"
    flat = page.get_attribute(DEMAND_CPU, "d")

    response = api_post(page, live, "/api/v1/gangs/", gang_json("fits", 2))  # 2 x 2 CPUs
    assert response.status == 201, response.text()
    kick_until(lambda: bound("ml/fits") == 2, what="ml/fits bound")
    wait_last(page, UTIL_CPU, "50")

    response = api_post(page, live, "/api/v1/gangs/", gang_json("huge", 4, cpu="4"))  # 16 CPUs: never fits
    assert response.status == 201, response.text()
    kick_until(lambda: Gang.objects.get(name="huge").reason, what="ml/huge explained")
    wait_last(page, DEMAND_CPU, "200")  # 16 of 8 CPUs: the axis grows past 100%

    assert page.get_attribute(DEMAND_CPU, "d") != flat
    legend = "#chart-demand + .chart-legend li[data-series={}]"
    assert page.locator(legend.format("cpu")).text_content() == "cpu 16 (200%)"  # displayed, in cores
    assert page.locator(legend.format("memory")).text_content() == "memory 4Gi (13%)"
    assert page.get_attribute(UTIL_CPU, "data-last") == "50"  # the waiting gang uses nothing
    assert bound("ml/huge") == 0
    assert_not_reloaded(page)
