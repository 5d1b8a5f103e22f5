"""The API's token cache (dashboard/api/authentication.py): a token that authenticated is not
looked up again for GANGSCHED_TOKEN_CACHE_SECONDS, and revocation still holds: a deleted token,
a deactivated, renamed or deleted user is seen at once (signals), a change that sends no signal
once the cache time has passed (a step clock here, no sleeping), and refusals are never kept.
The permission answers an entry keeps (who sees every gang) follow the same rules."""

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from dashboard.api import authentication
from dashboard.api.authentication import CachedTokenAuthentication

from .conftest import StepClock, client_for, make_gang

URL = "/api/v1/gangs/"
TTL = 10.0


@pytest.fixture(autouse=True)
def clock(settings, monkeypatch) -> StepClock:
    settings.GANGSCHED_TOKEN_CACHE_SECONDS = TTL
    clock = StepClock()
    monkeypatch.setattr(authentication, "_now", clock)
    return clock


def token_queries(client, status: int = 200) -> int:
    """Requests the list once and says how many queries read the token table."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(URL, {"pageSize": 20})
    assert response.status_code == status, response.content
    return sum(Token._meta.db_table in query["sql"] for query in queries.captured_queries)


def test_a_token_is_looked_up_once_within_the_cache_time_and_again_after_it(alice, clock):
    client = client_for(alice)
    assert token_queries(client) == 1
    assert token_queries(client) == 0
    clock.now += TTL - 0.5
    assert token_queries(client) == 0
    clock.now += 1
    assert token_queries(client) == 1
    assert token_queries(client) == 0


def test_zero_turns_the_cache_off(alice, settings):
    settings.GANGSCHED_TOKEN_CACHE_SECONDS = 0
    client = client_for(alice)
    assert [token_queries(client) for _ in range(3)] == [1, 1, 1]


@pytest.mark.parametrize(
    "revoke",
    [
        pytest.param(lambda user: Token.objects.get(user=user).delete(), id="token deleted"),
        pytest.param(lambda user: Token.objects.filter(user=user).delete(), id="queryset delete"),
        pytest.param(lambda user: user.delete(), id="user deleted"),
    ],
)
def test_a_revoked_token_is_refused_at_once(alice, revoke):
    client = client_for(alice)
    assert token_queries(client) == 1
    revoke(alice)
    assert token_queries(client, status=401) == 1


def test_a_deactivated_user_is_refused_at_once_and_not_remembered_as_refused(alice):
    client = client_for(alice)
    assert token_queries(client) == 1
    alice.is_active = False
    alice.save()
    assert token_queries(client, status=401) == 1
    assert token_queries(client, status=401) == 1  # a refusal is asked again every time
    User.objects.filter(pk=alice.pk).update(is_active=True)  # no signal: seen all the same
    assert token_queries(client) == 1


def test_a_renamed_user_lists_as_the_new_name_at_once(alice):
    make_gang("ml", "train", submitter="alice")
    client = client_for(alice)
    assert len(client.get(URL).json()["results"]) == 1
    alice.username = "alice-renamed"
    alice.save()
    assert client.get(URL).json()["results"] == []


def test_a_change_without_a_signal_is_seen_once_the_cache_time_has_passed(alice, clock):
    client = client_for(alice)
    assert token_queries(client) == 1
    User.objects.filter(pk=alice.pk).update(is_active=False)  # QuerySet.update sends no signal
    assert token_queries(client) == 0  # the documented bound: at most the cache time
    clock.now += TTL
    assert token_queries(client, status=401) == 1


def test_unknown_keys_are_never_remembered(db):
    client = client_for(None)
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert [token_queries(client, status=401) for _ in range(2)] == [1, 1]


def test_each_request_gets_a_user_and_token_of_its_own(alice):
    key = Token.objects.create(user=alice).key
    auth = CachedTokenAuthentication()
    first_user, first_token = auth.authenticate_credentials(key)
    first_user._perm_cache = {"scheduler_core.view_gang"}  # what has_perm leaves on request.user
    with CaptureQueriesContext(connection) as queries:
        user, token = auth.authenticate_credentials(key)
    assert queries.captured_queries == []
    assert user is not first_user and token is not first_token
    assert (user.pk, user.username, user.is_active, token.key, token.user) == (
        alice.pk,
        "alice",
        True,
        key,
        user,
    )
    assert not hasattr(user, "_perm_cache")
    assert user._state.adding is False and user._state.db == "default"


def test_a_full_cache_drops_expired_entries_first(alice, bob, clock, monkeypatch):
    monkeypatch.setattr(authentication, "MAX_ENTRIES", 2)
    auth = CachedTokenAuthentication()
    old = Token.objects.create(user=alice).key
    auth.authenticate_credentials(old)
    clock.now += TTL
    kept = Token.objects.create(user=bob).key
    auth.authenticate_credentials(kept)
    auth.authenticate_credentials(Token.objects.create(user=User.objects.create_user("carol")).key)
    assert old not in authentication._entries and kept in authentication._entries


def permission_queries(client) -> tuple[int, int]:
    """Lists once: how many queries asked for permissions, and how many gangs were listed."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(URL, {"pageSize": 20})
    assert response.status_code == 200, response.content
    asked = sum(Permission._meta.db_table in query["sql"] for query in queries.captured_queries)
    return asked, len(response.json()["results"])


@pytest.fixture
def two_gangs(db):
    make_gang("ml", "mine", submitter="alice")
    make_gang("ml", "theirs", submitter="bob")


def test_the_permission_question_is_asked_once_per_entry(alice, two_gangs, clock):
    client = client_for(alice)
    assert permission_queries(client) == (1, 1)
    assert permission_queries(client) == (0, 1)
    clock.now += TTL  # a new lookup asks again
    assert permission_queries(client) == (1, 1)


@pytest.mark.parametrize(
    "grant, revoke",
    [
        pytest.param(
            lambda user: user.groups.add(Group.objects.get(name="operators")),
            lambda user: user.groups.remove(Group.objects.get(name="operators")),
            id="operators group",
        ),
        pytest.param(
            lambda user: user.user_permissions.add(Permission.objects.get(codename="view_gang")),
            lambda user: user.user_permissions.clear(),
            id="direct permission",
        ),
    ],
)
def test_a_permission_change_is_seen_at_once(alice, two_gangs, grant, revoke):
    client = client_for(alice)
    assert permission_queries(client) == (1, 1)
    grant(alice)
    assert permission_queries(client) == (1, 2)  # every gang, at once
    revoke(alice)
    assert permission_queries(client) == (1, 1)  # her own again, at once


def test_a_group_losing_the_permission_is_seen_at_once(alice, two_gangs):
    operators = Group.objects.get(name="operators")
    alice.groups.add(operators)
    client = client_for(alice)
    assert permission_queries(client) == (1, 2)
    operators.permissions.remove(Permission.objects.get(codename="view_gang"))
    assert permission_queries(client) == (1, 1)


def test_a_permission_change_without_a_signal_is_seen_once_the_cache_time_has_passed(alice, two_gangs, clock):
    client = client_for(alice)
    assert permission_queries(client) == (1, 1)
    operators = Group.objects.get(name="operators")
    User.groups.through.objects.create(user=alice, group=operators)  # a bare row: no m2m_changed
    assert permission_queries(client) == (0, 1)  # the documented bound: at most the cache time
    clock.now += TTL
    assert permission_queries(client) == (1, 2)
