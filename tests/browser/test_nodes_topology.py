"""The topology on the Nodes page in Chromium, end to end: a gang of 8-GPU pods
submitted through the API and bound by the worker into rack r2; the heat map then shows each
block and rack with its free and used GPUs, picking a rack narrows the node table to its nodes,
and the gang's page shows the rack each member landed in."""

from __future__ import annotations

import pytest

from scheduler_core.models import Node, Topology

from .conftest import api_post, kick_until, log_in
from .test_live_pages import bound, gang_json

pytestmark = pytest.mark.django_db(transaction=True)

BLOCK, RACK, HOST = "topology.gangsched.io/block", "topology.gangsched.io/rack", "kubernetes.io/hostname"
#: node: (block, rack); two 8-GPU nodes a rack, racks r1 and r2 in block b1, r3 in b2.
FLEET = {
    "g1": ("b1", "r1"),
    "g2": ("b1", "r1"),
    "g3": ("b1", "r2"),
    "g4": ("b1", "r2"),
    "g5": ("b2", "r3"),
    "g6": ("b2", "r3"),
}


def cells(page, level: str) -> dict[str, dict]:
    """The heat map cells of ``level``: domain -> its figures and accessible label."""
    return {
        cell["domain"]: cell
        for cell in page.locator(f'.heatmap[data-level="{level}"] .heat-cell').evaluate_all(
            """cells => cells.map(c => ({domain: c.dataset.domain, used: c.dataset.used, free: c.dataset.free,
                capacity: c.dataset.capacity, label: c.getAttribute('aria-label'), text: c.innerText}))"""
        )
    }


def table(page) -> list[str]:
    return page.locator("table.nodes tbody tr[data-node]").evaluate_all(
        "rows => rows.map(r => r.dataset.node)"
    )


def test_the_nodes_page_shows_the_topology_and_filters_by_a_domain(page, live, olga):
    for name, (block, rack) in FLEET.items():
        Node.objects.create(
            name=name,
            allocatable={"cpu": 32000, "memory": 128 * 2**30, "nvidia.com/gpu": 8, "pods": 110},
            labels={BLOCK: block, RACK: rack, HOST: name},
        )
    Topology.objects.create(name="dc", levels=[BLOCK, RACK, HOST])
    log_in(page, live, "olga", "olga-pass-123")
    gang = gang_json("llm", 2, cpu="4")
    gang["tasks"][0]["template"]["requests"]["nvidia.com/gpu"] = "8"
    gang["tasks"][0]["template"]["nodeSelector"] = {RACK: "r2"}
    response = api_post(page, live, "/api/v1/gangs/", gang)
    assert response.status == 201, response.text()
    kick_until(lambda: bound("ml/llm") == 2, what="ml/llm bound")

    page.goto(live + "/nodes/")

    assert page.locator("#topology .topology-map h3").all_inner_texts() == ["dc"]
    blocks, racks = cells(page, BLOCK), cells(page, RACK)
    assert page.locator(f'.heatmap[data-level="{HOST}"]').count() == 0  # one node each: the table
    assert {d: (c["used"], c["free"], c["capacity"]) for d, c in blocks.items()} == {
        "b1": ("16", "16", "32"),
        "b2": ("0", "16", "16"),
    }
    assert {d: (c["used"], c["free"]) for d, c in racks.items()} == {
        "r1": ("0", "16"),
        "r2": ("16", "0"),
        "r3": ("0", "16"),
    }
    assert racks["r2"]["label"] == "rack r2: 0 free, 16 used of 16 GPUs; 56 free, 8 used of 64 CPUs, 2 nodes"
    assert "0 free · 16 used" in racks["r2"]["text"]
    assert table(page) == list(FLEET)

    page.locator(f'.heatmap[data-level="{RACK}"] .heat-cell[data-domain="r2"]').click()
    page.wait_for_url(lambda url: url.endswith("&domain=r2"))
    assert table(page) == ["g3", "g4"]
    assert page.locator(".heat-cell[aria-current=true]").get_attribute("data-domain") == "r2"
    assert "The 2 nodes of topology.gangsched.io/rack = r2." in page.locator(".node-filter").inner_text()

    page.locator(f'.heatmap[data-level="{BLOCK}"] .heat-cell[data-domain="b2"]').click()
    page.wait_for_url(lambda url: url.endswith("&domain=b2"))
    assert table(page) == ["g5", "g6"]

    page.get_by_role("link", name="Show all nodes").click()
    page.wait_for_url(live + "/nodes/")
    assert table(page) == list(FLEET)

    page.goto(live + "/gangs/ml/llm/")
    domains = page.locator("table.members td.domain").all_inner_texts()  # block, rack, host per member
    assert domains[0:2] == domains[3:5] == ["b1", "r2"] and {domains[2], domains[5]} == {"g3", "g4"}
    assert "1 block, 1 rack, 2 hostnames" in page.locator(".topology-spans").inner_text()
