"""The read cache's part of the authorization matrix: an answer cached for one user is never
given to another who may not see the same gangs.

For every ordered pair of the cast (alice and bob submit, vera views every gang, olga operates)
and every cached read (the list, a filtered list, alice's and bob's gang), the first user reads
twice (stored, then answered from the cache), then the second reads twice through the whole ASGI
application, the fast path included (gangsched/asgi.py). The second user's answers must be,
byte for byte, what they get with the cache off, also when the scheduler's changes made the first
user's entries stale in between (they may be answered stale, but only in their scope). Then a
change: alice's gang is killed through the service, and every user who may see it reads the new
phase: alice at once, the operators' all-gangs answers within the stale limit.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time

import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator
from rest_framework.authtoken.models import Token

from dashboard.api import read_cache
from dashboard.api.cached_reads import fast_answer, fast_key
from gangsched.asgi import application
from scheduler_core.models import Gang
from scheduler_core.services.operator import gang_kill
from tests.cast import make_gang
from tests.notifications import TIMEOUT_S, moved, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

CAST = ("alice", "bob", "vera", "olga")
READS = (
    "/api/v1/gangs/",
    "/api/v1/gangs/?pageSize=1",
    "/api/v1/gangs/?phase=Pending&namespace=ml",
    "/api/v1/gangs/ml/alice-gang/",
    "/api/v1/gangs/ml/bob-gang/",
)


async def get(path: str, key: str) -> tuple[int, bytes]:
    headers = [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Token {key}".encode())]
    communicator = HttpCommunicator(application, "GET", path, headers=headers)
    response = await communicator.get_response(timeout=10)
    await communicator.wait(timeout=10)
    return response["status"], response["body"]


@pytest.fixture
def cast_keys(alice, bob, vera, olga) -> dict[str, str]:
    make_gang("ml", "alice-gang", submitter="alice")
    make_gang("ml", "bob-gang", submitter="bob")
    users = {"alice": alice, "bob": bob, "vera": vera, "olga": olga}
    return {name: Token.objects.get_or_create(user=user)[0].key for name, user in users.items()}


@pytest.fixture
def cache(api_cache_listening):
    return api_cache_listening


async def reference(cache, keys: dict[str, str]) -> dict[tuple[str, str], tuple[int, bytes]]:
    """Every user's answer to every read with the cache off."""
    cache.GANGSCHED_API_CACHE = False
    answers = {(who, path): await get(path, keys[who]) for who in CAST for path in READS}
    cache.GANGSCHED_API_CACHE = True
    return answers


@pytest.mark.parametrize("stale", [False, True], ids=["fresh", "stale"])
async def test_a_cached_answer_is_never_given_to_another_user(cache, cast_keys, monkeypatch, stale):
    """``stale``: between the two users' reads the scheduler changed every gang, so the first
    user's entries may be served stale (stale-while-revalidate): still only to their scope."""
    cache.GANGSCHED_API_CACHE_MAX_STALE_SECONDS = 60
    expected = await reference(cache, cast_keys)
    fast = []  # answers the ASGI fast path gave (without Django)

    def counted(scope):  # the fast path's key, noting whether the cache held an answer for it
        answer = fast_answer(scope)
        fast.extend([answer] if answer is not None else [])
        return fast_key(scope)

    monkeypatch.setattr("gangsched.asgi.fast_key", counted)
    assert expected[("bob", "/api/v1/gangs/ml/alice-gang/")][0] == 404
    assert b"alice-gang" not in expected[("bob", "/api/v1/gangs/")][1]
    served = 0
    for first, second in itertools.permutations(CAST, 2):
        for path in READS:
            read_cache.connected(True)  # a new epoch: nothing cached from the pair before
            for _ in range(2):
                assert await get(path, cast_keys[first]) == expected[(first, path)], (first, path)
            if stale:
                for who in ("alice", "bob", read_cache.EVERYONE):
                    read_cache.changed(who, soft=True)
            for _ in range(2):
                answer = await get(path, cast_keys[second])
                assert answer == expected[(second, path)], f"{first} then {second}: {path}"
            served += 1
    assert served == 12 * len(READS)
    assert len(fast) >= 12 * 3  # at least every user's second read of each list from the fast path


async def test_a_change_is_seen_by_every_user_who_may_see_it(cache, cast_keys):
    detail = "/api/v1/gangs/ml/alice-gang/"
    for who in CAST:  # everyone's answers cached (bob's 404 is not)
        for _ in range(2):
            await get(detail, cast_keys[who])
            await get("/api/v1/gangs/", cast_keys[who])
    changed = moved("u:alice")
    gang = await database_sync_to_async(Gang.objects.get)(name="alice-gang")
    await database_sync_to_async(gang_kill)(gang=gang, by="olga")
    await asyncio.to_thread(wait_until, changed)
    for who in ("alice", "vera", "olga"):
        # alice's scope at once; the all-gangs scope shows a change made elsewhere (not through
        # this process's API) up to GANGSCHED_API_CACHE_MAX_STALE_SECONDS late: once recomputed.
        deadline = time.monotonic() + (0 if who == "alice" else TIMEOUT_S)
        while True:
            status, body = await get(detail, cast_keys[who])
            listed = json.loads((await get("/api/v1/gangs/", cast_keys[who]))[1])["results"]
            phases = (json.loads(body)["phase"], {g["name"]: g["phase"] for g in listed}["alice-gang"])
            if status == 200 and phases == ("Killed", "Killed") or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        assert status == 200 and phases == ("Killed", "Killed"), who
    assert (await get(detail, cast_keys["bob"]))[0] == 404


async def test_the_fast_path_answers_only_the_same_question_over_the_same_scheme(cache, cast_keys):
    key = cast_keys["alice"]
    for _ in range(2):
        await get("/api/v1/gangs/", key)
    asked = {
        "type": "http",
        "method": "GET",
        "scheme": "http",
        "path": "/api/v1/gangs/",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Token {key}".encode())],
    }
    assert fast_answer(asked) is not None
    assert fast_answer({**asked, "scheme": "https"}) is None  # an HTTPS-only site redirects plain HTTP
    assert fast_answer({**asked, "query_string": b"pageSize=1"}) is None
    assert fast_answer({**asked, "headers": [*asked["headers"], (b"x-forwarded-host", b"elsewhere")]}) is None
    assert fast_answer({**asked, "headers": [*asked["headers"], (b"cookie", b"sessionid=x")]}) is None
    assert (
        fast_answer({**asked, "headers": [(b"host", b"127.0.0.1:8000"), (b"authorization", b"Token nope")]})
        is None
    )
    assert fast_answer({**asked, "method": "POST"}) is None
    bob = {
        **asked,
        "headers": [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Token {cast_keys['bob']}".encode())],
    }
    assert fast_answer(bob) is None  # bob's scope is not known yet, and alice's entry is not his
