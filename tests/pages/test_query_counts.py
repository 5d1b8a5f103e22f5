"""No page makes a query per row: the same number of queries for 3 gangs as for 60."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from scheduler_core.models import Node
from scheduler_core.services.groups import gang_group_join
from tests.pages.conftest import make_gang, time_out

pytestmark = pytest.mark.django_db

PAGES = ["/", "/gangs/", "/gangs/ns/g0/", "/nodes/", "/timed-out/"]
MAX_QUERIES = 16


def populate(n: int) -> None:
    for i in range(n):
        gang = make_gang("ns", f"g{i}", submitter="olga", pods=3)
        if i % 3 == 0:
            time_out(gang)
        if i % 5 == 0:
            gang_group_join(gang=gang, members=[f"ns/g{i}", f"ns/missing{i}"])
    Node.objects.create(name="n1", allocatable={"cpu": 64000, "memory": 2**38, "nvidia.com/gpu": 8})
    Node.objects.create(name="n2", allocatable={"cpu": 64000, "memory": 2**38})


def count(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


@pytest.mark.parametrize("url", PAGES)
def test_query_count_does_not_grow_with_rows(as_olga, url):
    populate(3)
    few = count(as_olga, url)
    populate_more = [make_gang("ns", f"h{i}", submitter="olga", pods=2) for i in range(60)]
    for gang in populate_more[::2]:
        time_out(gang)

    assert count(as_olga, url) <= few  # fewer when the page has no gang group to look up


@pytest.mark.parametrize("url", PAGES)
def test_every_page_stays_under_the_budget(as_olga, django_assert_max_num_queries, url):
    populate(30)

    with django_assert_max_num_queries(MAX_QUERIES):
        as_olga.get(url)
