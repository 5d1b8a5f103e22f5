"""Plain HTTP through the whole ASGI application (gangsched/asgi.py), as uvicorn serves it: the
middleware and the view run as one synchronous chain entered once, and every middleware still
does its part (token and session sign-in, CSRF, security headers, 404s)."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from asgiref.sync import SyncToAsync, iscoroutinefunction
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator
from django.core.signals import request_started
from rest_framework.authtoken.models import Token

from gangsched.asgi import application, django_asgi_app
from tests.cast import make_gang

pytestmark = pytest.mark.django_db(transaction=True)


async def get(path: str, *headers: tuple[bytes, bytes], method: str = "GET") -> dict:
    communicator = HttpCommunicator(
        application, method, path, headers=[(b"host", b"127.0.0.1:8000"), *headers]
    )
    response = await communicator.get_response(timeout=10)
    await communicator.wait(timeout=10)  # until Django has closed the response (and connections)
    return response


def header(response: dict, name: bytes) -> str | None:
    values = [value.decode() for key, value in response["headers"] if key.lower() == name]
    return values[0] if values else None


def test_the_middleware_chain_and_the_view_are_one_synchronous_call():
    chain = django_asgi_app._middleware_chain
    assert isinstance(chain, SyncToAsync) and not iscoroutinefunction(chain.func)


async def test_the_api_answers_through_asgi_with_tokens_and_its_headers(alice):
    await database_sync_to_async(make_gang)("ml", "train", submitter="alice")
    key = (await database_sync_to_async(Token.objects.get_or_create)(user=alice))[0].key

    anonymous = await get("/api/v1/gangs/")
    assert anonymous["status"] == 401 and header(anonymous, b"www-authenticate") == "Token"

    response = await get("/api/v1/gangs/?pageSize=20", (b"authorization", f"Token {key}".encode()))
    assert response["status"] == 200
    body = json.loads(response["body"])
    assert len(body["results"]) == 1 and body["results"][0]["key"] == "ml/train"
    assert header(response, b"x-frame-options") == "DENY"
    assert header(response, b"x-content-type-options") == "nosniff"


async def test_pages_have_sessions_csrf_and_404s_through_asgi(alice):
    login = await get("/accounts/login/")
    assert login["status"] == 200 and "csrftoken=" in (header(login, b"set-cookie") or "")
    page = await get("/", (b"cookie", alice.cookie.encode()))
    assert page["status"] == 200 and b"alice" in page["body"]
    refused = await get("/accounts/logout/", (b"cookie", alice.cookie.encode()), method="POST")
    assert refused["status"] == 403  # no CSRF token
    missing = await get("/api/v1/gangs/nowhere/nothing/", (b"cookie", alice.cookie.encode()))
    assert missing["status"] == 404


async def test_requests_one_after_another_reuse_one_thread_and_concurrent_ones_get_their_own(alice):
    """Django's per-request thread (thread-sensitive context) comes from the handler's idle
    executors instead of two thread starts per request; requests in flight at once still run
    in threads of their own, and each still closes its database connection."""
    seen: list[tuple[int, str]] = []

    def started(**kwargs):  # request_started's sync receivers run in the request's thread
        seen.append((threading.get_ident(), threading.current_thread().name))

    request_started.connect(started, dispatch_uid="test-thread-reuse")
    try:
        key = (await database_sync_to_async(Token.objects.get_or_create)(user=alice))[0].key
        auth = (b"authorization", f"Token {key}".encode())
        for _ in range(3):
            assert (await get("/api/v1/gangs/", auth))["status"] == 200
        assert len(set(seen)) == 1 and seen[0][1].startswith("request")
        seen.clear()
        at_once = django_asgi_app.MAX_READING  # the reads that run Django at once
        together = await asyncio.gather(*(get("/api/v1/gangs/", auth) for _ in range(at_once)))
        assert [response["status"] for response in together] == [200] * at_once
        assert len(set(seen)) == at_once
    finally:
        request_started.disconnect(dispatch_uid="test-thread-reuse")
    assert at_once <= len(django_asgi_app._idle) <= django_asgi_app.KEEP_IDLE_THREADS
