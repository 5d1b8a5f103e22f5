"""Pages whose cost does not grow with members: the Nodes page reads its page of nodes
in SQL and the members of those nodes only, its usage comes from the stored per-node usage; the
overview reads the stored usage and its per-minute changes, no member at all; and no page makes
more queries when there are more members."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from scheduler_core.models import Member, Node, Topology
from scheduler_core.reads.node_usage import usage_from_members
from tests.pages.conftest import make_gang

pytestmark = pytest.mark.django_db

PAGES = ["/", "/gangs/", "/gangs/ml/g0/", "/nodes/", "/timed-out/", "/queues/"]
RACK = "topology.gangsched.io/rack"


def nodes(count: int, *, racks: bool = False) -> list[str]:
    names = [f"n{i:03d}" for i in range(count)]
    Node.objects.bulk_create(
        Node(name=name, allocatable={"cpu": 64000, "memory": 2**38, "pods": 110},
             labels={RACK: f"r{i // 10}"} if racks else {})
        for i, name in enumerate(names)
    )  # fmt: skip
    if racks:
        Topology.objects.create(name="dc", levels=[RACK])
    return names


def bound_gangs(count: int, names: list[str], *, start: int = 0, pods: int = 4) -> None:
    """``count`` running gangs of ``pods`` pods spread over the nodes ``names``."""
    for g in range(start, start + count):
        gang = make_gang("ml", f"g{g}", submitter="olga", pods=pods)
        for j, member in enumerate(gang.members.order_by("name")):
            Member.objects.filter(pk=member.pk).update(
                node=names[(g * pods + j) % len(names)], phase="Running", requests={"cpu": 1000 + g}
            )


def queries(client, url: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return [q["sql"] for q in captured.captured_queries]


def test_a_page_of_nodes_shows_the_members_usage_of_those_nodes(as_olga):
    names = nodes(250)
    bound_gangs(30, names[95:130])
    truth = usage_from_members()

    response = as_olga.get("/nodes/?page=2")

    rows = response.context["nodes"]
    assert [row["node"].name for row in rows] == names[100:200]
    for row in rows:
        expected = truth.get(row["node"].name, {})
        assert row["pods"] == expected.get("pods", 0)
        assert row["used"].get("cpu", 0) == expected.get("cpu", 0)
        assert row["used"].get("pods", 0) == expected.get("pods", 0)  # the node has a pods resource
    assert any(row["gangs"] for row in rows) and response.context["page"].paginator.count == 250


@pytest.mark.parametrize("racks", [False, True])
def test_the_nodes_page_reads_the_members_of_its_page_only(as_olga, racks):
    """Each query of the member table names the page's nodes: none scans every member."""
    names = nodes(150, racks=racks)
    bound_gangs(10, names)

    sqls = queries(as_olga, "/nodes/" + (f"?level={RACK}&domain=r3" if racks else ""))

    on_members = [sql for sql in sqls if re.search(r'\bFROM "?scheduler_core_member"?\b', sql)]
    assert on_members and all("node = ANY" in sql for sql in on_members)
    if not racks:  # no topology: the page of nodes is a LIMIT in SQL, not a slice of every node
        on_nodes = [sql for sql in sqls if 'FROM "scheduler_core_node"' in sql and "COUNT(*)" not in sql]
        assert on_nodes and all("LIMIT 100" in sql for sql in on_nodes)


@pytest.mark.parametrize("url", PAGES)
def test_no_page_makes_more_queries_for_more_members(as_olga, url):
    names = nodes(20)
    bound_gangs(3, names)
    few = len(queries(as_olga, url))
    bound_gangs(40, names, start=3, pods=8)

    assert len(queries(as_olga, url)) <= few


def test_the_overview_reads_no_member(as_olga):
    """Today's use is the stored usage and its last hour the stored per-minute changes: the
    member table is not read at all, however many pods are bound or were this hour."""
    nodes(5)
    bound_gangs(2, [f"n{i:03d}" for i in range(5)])

    sqls = queries(as_olga, "/")

    assert not [sql for sql in sqls if re.search(r'FROM "?scheduler_core_member"?\b', sql)]
    assert any("scheduler_core_nodeusage" in sql for sql in sqls)
    assert any("scheduler_core_usageminute" in sql for sql in sqls)
