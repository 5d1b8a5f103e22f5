"""Concurrent misses of one read-cache key share one computation (dashboard/api/coalesce.py).

A request that misses while another computes the same key at the same generation waits for it
and is answered from what it stored, only if that entry is of the generation the waiter arrived
under (what a hit at its arrival would have given). Who may be served which entry is tested in
tests/security/test_read_cache_scopes.py."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator
from rest_framework.authtoken.models import Token

from dashboard.api import coalesce, invalidation, read_cache
from gangsched.asgi import application, django_asgi_app
from tests.cast import make_gang
from tests.notifications import TIMEOUT_S, caught_up_async

KEY = ("u:alice", "http", "/api/v1/gangs/", b"", ())


@pytest.fixture
def cache_connected(settings):
    settings.GANGSCHED_API_CACHE = True
    read_cache.reset()
    read_cache.connected(True)
    yield
    read_cache.reset()


def entry(generation: tuple, body: bytes = b"[]") -> read_cache.Entry:
    return read_cache.Entry(generation, 200, ((b"content-type", b"application/json"),), body)


async def test_a_miss_waits_for_the_computation_of_its_key_and_gets_its_entry(cache_connected):
    misses = coalesce.Misses()
    generation = read_cache.generation("u:alice")
    computed = asyncio.Event()

    async def compute():
        async with misses.computing(KEY, generation):
            await computed.wait()
            read_cache.store(KEY, entry(generation, b"computed"))

    computing = asyncio.create_task(compute())
    await asyncio.sleep(0)
    waiting = asyncio.create_task(misses.wait(KEY, generation))
    await asyncio.sleep(0.01)
    assert not waiting.done()  # waits while the other request computes
    computed.set()
    await computing
    assert (await waiting).body == b"computed"
    assert await misses.wait(KEY, generation) is None  # nothing runs any more: no wait


@contextlib.asynccontextmanager
async def computing_meanwhile(misses: coalesce.Misses, generation: tuple):
    """Another request computing KEY at ``generation`` for as long as the block runs."""
    release = asyncio.Event()

    async def compute():
        async with misses.computing(KEY, generation):
            await release.wait()

    computing = asyncio.create_task(compute())
    await asyncio.sleep(0)
    try:
        yield
    finally:
        release.set()
        await computing


async def test_a_miss_at_another_generation_does_not_wait(cache_connected):
    misses = coalesce.Misses()
    async with computing_meanwhile(misses, read_cache.generation("u:alice")):
        read_cache.changed("alice")  # a change arrived: later requests must see it
        waiting = asyncio.create_task(misses.wait(KEY, read_cache.generation("u:alice")))
        await asyncio.sleep(0)  # its first step: a wait would still be running after it
        assert waiting.done() and waiting.result() is None


async def test_an_entry_stored_at_a_newer_generation_is_not_given_to_an_older_waiter(cache_connected):
    """The computing request read its generation after the waiter arrived and a change came in
    between: the waiter goes to Django (its answer must not depend on timing beyond a hit's)."""
    misses = coalesce.Misses()
    generation = read_cache.generation("u:alice")
    stored = asyncio.Event()

    async def compute():
        async with misses.computing(KEY, generation):
            await stored.wait()
            read_cache.changed("alice")
            read_cache.store(KEY, entry(read_cache.generation("u:alice")))

    computing = asyncio.create_task(compute())
    await asyncio.sleep(0)
    waiting = asyncio.create_task(misses.wait(KEY, generation))
    await asyncio.sleep(0)
    stored.set()
    await computing
    assert await waiting is None


async def test_waiting_is_bounded(cache_connected, monkeypatch):
    monkeypatch.setattr(coalesce, "WAIT_S", 0.05)
    misses = coalesce.Misses()
    generation = read_cache.generation("u:alice")
    async with computing_meanwhile(misses, generation):
        # An unbounded wait would last until the block ends: the outer bound only ends the test.
        assert await asyncio.wait_for(misses.wait(KEY, generation), TIMEOUT_S) is None


@pytest.mark.django_db(transaction=True)
async def test_concurrent_misses_through_the_asgi_app_run_django_once(settings, monkeypatch, alice):
    settings.GANGSCHED_API_CACHE = True
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger_now", lambda: True)
    read_cache.reset()
    invalidation.ensure_listening()
    assert invalidation.wait_connected(TIMEOUT_S)
    monkeypatch.setattr(coalesce, "WAIT_S", TIMEOUT_S)  # the waiters wait however slow Django is
    try:
        await database_sync_to_async(make_gang)("ml", "alice-gang", submitter="alice")
        await caught_up_async()  # its notifications applied: no change arrives while the test runs
        key = (await database_sync_to_async(Token.objects.get_or_create)(user=alice))[0].key
        headers = [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Token {key}".encode())]

        async def get():
            communicator = HttpCommunicator(application, "GET", "/api/v1/gangs/", headers=headers)
            response = await communicator.get_response(timeout=10)
            await communicator.wait(timeout=10)
            return response["status"], response["body"]

        await get()  # the token and alice's scope are now known to the fast path
        read_cache.changed("alice")  # her list is a miss again
        ran, asked = [], []
        everyone_asked = asyncio.Event()
        original, wait = django_asgi_app._run_in_thread, django_asgi_app._misses.wait

        async def counted(key, generation):  # every miss asks whether its key is being computed
            asked.append(key)
            if len(asked) == 5:
                everyone_asked.set()
            return await wait(key, generation)

        async def slow(scope, receive, send):  # Django answers once the others arrived
            ran.append(scope["path"])
            await everyone_asked.wait()
            await original(scope, receive, send)

        monkeypatch.setattr(django_asgi_app._misses, "wait", counted)
        monkeypatch.setattr(django_asgi_app, "_run_in_thread", slow)
        answers = await asyncio.gather(*(get() for _ in range(5)))
        assert len(ran) == 1
        assert len(set(answers)) == 1 and answers[0][0] == 200
        assert [g["name"] for g in json.loads(answers[0][1])["results"]] == ["alice-gang"]
    finally:
        invalidation.stop()
        read_cache.reset()
