"""The API's read cache (dashboard/api/read_cache.py): a gang list or detail is answered from the
web process's memory until PostgreSQL notifies, at commit, a change to what it shows, whoever
made it (a service, a raw UPDATE without an event, a member's row).

These tests commit (``transaction=True``): the triggers notify only at commit, as in production.
The listener thread is started per test and stopped after it. Who may be served which entry is
tested in tests/security/test_read_cache_scopes.py."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboard.api import read_cache
from scheduler_core.models import Gang, Member, Node
from scheduler_core.services.operator import gang_kill
from tests.notifications import caught_up, moved, wait_until

from .conftest import job, make_gang

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/v1/gangs/"


@pytest.fixture(autouse=True)
def cache_on(api_cache_listening):
    return api_cache_listening


def made(scope: str, make):
    """``make()``, then wait until the listener applied its notifications: they come in batches
    (invalidation.BATCH_S), so a read right after a write may still be before them."""
    changed = moved(scope)
    result = make()
    caught_up()
    assert changed()
    return result


def queries(client, url: str):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return response, len(captured.captured_queries)


def test_a_second_read_is_answered_from_memory_with_the_same_bytes(as_alice):
    made("u:alice", lambda: make_gang("ml", "a", submitter="alice"))
    first, _ = queries(as_alice, URL)
    second, count = queries(as_alice, URL)
    assert second.content == first.content and count == 0
    assert second["Content-Type"] == first["Content-Type"]
    detail, _ = queries(as_alice, f"{URL}ml/a/")
    again, count = queries(as_alice, f"{URL}ml/a/")
    assert again.content == detail.content and count == 0


def test_a_change_through_a_service_is_seen_by_the_next_read(as_alice):
    gang = made("u:alice", lambda: make_gang("ml", "a", submitter="alice"))
    assert as_alice.get(f"{URL}ml/a/").json()["phase"] == "Pending"
    assert as_alice.get(f"{URL}ml/a/").json()["phase"] == "Pending"  # cached
    changed = moved("u:alice")
    gang_kill(gang=gang, by="olga")
    wait_until(changed)
    detail = as_alice.get(f"{URL}ml/a/").json()
    assert detail["phase"] == "Killed" and detail["history"][-1]["kind"] == "killed"
    assert as_alice.get(URL).json()["results"][0]["phase"] == "Killed"


def test_changes_without_an_event_invalidate_too(as_alice):
    """The counts of a gang and its members' rows change without a GangEvent: the triggers on the
    gang and member tables notify anyway (an UPDATE the ORM sends no signal for)."""
    gang = made("u:alice", lambda: make_gang("ml", "a", submitter="alice", pods=2))
    assert as_alice.get(URL).json()["results"][0]["running"] == 0
    changed = moved("u:alice")
    Gang.objects.filter(pk=gang.pk).update(running=2)
    wait_until(changed)
    assert as_alice.get(URL).json()["results"][0]["running"] == 2
    as_alice.get(f"{URL}ml/a/")
    changed = moved("u:alice")
    Member.objects.filter(gang=gang).update(phase="Running")
    wait_until(changed)
    assert {m["phase"] for m in as_alice.get(f"{URL}ml/a/").json()["members"]} == {"Running"}


def test_another_submitters_change_leaves_the_entry_valid_and_an_operators_not(as_alice, as_olga):
    made("u:alice", lambda: make_gang("ml", "a", submitter="alice"))
    bobs = made("u:bob", lambda: make_gang("ml", "b", submitter="bob"))
    as_alice.get(URL)
    as_olga.get(URL)
    changed = moved(read_cache.EVERYONE)
    Gang.objects.filter(pk=bobs.pk).update(message="moved")
    wait_until(changed)
    _, alice_queries = queries(as_alice, URL)
    operator, olga_queries = queries(as_olga, URL)
    assert alice_queries == 0 and olga_queries > 0
    assert [g["message"] for g in operator.json()["results"]] == ["moved", ""]


def test_node_labels_change_every_scope_but_node_usage_does_not(as_alice):
    node = made("u:alice", lambda: Node.objects.create(name="n1", allocatable={"cpu": 4000}))
    made("u:alice", lambda: make_gang("ml", "a", submitter="alice"))
    as_alice.get(f"{URL}ml/a/")
    changed = moved("u:alice")
    Node.objects.filter(pk=node.pk).update(labels={"example.com/rack": "r1"})
    wait_until(changed)
    before = read_cache.generation("u:alice")
    Node.objects.filter(pk=node.pk).update(unschedulable=True)
    caught_up()  # its notification, had it sent one, would have been applied by now
    assert read_cache.generation("u:alice") == before


def test_a_submission_is_seen_by_the_submitters_next_read_at_once(as_alice):
    assert as_alice.get(URL).json()["results"] == []
    assert as_alice.post(URL, job(), format="json").status_code == 201
    assert [g["key"] for g in as_alice.get(URL).json()["results"]] == ["ml/train"]


def test_nothing_is_served_while_the_listener_is_not_connected(as_alice):
    made("u:alice", lambda: make_gang("ml", "a", submitter="alice"))
    as_alice.get(URL)
    read_cache.connected(False)  # as when its connection is lost
    _, count = queries(as_alice, URL)
    assert count > 0
    read_cache.connected(True)  # a new epoch: what was stored before is gone
    _, count = queries(as_alice, URL)
    assert count > 0


def test_a_gang_in_a_group_is_never_cached(as_alice):
    from scheduler_core.services.groups import gang_group_join

    gang = made("u:alice", lambda: make_gang("ml", "a", submitter="alice"))
    made("u:alice", lambda: gang_group_join(gang=gang, members=["ml/other"]))
    as_alice.get(f"{URL}ml/a/")
    _, count = queries(as_alice, f"{URL}ml/a/")
    assert count > 0


def test_off_means_off(as_alice, settings):
    settings.GANGSCHED_API_CACHE = False
    make_gang("ml", "a", submitter="alice")
    as_alice.get(URL)
    _, count = queries(as_alice, URL)
    assert count > 0


def test_the_browsable_apis_html_is_never_cached(as_olga):
    """It shows who is signed in and carries their CSRF token: only JSON answers are stored."""
    made("u:alice", lambda: make_gang("ml", "a", submitter="alice"))
    for _ in range(2):
        with CaptureQueriesContext(connection) as captured:
            page = as_olga.get(URL, HTTP_ACCEPT="text/html")
        assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
        assert len(captured.captured_queries) > 0
    assert not any("text/html" in str(key) for key in read_cache._state.entries)
