"""/gangs/: filters, sort and pagination."""

import re

import pytest

from tests.pages.conftest import make_gang, time_out

pytestmark = pytest.mark.django_db


def keys(response) -> list[str]:
    return re.findall(r'<tr data-gang="([^"]+)"', response.content.decode())


@pytest.fixture
def many(db):
    make_gang("ml", "a", submitter="alice", queue="gpu", priority=5)
    make_gang("ml", "b", submitter="bob", queue="cpu", priority=1)
    time_out(make_gang("cv", "c", submitter="alice", queue="gpu", priority=9))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"state": "TimedOut"}, ["cv/c"]),
        ({"state": ["TimedOut", "Pending"], "sort": "namespace"}, ["cv/c", "ml/a", "ml/b"]),
        ({"namespace": "ml", "sort": "namespace"}, ["ml/a", "ml/b"]),
        ({"queue": "gpu", "sort": "namespace"}, ["cv/c", "ml/a"]),
        ({"submitter": "bob"}, ["ml/b"]),
        ({"q": "b"}, ["ml/b"]),
        ({"state": "Bogus", "sort": "namespace"}, ["cv/c", "ml/a", "ml/b"]),
    ],
)
def test_it_filters(as_olga, many, query, expected):
    assert keys(as_olga.get("/gangs/", query)) == expected


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("priority", ["ml/b", "ml/a", "cv/c"]),
        ("-priority", ["cv/c", "ml/a", "ml/b"]),
        ("age", ["cv/c", "ml/b", "ml/a"]),
        ("-age", ["ml/a", "ml/b", "cv/c"]),
        ("state", ["ml/a", "ml/b", "cv/c"]),
        ("submitter", ["cv/c", "ml/a", "ml/b"]),
        ("nonsense", ["cv/c", "ml/b", "ml/a"]),
    ],
)
def test_it_sorts(as_olga, many, sort, expected):
    assert keys(as_olga.get("/gangs/", {"sort": sort})) == expected


def test_it_paginates_and_keeps_the_filters(as_olga, db):
    for i in range(55):
        make_gang("ns", f"g{i:02d}", submitter="olga", pods=1)

    first = as_olga.get("/gangs/", {"namespace": "ns", "sort": "namespace"})
    second = as_olga.get("/gangs/", {"namespace": "ns", "sort": "namespace", "page": 2})

    assert len(keys(first)) == 50 and keys(second) == [f"ns/g{i}" for i in range(50, 55)]
    assert "namespace=ns&amp;sort=namespace&amp;page=2" in first.content.decode()
    assert "Page 2 of 2 (55)" in second.content.decode()


def test_a_submitter_filtering_on_another_submitter_sees_nothing(as_alice, many):
    assert keys(as_alice.get("/gangs/", {"submitter": "bob"})) == []
