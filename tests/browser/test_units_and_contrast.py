"""Units and charts as a new user reads them in Chromium at 1440x900: a queue's chart writes its
axis and its legend in one unit (``Gi``), amounts as displayed with the exact form on hover, the
legends under the charts at a readable size, the time axis starting where the data starts, and
no text short of WCAG AA contrast (axe-core's color-contrast rule, vendor/axe.min.js, MPL-2.0)
on the Overview, Queues, Nodes and gang pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scheduler_core.models import Gang
from scheduler_core.services.queues import queues_put
from tests.loop.factories import make_nodes
from tests.queues.conftest import spec

from .conftest import api_post, kick_until, log_in, wait_live
from .test_live_pages import bound, gang_json

pytestmark = pytest.mark.django_db(transaction=True)
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
MI = 2**20


def contrast_violations(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "() => axe.run(document, { runOnly: { type: 'rule', values: ['color-contrast'] } })"
        ".then(r => r.violations.flatMap(v => v.nodes.map("
        "n => n.target.join(' ') + ': ' + n.failureSummary)))"
    )
    return result


def look(page, live, path: str, name: str) -> None:
    page.goto(live + path)
    page.wait_for_load_state("networkidle")
    assert contrast_violations(page) == [], path


def test_units_agree_charts_read_well_and_text_contrast_passes(page, live, olga):
    page.set_viewport_size({"width": 1440, "height": 900})
    make_nodes(2)  # 8 CPUs, 32Gi
    queues_put([spec("ml", guarantee={"cpu": 1500, "memory": 20000 * MI})])
    log_in(page, live, "olga", "olga-pass-123")
    wait_live(page)
    response = api_post(page, live, "/api/v1/gangs/", gang_json("bert", 2, cpu="1500m", queue="ml"))
    assert response.status == 201, response.text()
    kick_until(lambda: bound("ml/bert") == 2, what="ml/bert bound")
    response = api_post(page, live, "/api/v1/gangs/", gang_json("huge", 4, cpu="4"))  # never fits
    kick_until(lambda: Gang.objects.get(name="huge").reason, what="ml/huge explained")

    look(page, live, "/queues/?chart=ml", "queues")
    bar = page.locator('.queue-bar[data-queue="ml"][data-resource="memory"]')
    assert "guarantee 19.5Gi" in bar.inner_text()  # 20000Mi, displayed
    assert "guarantee 20000Mi" in bar.get_attribute("title")  # exact on hover
    assert "guarantee 1.5" in page.locator('.queue-bar[data-queue="ml"][data-resource="cpu"]').inner_text()
    chart = page.locator('#queue-charts svg[data-resource="memory"]')
    ticks = chart.locator("text").all_text_contents()
    legend = page.locator('#queue-charts svg[data-resource="memory"] + .chart-legend li').all_text_contents()
    assert legend == ["usage 2Gi", "fair share 19.5Gi", "guarantee 19.5Gi"] or legend[0] == "usage 2Gi", (
        legend
    )
    units = {re.sub(r"[0-9.]", "", t) for t in ticks if re.match(r"^[0-9.]+[KMGT]i$", t)}
    assert units == {"Gi"}, ticks  # the axis in the legend's unit
    assert ticks[-1] == "now" and "-60min" not in ticks  # a chart of a few minutes spans them
    # Where a time axis starts, in the units durations take: never "-0 min" in the first minute.
    starts = page.evaluate("[40e3, 12 * 60e3, 90 * 60e3, 3 * 3600e3].map(gangschedUnits.ago)")
    assert starts == ["-40s", "-12min", "-90min", "-3h"]
    size = page.locator("#queue-charts .chart-legend li").first.evaluate("e => getComputedStyle(e).fontSize")
    assert float(size.rstrip("px")) >= 12

    look(page, live, "/", "overview")
    ticks = page.locator("#chart-util text").all_text_contents()
    assert "-60min" not in ticks  # the time axis starts where the data starts
    assert (
        page.locator("#chart-demand + .chart-legend li[data-series=cpu]").text_content().startswith("cpu 16 ")
    )
    label = page.locator('#overview-bars .bar[data-resource="cpu"] .bar-label').inner_text()
    assert label.startswith("cpu 3 / 8")

    look(page, live, "/nodes/", "nodes")
    look(page, live, "/gangs/ml/bert/", "gang")
    assert page.locator(".members td.requests").first.inner_text() == "cpu 1.5, memory 1Gi"
    assert page.locator(".members td.requests .qty").first.get_attribute("title") == "1500m"
