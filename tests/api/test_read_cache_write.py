"""A write through the API is answered once the writer's cached answers are computed again
(gangsched/asgi.py ``_write``): a submitter who submits and then lists is answered from the
cache, and the list shows the new gang. Through the whole ASGI application, as a client sees it."""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator
from rest_framework.authtoken.models import Token

from dashboard.api import read_cache
from gangsched.asgi import application, django_asgi_app
from tests.cast import make_gang
from tests.notifications import caught_up_async

pytestmark = pytest.mark.django_db(transaction=True)

LIST = "/api/v1/gangs/"


@pytest.fixture
def listening(api_cache_listening):
    return api_cache_listening


async def token_of(user) -> str:
    return (await database_sync_to_async(Token.objects.get_or_create)(user=user))[0].key


async def call(method: str, path: str, key: str, body: dict | None = None) -> tuple[int, str, dict]:
    headers = [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Token {key}".encode())]
    payload = b""
    if body is not None:
        payload = json.dumps(body).encode()
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    communicator = HttpCommunicator(application, method, path, body=payload, headers=headers)
    response = await communicator.get_response(timeout=10)
    await communicator.wait(timeout=10)
    how = dict(response["headers"]).get(b"x-cache", b"").decode()
    return response["status"], how, json.loads(response["body"] or b"{}")


def submission(name: str) -> dict:
    pod = {"name": name, "requests": {"cpu": "100m"}, "durationSeconds": 5}
    return {"namespace": "ml", "name": name, "minMember": 1, "pods": [pod]}


async def cached_list(key: str) -> dict:
    for _ in range(100):
        status, how, body = await call("GET", LIST, key)
        if how == "hit":
            return body
    raise AssertionError("the list was never answered from the cache")


async def test_the_writers_next_read_is_a_hit_that_shows_the_write(listening, alice):
    await database_sync_to_async(make_gang)("ml", "old", submitter="alice")
    await caught_up_async()
    key = await token_of(alice)
    assert [g["name"] for g in (await cached_list(key))["results"]] == ["old"]
    status, _, answer = await call("POST", LIST, key, submission("new"))
    assert status == 201, answer
    status, how, body = await call("GET", LIST, key)
    assert (status, how) == (200, "hit")
    assert [g["name"] for g in body["results"]] == ["new", "old"]


async def test_a_write_recomputes_only_its_writers_answers(listening, alice, bob):
    await database_sync_to_async(make_gang)("ml", "alices", submitter="alice")
    await caught_up_async()
    alice_key, bob_key = await token_of(alice), await token_of(bob)
    await cached_list(alice_key)
    await call("GET", LIST, bob_key)  # bob's scope is remembered: his writes go through _write
    before = read_cache.requests_of("u:alice")
    assert (await call("POST", LIST, bob_key, submission("bobs")))[0] == 201
    assert read_cache.requests_of("u:alice") == before
    status, how, body = await call("GET", LIST, alice_key)
    assert (how, [g["name"] for g in body["results"]]) == ("hit", ["alices"])  # bob's is not hers


async def test_a_refused_write_recomputes_nothing(listening, alice, monkeypatch):
    await database_sync_to_async(make_gang)("ml", "old", submitter="alice")
    await caught_up_async()
    key = await token_of(alice)
    await cached_list(key)
    computed = []
    monkeypatch.setattr(type(django_asgi_app), "_recompute", lambda *a: computed.append(a))
    status, _, body = await call("POST", LIST, key, {"namespace": "ml"})
    assert status == 400 and computed == []


async def test_a_dry_run_leaves_the_cached_answers_as_they_were(listening, alice, monkeypatch):
    """``?dryRun=All`` moves no generation (no write committed, nothing notified): nothing is
    recomputed, and the writer's next read is the same hit, without the gang it did not create."""
    await database_sync_to_async(make_gang)("ml", "old", submitter="alice")
    await caught_up_async()
    key = await token_of(alice)
    await cached_list(key)
    computed = []
    monkeypatch.setattr(type(django_asgi_app), "_recompute", lambda *a: computed.append(a))
    status, _, answer = await call("POST", f"{LIST}?dryRun=All", key, submission("new"))
    assert (status, answer["name"], answer["dryRun"]) == (201, "new", True)
    await caught_up_async()
    status, how, body = await call("GET", LIST, key)
    assert (status, how, [g["name"] for g in body["results"]]) == (200, "hit", ["old"])
    assert computed == []


async def test_reads_from_memory_wait_while_writes_queue_for_a_slot(listening, alice, monkeypatch):
    """Writes first: while a submission waits for one of the process's write slots, an answer
    from memory pauses; with no write waiting it does not."""
    from gangsched import asgi

    pauses: list[float] = []

    async def pause(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr(asgi, "_pause", pause)
    key = await token_of(alice)
    await cached_list(key)
    assert pauses == []  # nothing queued: answered at once
    slots = django_asgi_app._slots(reading=False)
    for _ in range(django_asgi_app.MAX_WRITING):
        await slots.acquire()  # every write slot taken
    body = json.dumps(submission("queued")).encode()
    submitting = HttpCommunicator(
        application,
        "POST",
        LIST,
        body=body,
        headers=[
            (b"host", b"127.0.0.1:8000"),
            (b"authorization", f"Token {key}".encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    )
    answered = asyncio.create_task(submitting.get_response(timeout=10))
    try:
        while django_asgi_app._writes_waiting == 0:
            await asyncio.sleep(0)
        status, how, _ = await call("GET", LIST, key)
        assert (status, how) == (200, "hit")
        assert pauses == [django_asgi_app.WRITE_PRIORITY_PAUSE_S]
    finally:
        for _ in range(django_asgi_app.MAX_WRITING):
            slots.release()
    response = await answered
    assert response["status"] == 201, response["body"]
    assert django_asgi_app._writes_waiting == 0
