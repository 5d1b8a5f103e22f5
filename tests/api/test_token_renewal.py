"""A token the ASGI fast path uses is looked up again in the background shortly before its cache
entry expires (dashboard/api/cached_reads.py ``token_renewal_due``), so a poller's reads stay
answered from memory; the renewal is a real lookup, so revocation still holds within
GANGSCHED_TOKEN_CACHE_SECONDS. Through the whole ASGI application, with a step clock."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token

from dashboard.api import authentication, read_cache
from dashboard.api.cached_reads import token_renew
from dashboard.api.permissions import VIEW_ALL_GANGS
from gangsched.asgi import application
from tests.cast import make_gang
from tests.notifications import caught_up_async

from .conftest import StepClock

pytestmark = pytest.mark.django_db(transaction=True)

TTL = 10.0


@pytest.fixture
def clock(api_cache_listening, monkeypatch) -> StepClock:
    api_cache_listening.GANGSCHED_TOKEN_CACHE_SECONDS = TTL
    clock = StepClock()
    monkeypatch.setattr(authentication, "_now", clock)
    authentication.clear()
    yield clock
    authentication.clear()


async def get(key: str) -> tuple[int, str]:
    headers = [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Token {key}".encode())]
    communicator = HttpCommunicator(application, "GET", "/api/v1/gangs/", headers=headers)
    response = await communicator.get_response(timeout=10)
    await communicator.wait(timeout=10)
    return response["status"], dict(response["headers"]).get(b"x-cache", b"").decode()


async def renewed_after(key: str, expires: float) -> bool:
    for _ in range(1000):  # the renewal runs in the background
        entry = authentication.cached_entry(key)
        if entry is None or entry.expires > expires:
            return entry is not None
        await asyncio.sleep(0.01)
    return False


async def test_a_token_about_to_expire_is_renewed_while_its_reads_stay_hits(clock, alice):
    await database_sync_to_async(make_gang)("ml", "a", submitter="alice")
    key = (await database_sync_to_async(Token.objects.get_or_create)(user=alice))[0].key
    # The gang's notification, applied after the first read stored its answer, would make the
    # next read a miss: every read below must find the answer the first one stored.
    await caught_up_async()
    await get(key)  # Django looks the token up and remembers alice's scope
    assert (await get(key)) == (200, "hit")
    expires = authentication.cached_entry(key).expires
    clock.now += 0.5 * TTL  # half the cache time left: not due yet
    assert (await get(key)) == (200, "hit")
    assert authentication.cached_entry(key).expires == expires
    clock.now += 0.3 * TTL  # 2 s left: this hit asks for a renewal
    assert (await get(key)) == (200, "hit")
    assert await renewed_after(key, expires)
    assert authentication.cached_entry(key).expires == clock.now + TTL
    # The renewal's permission question is kept with the new entry: Django does not ask it again.
    assert authentication.cached_entry(key).perms == {VIEW_ALL_GANGS: False}
    clock.now += 0.5 * TTL  # past the first lookup's expiry: still answered from memory
    assert (await get(key)) == (200, "hit")


async def test_a_renewal_of_a_token_that_no_longer_authenticates_drops_it(clock, alice):
    key = (await database_sync_to_async(Token.objects.get_or_create)(user=alice))[0].key
    await get(key)
    await get(key)
    expires = authentication.cached_entry(key).expires
    await database_sync_to_async(User.objects.filter(pk=alice.pk).update)(is_active=False)  # no signal
    clock.now += 0.8 * TTL
    await get(key)  # still within the cache time: answered, and a renewal is asked for
    assert not await renewed_after(key, expires)
    assert authentication.cached_entry(key) is None
    assert (await get(key))[0] == 401


def test_a_renewed_entry_becomes_visible_only_after_its_scope_is_remembered(clock, alice, monkeypatch):
    """The race the test above once lost on a slow machine: the renewal kept the new entry
    before it remembered the user's scope, so a read in between found a fresh token with no
    scope and went to Django. Now the scope is in place whenever the entry is."""
    key = Token.objects.get_or_create(user=alice)[0].key
    seen_at_store = []
    store = authentication._store

    def spying_store(token_key, entry):
        seen_at_store.append(read_cache.scope_recall(token_key, clock.now))
        store(token_key, entry)

    monkeypatch.setattr(authentication, "_store", spying_store)
    token_renew(key)
    assert seen_at_store == [read_cache.scope_of(sees_all=False, username="alice")]
    assert authentication.cached_entry(key).expires == clock.now + TTL
