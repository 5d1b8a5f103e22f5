"""Failed sign-ins are limited per username and per client address, across the login page and
the token endpoint (dashboard/login.py); the token endpoint is also throttled per address. The
submission throttle is tested in tests/api (gangs and manifests). Counters live in Redis under
this test's own key prefix (conftest), so no test sees another's."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

LIMIT = 3


@pytest.fixture(autouse=True)
def _small_limit(settings):
    settings.GANGSCHED_LOGIN_MAX_FAILURES = LIMIT


def sign_in(username: str, password: str, address: str = "10.0.0.1") -> tuple[int, bool]:
    """(status, signed in?) of one attempt on the login page from ``address``."""
    client = Client(REMOTE_ADDR=address)
    response = client.post("/accounts/login/", {"username": username, "password": password})
    return response.status_code, "_auth_user_id" in client.session


def test_a_username_is_locked_after_its_failures_from_any_address(alice, bob):
    for i in range(LIMIT):
        assert sign_in("alice", "wrong", f"10.0.1.{i}") == (200, False)

    status, signed_in = sign_in("alice", "alice-pass-123", "10.0.2.1")
    assert (status, signed_in) == (429, False)  # the right password, refused all the same
    assert sign_in("ALICE", "alice-pass-123", "10.0.2.2") == (429, False)  # usernames fold case
    assert sign_in("bob", "bob-pass-123", "10.0.2.3") == (302, True)


def test_an_address_is_locked_after_its_failures_for_any_usernames(alice, bob):
    for name in ("carol", "dave", "erin"):
        assert sign_in(name, "guess", "10.0.3.1") == (200, False)

    assert sign_in("bob", "bob-pass-123", "10.0.3.1") == (429, False)
    assert sign_in("bob", "bob-pass-123", "10.0.3.2") == (302, True)


def test_the_lockout_page_says_why(alice):
    for _ in range(LIMIT):
        sign_in("alice", "wrong")
    response = Client(REMOTE_ADDR="10.0.0.1").post("/accounts/login/", {"username": "alice", "password": "x"})
    assert response.status_code == 429
    assert "Too many failed sign-ins. Try again in 15 minutes." in response.content.decode()


def test_a_successful_sign_in_clears_the_usernames_count(alice):
    for _ in range(LIMIT - 1):
        sign_in("alice", "wrong", "10.0.4.1")
    assert sign_in("alice", "alice-pass-123", "10.0.4.2") == (302, True)
    for _ in range(LIMIT - 1):
        sign_in("alice", "wrong", "10.0.4.3")
    assert sign_in("alice", "alice-pass-123", "10.0.4.4") == (302, True)


def token(anonymous, username: str, password: str, address: str = "10.0.5.1"):
    body = {"username": username, "password": password}
    return anonymous.post("/api/v1/auth/token/", body, format="json", REMOTE_ADDR=address)


def test_the_token_endpoint_shares_the_failure_count(anonymous, alice):
    for i in range(LIMIT - 1):
        sign_in("alice", "wrong", f"10.0.6.{i}")
    assert token(anonymous, "alice", "wrong").status_code == 400  # the last failure allowed

    response = token(anonymous, "alice", "alice-pass-123", "10.0.6.99")
    assert response.status_code == 429
    assert response.json() == {
        "errors": [{"field": None, "reason": "Too many failed sign-ins. Try again in 15 minutes."}]
    }
    assert sign_in("alice", "alice-pass-123", "10.0.7.1") == (429, False)  # and the page is locked too


def test_the_token_endpoint_is_throttled_per_address(anonymous, alice):
    for _ in range(30):  # 30 a minute, right password or not
        assert token(anonymous, "alice", "alice-pass-123").status_code == 200
    assert token(anonymous, "alice", "alice-pass-123").status_code == 429
    assert token(anonymous, "alice", "alice-pass-123", "10.0.5.2").status_code == 200
