"""Stale-while-revalidate in the API's read cache (dashboard/api/read_cache.py): an entry only
the scheduler's progress made stale is answered for at most ``GANGSCHED_API_CACHE_MAX_STALE_SECONDS``
while it is recomputed; any other change, and a write through this process, is seen at once.

Who may be served which entry, stale or not, is tested in tests/security/test_read_cache_scopes.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

import psycopg
import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator
from django.db import connection
from rest_framework.authtoken.models import Token

from dashboard.api import authentication, invalidation, read_cache
from gangsched.asgi import application
from scheduler_core.db.session_names import (
    SCHEDULER_APPLICATION_NAME,
    name_scheduler_sessions,
    name_web_sessions,
    web_application_name,
)
from scheduler_core.models import Gang
from tests.api.conftest import StepClock
from tests.cast import make_gang
from tests.notifications import TIMEOUT_S, caught_up, caught_up_async, moved, wait_until

ALICE = ("u:alice", "http", "/api/v1/gangs/", b"", ())
EVERY = ("*", "http", "/api/v1/gangs/", b"", ())


@pytest.fixture
def cache_connected(settings):
    settings.GANGSCHED_API_CACHE = True
    settings.GANGSCHED_API_CACHE_MAX_STALE_SECONDS = 1.0
    read_cache.reset()
    read_cache.connected(True)
    yield settings
    read_cache.reset()


def stored(key: tuple) -> read_cache.Entry:
    entry = read_cache.Entry(
        read_cache.generation(key[0]), 200, ((b"content-type", b"application/json"),), b"[]"
    )
    read_cache.store(key, entry)
    return entry


def servable(key: tuple, after_s: float = 0.0) -> bool:
    return read_cache.lookup_stale(key, read_cache.generation(key[0]), time.monotonic() + after_s) is not None


def test_a_scheduler_change_leaves_the_entry_servable_for_at_most_the_limit(cache_connected):
    stored(ALICE)
    read_cache.changed("alice", soft=True)
    assert read_cache.lookup(ALICE) is None  # not fresh
    assert servable(ALICE) and servable(ALICE, after_s=0.9)
    assert not servable(ALICE, after_s=1.1)
    cache_connected.GANGSCHED_API_CACHE_MAX_STALE_SECONDS = 0
    assert not servable(ALICE)


def test_a_stale_entry_is_recomputed_once_stale_for_half_the_limit(cache_connected):
    entry = stored(ALICE)
    read_cache.changed("alice", soft=True)
    now, generation = time.monotonic(), read_cache.generation("u:alice")
    assert read_cache.lookup_stale(ALICE, generation, now) == (entry, False)
    assert read_cache.lookup_stale(ALICE, generation, now + 0.6) == (entry, True)


def test_the_limit_counts_from_the_first_change_the_entry_missed(cache_connected):
    stored(ALICE)
    read_cache.changed("alice", soft=True)
    time.sleep(0.3)
    read_cache.changed("alice", soft=True)  # a later change does not extend the first one's time
    assert not servable(ALICE, after_s=0.8)


def test_any_other_change_to_a_submitters_gangs_is_seen_at_once(cache_connected):
    stored(ALICE)
    read_cache.changed("alice")  # e.g. her submission through another web process, or a kill
    assert not servable(ALICE)
    stored(ALICE)
    read_cache.changed(read_cache.EVERYONE)  # e.g. a node's labels, which a detail shows
    assert not servable(ALICE)
    stored(ALICE)
    read_cache.changed(read_cache.EVERYONE, soft=True)
    assert servable(ALICE)


def test_a_write_here_is_seen_at_once_by_the_writer_and_the_submitter(cache_connected):
    stored(ALICE), stored(EVERY)
    read_cache.changed_here("alice", by=read_cache.EVERYONE)  # an operator's kill
    assert not servable(ALICE) and not servable(EVERY)
    stored(ALICE), stored(EVERY)
    read_cache.changed_here("alice", by="u:alice")  # her submission: elsewhere for operators
    assert not servable(ALICE) and servable(EVERY)


def test_the_all_gangs_scope_shows_changes_made_elsewhere_up_to_the_limit_late(cache_connected):
    stored(ALICE), stored(EVERY)
    read_cache.changed("bob")
    assert servable(EVERY) and servable(ALICE) is False  # alice's entry is not bob's: still fresh
    assert read_cache.lookup(ALICE) is not None


def test_an_entry_that_missed_more_changes_than_are_remembered_is_not_served(cache_connected):
    stored(ALICE)
    for _ in range(read_cache._Soft.KEPT + 1):
        read_cache.changed("alice", soft=True)
    assert not servable(ALICE)


def test_nothing_is_served_stale_from_before_a_reconnection(cache_connected):
    stored(ALICE)
    read_cache.changed("alice", soft=True)
    read_cache.connected(True)
    assert not servable(ALICE)


# ------------------------------------------------------------------ with PostgreSQL's triggers


@pytest.fixture
def listening(cache_connected, api_cache_listening):
    return api_cache_listening


def update_as(application_name: str | None, gang: Gang, message: str) -> None:
    """An UPDATE committed by a session of its own, named as the scheduler's are (or not)."""
    named = {"application_name": application_name} if application_name else {}
    with psycopg.connect(**invalidation.connection_params(), **named, autocommit=True) as conn:
        conn.execute("UPDATE scheduler_core_gang SET message = %s WHERE id = %s", [message, gang.pk])


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "session, soft", [(SCHEDULER_APPLICATION_NAME, True), (None, False), ("psql", False)]
)
def test_the_triggers_mark_the_schedulers_changes_soft(listening, session, soft):
    gang = make_gang("ml", "a", submitter="alice")
    caught_up()  # its own notifications, before anything else
    stored(ALICE)
    changed = moved("u:alice")
    update_as(session, gang, "moved")
    wait_until(changed)
    assert servable(ALICE) is soft


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "name_them, named",
    [(name_scheduler_sessions, SCHEDULER_APPLICATION_NAME), (name_web_sessions, web_application_name())],
    ids=["worker", "web"],  # the web name has the process id: every xdist worker its own
)
def test_a_worker_and_a_web_process_name_their_sessions(name_them, named):
    options = connection.settings_dict.setdefault("OPTIONS", {})
    try:
        name_them()
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('application_name')")
            assert cursor.fetchone()[0] == named
    finally:
        options.pop("application_name", None)
        connection.close()


@pytest.mark.parametrize(
    "payload, who, soft",
    [
        ("s alice", "alice", True),  # the scheduler
        pytest.param(f"w{os.getpid()} alice", "alice", True, id="this-web-process"),  # applied already
        ("w1 alice", "alice", False),  # another web process
        ("- alice smith", "alice smith", False),  # the CLI, psql; the rest is the submitter
        ("- *", "*", False),
        ("alice", "alice", False),  # before 0009
        ("wendy smith", "wendy smith", False),  # before 0009, not an origin
    ],
)
def test_a_notification_says_whose_gangs_changed_and_who_changed_them(payload, who, soft):
    assert invalidation.parse(payload) == (who, soft)


@pytest.mark.django_db(transaction=True)
async def test_a_stale_answer_is_given_at_once_and_recomputed_behind_it(listening, alice, monkeypatch):
    clock = StepClock()  # how long an entry has been stale, and the token cached: as the test says
    monkeypatch.setattr(read_cache, "_now", clock)
    monkeypatch.setattr(authentication, "_now", clock)
    gang = await database_sync_to_async(make_gang)("ml", "a", submitter="alice")
    await caught_up_async()  # its notifications, before anything else
    key = (await database_sync_to_async(Token.objects.get_or_create)(user=alice))[0].key
    headers = [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Token {key}".encode())]

    async def get() -> tuple[str, str]:
        communicator = HttpCommunicator(application, "GET", "/api/v1/gangs/", headers=headers)
        response = await communicator.get_response(timeout=10)
        await communicator.wait(timeout=10)
        how = dict(response["headers"]).get(b"x-cache", b"").decode()
        return how, json.loads(response["body"])["results"][0]["message"]

    await get()  # Django answers, and keeps the answer, the token and alice's scope
    assert await get() == ("hit", "")
    changed = moved("u:alice")
    await database_sync_to_async(update_as)(SCHEDULER_APPLICATION_NAME, gang, "bound")
    await asyncio.to_thread(wait_until, changed)
    assert await get() == ("stale", "")  # the answer from before, at once, not yet recomputed
    assert await get() == ("stale", "")
    clock.now += read_cache.REFRESH_AFTER * read_cache.max_stale_s()  # due: recomputed behind it
    assert await get() == ("stale", "")
    deadline = time.monotonic() + TIMEOUT_S  # the background recomputation stores the new answer
    while (answer := await get()) != ("hit", "bound"):
        assert answer == ("stale", "") and time.monotonic() < deadline, answer
        await asyncio.sleep(0.02)
