"""Sign-in limits (dashboard/signin.py): a lock per account (username) with exponential backoff,
the same on the login page, the admin's login and the token endpoint, and the same for an
unknown username; a soft throttle per client address. The submission throttle is tested in
tests/api (gangs and manifests). Counters live in Redis under this test's own key prefix
(conftest), so no test sees another's; time is the module's clock, moved by the tests."""

import pytest
from django.test import Client

from dashboard import signin

pytestmark = pytest.mark.django_db

LIMIT = 3
START = 600_000.0  # a multiple of the address window: its first window ends 60 s later


class Clock:
    def __init__(self):
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(settings, monkeypatch) -> Clock:
    settings.GANGSCHED_LOGIN_MAX_FAILURES = LIMIT
    settings.GANGSCHED_LOGIN_LOCKOUT_S = 60
    settings.GANGSCHED_LOGIN_LOCKOUT_MAX_S = 240
    settings.GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES = 30
    settings.GANGSCHED_LOGIN_ADDRESS_WINDOW_S = 60
    clock = Clock()
    monkeypatch.setattr(signin, "_now", clock)
    return clock


def page(username: str, password: str, address: str = "10.0.0.1", **headers):
    """One attempt on the login page: (the response, signed in?)."""
    client = Client(REMOTE_ADDR=address)
    response = client.post("/accounts/login/", {"username": username, "password": password}, **headers)
    return response, "_auth_user_id" in client.session


def sign_in(username: str, password: str, address: str = "10.0.0.1", **headers) -> tuple[int, bool]:
    response, signed_in = page(username, password, address, **headers)
    return response.status_code, signed_in


def fail(username: str, times: int = LIMIT, address: str = "10.0.1.1") -> None:
    for _ in range(times):
        assert sign_in(username, "wrong", address) == (200, False)


def answer(response) -> tuple[int, str | None, str]:
    """What a client learns from a page: status, Retry-After and the alert line."""
    text = response.content.decode()
    alert = text[text.index('<p role="alert">') :].split("</p>")[0] if 'role="alert"' in text else ""
    return response.status_code, response.get("Retry-After"), alert


# ---------------------------------------------------------------- per account


def test_an_account_is_locked_after_its_failures_from_any_address(alice, bob):
    for i in range(LIMIT):
        assert sign_in("alice", "wrong", f"10.0.1.{i}") == (200, False)

    response, signed_in = page("alice", "alice-pass-123", "10.0.2.1")
    assert (response.status_code, signed_in) == (429, False)  # the right password, refused all the same
    assert response["Retry-After"] == "60"
    assert "Too many failed sign-ins for this username. Try again in 60 seconds." in response.content.decode()
    assert sign_in("ALICE", "alice-pass-123", "10.0.2.2") == (429, False)  # usernames fold case
    # Another account, from the very address the guesses came from, is not locked.
    assert sign_in("bob", "bob-pass-123", "10.0.1.0") == (302, True)


def test_an_unknown_username_is_answered_exactly_as_a_known_one(alice):
    assert answer(page("alice", "wrong")[0]) == answer(page("nobody", "wrong")[0])  # before any lock
    fail("alice", LIMIT - 1)
    fail("nobody", LIMIT - 1)

    known, unknown = page("alice", "alice-pass-123")[0], page("nobody", "alice-pass-123")[0]
    assert answer(known) == answer(unknown)
    assert answer(known)[:2] == (429, "60")


def test_the_lock_doubles_with_each_further_lock_up_to_the_cap(alice, clock):
    for seconds in (60, 120, 240, 240):
        fail("alice")
        response = page("alice", "alice-pass-123")[0]
        assert (response.status_code, response["Retry-After"]) == (429, str(seconds))
        clock.now += seconds - 1
        assert sign_in("alice", "alice-pass-123") == (429, False)  # a second before its end
        clock.now += 1


def test_attempts_while_locked_are_refused_without_counting(alice, clock):
    fail("alice")
    for _ in range(10):
        assert sign_in("alice", "wrong") == (429, False)
    clock.now += 60
    # The lock ended and the refused attempts counted for nothing: a full round before the next.
    fail("alice", LIMIT - 1)
    assert sign_in("alice", "alice-pass-123") == (302, True)


def test_a_success_resets_the_failures_and_the_doubling(alice, clock):
    fail("alice", LIMIT - 1)
    assert sign_in("alice", "alice-pass-123") == (302, True)
    fail("alice", LIMIT - 1)
    assert sign_in("alice", "alice-pass-123") == (302, True)  # the earlier failures are gone

    fail("alice")
    clock.now += 60
    assert sign_in("alice", "alice-pass-123") == (302, True)  # the lock ended
    fail("alice")
    assert page("alice", "x")[0]["Retry-After"] == "60"  # not 120: the success reset the doubling


def token(anonymous, username: str, password: str, address: str = "10.0.5.1", **headers):
    body = {"username": username, "password": password}
    return anonymous.post("/api/v1/auth/token/", body, format="json", REMOTE_ADDR=address, **headers)


def test_the_token_endpoint_shares_the_account_lock(anonymous, alice):
    fail("alice", LIMIT - 1)
    assert token(anonymous, "alice", "wrong").status_code == 400  # the failure that locks

    response = token(anonymous, "alice", "alice-pass-123", "10.0.6.99")
    assert (response.status_code, response["Retry-After"]) == (429, "60")
    reason = "Too many failed sign-ins for this username. Try again in 60 seconds."
    assert response.json() == {"errors": [{"field": None, "reason": reason}]}
    unknown = token(anonymous, "nobody", "x")
    assert unknown.status_code == 400  # not locked: its own count
    for _ in range(LIMIT - 1):
        token(anonymous, "nobody", "x")
    same = token(anonymous, "nobody", "alice-pass-123", "10.0.6.99")
    assert (same.status_code, same["Retry-After"], same.json()) == (429, "60", response.json())
    assert sign_in("alice", "alice-pass-123", "10.0.7.1") == (429, False)  # and the page is locked too


def test_the_admin_login_shares_the_account_lock(olga):
    fail("olga")
    client = Client(REMOTE_ADDR="10.0.8.1")
    response = client.post("/admin/login/", {"username": "olga", "password": "olga-pass-123"})
    assert (response.status_code, response["Retry-After"]) == (429, "60")
    assert "Too many failed sign-ins for this username" in response.content.decode()
    assert "_auth_user_id" not in client.session


# ---------------------------------------------------------------- per address (soft)


def test_an_address_is_throttled_softly_for_the_rest_of_its_window(alice, bob, settings, clock):
    settings.GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES = 4
    clock.now += 15
    for name in ("carol", "dave", "erin", "frank"):  # one failure each: no account is locked
        assert sign_in(name, "guess", "10.0.3.1") == (200, False)

    response = page("bob", "bob-pass-123", "10.0.3.1")[0]
    assert (response.status_code, response["Retry-After"]) == (429, "45")  # the window's rest
    assert "Too many failed sign-ins from your address. Try again in 45 seconds." in response.content.decode()
    assert sign_in("bob", "bob-pass-123", "10.0.3.2") == (302, True)  # another address
    clock.now += 45
    assert sign_in("bob", "bob-pass-123", "10.0.3.1") == (302, True)  # the next window


def test_rotating_x_forwarded_for_from_an_untrusted_peer_gains_nothing(alice, settings):
    settings.GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES = 4
    for i in range(4):
        status = sign_in(f"user{i}", "guess", "10.0.3.1", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}")
        assert status == (200, False)
    assert sign_in("alice", "alice-pass-123", "10.0.3.1", HTTP_X_FORWARDED_FOR="198.51.100.99") == (
        429,
        False,
    )


def test_behind_a_trusted_proxy_each_client_is_counted_by_its_own_address(alice, settings):
    settings.GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES = 4
    settings.GANGSCHED_TRUSTED_PROXIES = ["10.0.0.0/24"]
    # A client's own X-Forwarded-For on the left is ignored: the proxy appended the address it saw.
    for i in range(4):
        forwarded = f"203.0.113.{i}, 198.51.100.7"
        assert sign_in(f"user{i}", "guess", "10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded) == (200, False)
    assert sign_in("alice", "alice-pass-123", "10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.7") == (429, False)
    # Another client behind the same proxy signs in.
    assert sign_in("alice", "alice-pass-123", "10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.8") == (302, True)


def test_the_token_endpoint_is_throttled_per_client_address(anonymous, alice):
    for _ in range(30):  # 30 a minute, right password or not
        assert token(anonymous, "alice", "alice-pass-123").status_code == 200
    refused = token(anonymous, "alice", "alice-pass-123", HTTP_X_FORWARDED_FOR="198.51.100.1")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0  # the header did not help
    assert token(anonymous, "alice", "alice-pass-123", "10.0.5.2").status_code == 200
