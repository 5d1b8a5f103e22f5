"""Limits on password sign-ins: a lock per account with backoff, and a soft throttle per address.

Every door that takes a password (the login page, the admin's login, the API's token endpoint)
calls Django's ``authenticate()``, and so ``SignInBackend``, the only authentication backend: the
limits hold on each of them, and on any door added later.

- **Per account.** ``GANGSCHED_LOGIN_MAX_FAILURES`` (5) failed sign-ins for one username within
  ``GANGSCHED_LOGIN_FAILURE_WINDOW_S`` (900 s) lock it for ``GANGSCHED_LOGIN_LOCKOUT_S`` (60 s);
  each further lock doubles that, up to ``GANGSCHED_LOGIN_LOCKOUT_MAX_S`` (3600 s). While
  locked, every attempt is refused, right password or not, and is not counted. A success resets
  the account (its failures and its doubling); the doubling is otherwise forgotten a day after
  the last lock. So a guesser gets 5 guesses an hour per account at most, and a stranger can
  lock one account, never everyone. The counters are keyed by the username (case-folded), not
  by the user: an unknown username is counted and locked exactly as a known one, with the same
  answer, so a lock says nothing about whether the account exists.
- **Per client address** (dashboard/client_address.py), a soft throttle:
  ``GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES`` (30) failures within a fixed window of
  ``GANGSCHED_LOGIN_ADDRESS_WINDOW_S`` (60 s), then 429 with ``Retry-After`` until the window
  ends. Short and generous, because behind a proxy that is not in
  ``GANGSCHED_TRUSTED_PROXIES`` every user shares the proxy's address. A success does not clear
  it: else one account of a guesser's own would reset their address between guesses.

A refusal is an exception in the backend (``PermissionDenied`` stops ``authenticate()`` before
any other backend or password check); the ``Refusal`` is left on the request, where the views
find it to answer 429 with the reason and ``Retry-After``. Counters live in the shared cache
(Redis), so every web process counts together; times come from ``_now`` (tests move it).
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied

from dashboard.api.throttles import process_cache
from dashboard.client_address import client_address

DEFAULTS = {
    "GANGSCHED_LOGIN_MAX_FAILURES": 5,
    "GANGSCHED_LOGIN_FAILURE_WINDOW_S": 900,
    "GANGSCHED_LOGIN_LOCKOUT_S": 60,
    "GANGSCHED_LOGIN_LOCKOUT_MAX_S": 3600,
    "GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES": 30,
    "GANGSCHED_LOGIN_ADDRESS_WINDOW_S": 60,
}
DOUBLING_MEMORY_S = 24 * 3600  # how long an account's count of locks outlives its last lock
ACCOUNT_LOCKED = "Too many failed sign-ins for this username. Try again in {wait}."
ADDRESS_THROTTLED = "Too many failed sign-ins from your address. Try again in {wait}."

_now = time.time  # wall clock: shared by every process through the cache; tests replace it


def _setting(name: str) -> float:
    return getattr(settings, name, DEFAULTS[name])


@dataclass(frozen=True)
class Refusal:
    """Why a sign-in was refused, and in how many seconds trying again can succeed."""

    message: str
    retry_after: int


def _wait(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    return f"{math.ceil(seconds / 60)} minutes"


def _refusal(template: str, seconds: float) -> Refusal:
    retry_after = max(1, math.ceil(seconds))
    return Refusal(template.format(wait=_wait(retry_after)), retry_after)


def _account(username: str) -> str:
    # Hashed: a username is user input of any length and alphabet, cache keys are not.
    return hashlib.sha256(username.strip().casefold().encode("utf-8", "replace")).hexdigest()[:32]


def _keys(username: str) -> tuple[str, str, str]:
    """(failures, locked-until, locks so far) of one account."""
    account = _account(username)
    return f"signin:failures:{account}", f"signin:locked:{account}", f"signin:locks:{account}"


def _address_window(request, now: float) -> tuple[str, float]:
    """The address's counter key for the window ``now`` is in, and when that window ends."""
    window = _setting("GANGSCHED_LOGIN_ADDRESS_WINDOW_S")
    index = math.floor(now / window)
    address = hashlib.sha256(client_address(request).encode()).hexdigest()[:32]
    return f"signin:address:{address}:{index}", (index + 1) * window


def refusal(request, username: str) -> Refusal | None:
    """Whether a sign-in as ``username`` from ``request``'s client is refused now, and why."""
    now = _now()
    _, locked_key, _ = _keys(username)
    address_key, window_end = _address_window(request, now) if request is not None else (None, now)
    found = process_cache().get_many([k for k in (locked_key, address_key) if k])
    locked_until = found.get(locked_key)
    if locked_until is not None and locked_until > now:
        return _refusal(ACCOUNT_LOCKED, locked_until - now)
    if address_key and found.get(address_key, 0) >= _setting("GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES"):
        return _refusal(ADDRESS_THROTTLED, window_end - now)
    return None


def _count(key: str, timeout: float) -> int:
    """One more in the counter ``key``; its expiry starts with its first count."""
    cache = process_cache()
    cache.add(key, 0, timeout=math.ceil(timeout))
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr: this one starts a new count
        cache.set(key, 1, timeout=math.ceil(timeout))
        return 1


def failed(request, username: str) -> None:
    """Count a failed sign-in against the account and the client's address; lock the account
    when this failure reaches the limit."""
    now = _now()
    if request is not None:
        address_key, window_end = _address_window(request, now)
        _count(address_key, window_end - now + 1)
    failures_key, locked_key, locks_key = _keys(username)
    failures = _count(failures_key, _setting("GANGSCHED_LOGIN_FAILURE_WINDOW_S"))
    # Exactly one process sees the limit itself (incr is atomic), so one lock per round.
    if failures != _setting("GANGSCHED_LOGIN_MAX_FAILURES"):
        return
    cache = process_cache()
    locks = cache.get(locks_key, 0)
    seconds = min(_setting("GANGSCHED_LOGIN_LOCKOUT_S") * 2**locks, _setting("GANGSCHED_LOGIN_LOCKOUT_MAX_S"))
    cache.set(locked_key, now + seconds, timeout=math.ceil(seconds) + 1)
    cache.set(locks_key, locks + 1, timeout=DOUBLING_MEMORY_S)
    cache.delete(failures_key)  # the next round starts from nothing once the lock ends


def succeeded(username: str) -> None:
    """A successful sign-in resets its account (never the address: see the module docstring)."""
    process_cache().delete_many(list(_keys(username)))


def _holder(request):
    return getattr(request, "_request", request)  # DRF's Request wraps Django's


def refusal_of(request) -> Refusal | None:
    """The refusal ``SignInBackend`` left on this request, if it refused it."""
    return getattr(_holder(request), "gangsched_signin_refusal", None)


class SignInBackend(ModelBackend):
    """Django's ModelBackend (same users, same permissions) with the limits above around the
    password check."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return None
        username = str(username)
        refused = refusal(request, username)
        if refused is not None:
            if request is not None:
                _holder(request).gangsched_signin_refusal = refused
            raise PermissionDenied(refused.message)
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            failed(request, username)
        else:
            succeeded(username)
        return user
