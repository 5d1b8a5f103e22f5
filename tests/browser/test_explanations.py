"""Why a gang waits, on its page in Chromium, on ``make run``'s demo cluster (12 CPU nodes, 4 GPU
nodes tainted ``nvidia.com/gpu=present:NoSchedule``): a GPU gang that does not tolerate the taint
is told so with the count of nodes ("4 node(s) had untolerated taint"), not that resources are
short; a gang whose node selector no node matches is counted under the selector. The gang list
shows the one-line message. Screenshots of both pages go to ``tests/artifacts/``."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from scheduler_core.models import Gang

from .conftest import ARTIFACTS, api_post, kick_until, log_in
from .test_live_pages import gang_json

pytestmark = pytest.mark.django_db(transaction=True)

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists"}


def reason_of(name: str) -> str:
    return Gang.objects.filter(namespace="ml", name=name).values_list("reason", flat=True).first() or ""


def rows(page) -> list[tuple[str, str, str, str]]:
    return [
        tuple(row)
        for row in page.locator("table.why-nodes tbody tr").evaluate_all(
            """rows => rows.map(r => [r.dataset.reason || 'available',
                ...[...r.querySelectorAll('td')].map(td => td.innerText.trim())])"""
        )
    ]


def gpu_gang(name: str, **template) -> dict:
    gang = gang_json(name, 2, cpu="4")
    gang["tasks"][0]["template"]["requests"]["nvidia.com/gpu"] = "1"
    gang["tasks"][0]["template"].update(template)
    return gang


def test_the_gang_page_counts_nodes_by_reason_for_a_taint_and_a_selector(page, live, alice):
    call_command("seed_cluster", stdout=StringIO())
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, live, "alice", "alice-pass-123")
    for gang in (
        gpu_gang("untolerated"),
        gpu_gang("selector", tolerations=[GPU_TOLERATION], nodeSelector={"gpu-model": "h100"}),
    ):
        response = api_post(page, live, "/api/v1/gangs/", gang)
        assert response.status == 201, response.text()
    kick_until(lambda: reason_of("untolerated") and reason_of("selector"), what="both gangs explained")

    page.goto(live + "/gangs/ml/untolerated/")
    explanation = page.locator("section.explanation")
    assert explanation.locator(".reason").inner_text() == "NoFeasibleNodes"
    message = explanation.locator(".message").inner_text()
    assert message.startswith(
        "0/16 nodes are available: 4 node(s) had untolerated taint {nvidia.com/gpu: present}, "
        "12 Insufficient nvidia.com/gpu"
    )
    assert "InsufficientResources" not in explanation.inner_text()
    assert rows(page) == [
        (
            "UntoleratedTaint",
            "4",
            "node(s) had untolerated taint {nvidia.com/gpu: present}",
            "nvidia.com/gpu=present:NoSchedule",
        ),
        ("Insufficient", "12", "Insufficient nvidia.com/gpu", "nvidia.com/gpu"),
    ]
    caption = explanation.locator("table.why-nodes caption").inner_text()
    assert caption.startswith(
        "2 members, each {cpu 4, memory 1Gi, nvidia.com/gpu 1}: 0 of 16 nodes can take one now."
    )
    assert explanation.locator("table.why-nodes tfoot").inner_text().split() == [
        "16",
        "nodes",
        "in",
        "the",
        "cluster",
    ]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explanation-taint.png"), full_page=True)

    page.goto(live + "/gangs/ml/selector/")
    assert page.locator("section.explanation .reason").inner_text() == "NoFeasibleNodes"
    assert rows(page) == [("NodeSelector", "16", "node(s) didn't match the node selector", "gpu-model=h100")]

    page.goto(live + "/gangs/")
    cell = page.locator('tr:has(a[href="/gangs/ml/untolerated/"]) .why')
    assert cell.inner_text().startswith(
        "NoFeasibleNodes: 0/16 nodes are available: 4 node(s) had untolerated taint"
    )
    page.screenshot(path=str(ARTIFACTS / "explanation-list.png"), full_page=True)
