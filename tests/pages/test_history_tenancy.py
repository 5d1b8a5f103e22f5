"""A submitter's History never shows another submitter's events, however she asks: by the other's
gang (its key or its bare name), by a queue both use, by the other as the actor, or by a kind;
and asking by another's gang answers exactly what asking by a gang that does not exist does.
The API's feed is held to the same."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from scheduler_core.models import GangEvent
from tests.pages.conftest import make_gang

pytestmark = pytest.mark.django_db

SECRET = "bobs-secret-run"


@pytest.fixture
def two_tenants(db):
    """alice's ml/train and bob's ml/<SECRET>, both in queue gpu; bob retried his own."""
    make_gang("ml", "train", submitter="alice", queue="gpu")
    bobs = make_gang("ml", SECRET, submitter="bob", queue="gpu")
    GangEvent.objects.create(gang=bobs, kind="retried", reason="retried by bob", details={"by": "bob"})
    return bobs


QUERIES = [
    {},
    {"gang": f"ml/{SECRET}"},
    {"gang": SECRET},
    {"queue": "gpu"},
    {"actor": "bob"},
    {"kind": ["created", "retried"]},
    {"since": "24h"},
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: "&".join(q) or "none")
def test_alices_history_never_shows_bobs_events(as_alice, two_tenants, query):
    response = as_alice.get("/history/", query)
    assert response.status_code == 200
    html = response.content.decode()
    shown = re.findall(r'<tr data-gang="([^"]+)"', html)
    assert set(shown) <= {"ml/train"}
    assert "retried by bob" not in html
    if "gang" not in query:  # a name alice typed herself is echoed in her form, nowhere else
        assert SECRET not in html


@pytest.mark.parametrize("gang", [f"ml/{SECRET}", SECRET])
def test_asking_by_anothers_gang_answers_as_for_a_gang_that_does_not_exist(as_alice, two_tenants, gang):
    theirs = as_alice.get("/history/", {"gang": gang}).content
    missing = as_alice.get("/history/", {"gang": gang.replace(SECRET, "no-such-gang-x")}).content
    assert theirs.replace(SECRET.encode(), b"no-such-gang-x") == _without_csrf(missing, theirs)


def _without_csrf(missing: bytes, theirs: bytes) -> bytes:
    """The sign-out form's CSRF token differs per response: take it from ``theirs``."""
    token = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]+"')
    return token.sub(token.search(theirs)[0], missing)


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: "&".join(q) or "none")
def test_the_api_feed_holds_to_the_same(alice, two_tenants, query):
    client = APIClient()
    client.force_authenticate(alice)
    response = client.get("/api/v1/events/", query)
    assert response.status_code == 200
    assert {event["gang"] for event in response.json()["results"]} <= {"ml/train"}
    assert SECRET not in response.content.decode()
