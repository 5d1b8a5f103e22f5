"""The unfiltered gang list's hand-written page (dashboard/api/gang_rows.py) answers exactly what
the ORM's queryset answers: every page of a walk forwards and back, with gangs sharing a
creation time (DRF's cursor then counts an offset), gangs in groups, a submitter's own gangs and
an operator's all, and the links between pages."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboard.api import gangs as gang_views
from dashboard.api.gang_rows import GangRows
from scheduler_core.models import Gang
from scheduler_core.services.groups import gang_group_join

from .conftest import client_for, make_gang

URL = "/api/v1/gangs/"


@pytest.fixture
def gangs(db):
    """13 of alice's gangs and 5 of bob's; creation times shared in threes; a few in groups."""
    start = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    for index in range(18):
        submitter = "alice" if index < 13 else "bob"
        gang = make_gang("ml", f"g{index:02d}", submitter=submitter, pods=1)
        Gang.objects.filter(pk=gang.pk).update(created=start + dt.timedelta(seconds=index // 3))
        if index % 4 == 0:
            gang_group_join(gang=gang, members=[f"ml/partner-{index}"])


def walk(client, page_size: int) -> list[dict]:
    """Every page from the first by ``next``, then back by ``previous`` to the first."""
    pages = [client.get(URL, {"pageSize": page_size}).json()]
    while pages[-1]["next"]:
        pages.append(client.get(pages[-1]["next"]).json())
    while pages[-1]["previous"]:
        pages.append(client.get(pages[-1]["previous"]).json())
    return pages


@pytest.mark.parametrize("who", ["alice", "olga"])
@pytest.mark.parametrize("page_size", [1, 4, 50])
def test_every_page_is_what_the_querysets_page_is(who, page_size, gangs, request, monkeypatch):
    client = client_for(request.getfixturevalue(who))
    fast = walk(client, page_size)
    monkeypatch.setattr(gang_views, "unfiltered", lambda request: False)
    assert walk(client, page_size) == fast
    listed = {gang["name"] for page in fast for gang in page["results"]}
    assert len(listed) == (13 if who == "alice" else 18)
    assert any(gang["group"] for page in fast for gang in page["results"])


def test_the_fast_page_is_the_one_that_ran(alice, gangs):
    with CaptureQueriesContext(connection) as queries:
        client_for(alice).get(URL, {"pageSize": 5})
    assert any(query["sql"].startswith("SELECT g.id") for query in queries.captured_queries)


def test_a_filter_takes_the_queryset(alice, gangs):
    body = client_for(alice).get(URL, {"pageSize": 50, "phase": "Pending"}).json()
    assert len(body["results"]) == 13


@pytest.mark.parametrize(
    "misuse",
    [
        lambda rows: rows.order_by("name"),
        lambda rows: rows.filter(name="x"),
        lambda rows: rows.filter(created__lt="2026-11-01").filter(created__lt="2026-11-01"),
        lambda rows: rows[3],
        lambda rows: rows[2:],
    ],
)
def test_anything_but_what_the_pagination_does_is_refused(misuse):
    with pytest.raises((ValueError, TypeError)):
        misuse(GangRows("alice"))
