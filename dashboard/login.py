"""Sign-in with a limit on failed attempts, for the login page and the API's token endpoint.

After ``GANGSCHED_LOGIN_MAX_FAILURES`` failed attempts (default 10) for one username, or from one
client address, within ``GANGSCHED_LOGIN_LOCKOUT_S`` seconds (default 900), further attempts are
refused with 429 until the window has passed, even with the right password (else guessing would
simply go on). The counters live in the shared cache (Redis), so every web process counts
together. A successful sign-in clears its username's counter, never the address's: otherwise one
account of their own would let a guesser reset their address between guesses. The address is
``REMOTE_ADDR``: behind a proxy that is the proxy's, so the per-username limit is the one that
holds (put per-client limits in the proxy).
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache

DEFAULT_MAX_FAILURES = 10
DEFAULT_LOCKOUT_S = 900
LOCKED_OUT = "Too many failed sign-ins. Try again in {minutes} minutes."


def _max_failures() -> int:
    return getattr(settings, "GANGSCHED_LOGIN_MAX_FAILURES", DEFAULT_MAX_FAILURES)


def _lockout_s() -> int:
    return getattr(settings, "GANGSCHED_LOGIN_LOCKOUT_S", DEFAULT_LOCKOUT_S)


def _keys(request, username: str) -> list[str]:
    # Hashed: a username is user input of any length and alphabet, cache keys are not.
    user = hashlib.sha256(username.strip().lower().encode("utf-8", "replace")).hexdigest()[:32]
    return [f"login-failures:user:{user}", f"login-failures:addr:{request.META.get('REMOTE_ADDR', '')}"]


def login_locked(request, username: str) -> bool:
    counts = cache.get_many(_keys(request, username))
    return any(count >= _max_failures() for count in counts.values())


def login_failed(request, username: str) -> None:
    for key in _keys(request, username):
        # add() starts the window on the first failure; incr() keeps its expiry.
        cache.add(key, 0, timeout=_lockout_s())
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr: this failure starts a new window
            cache.set(key, 1, timeout=_lockout_s())


def login_succeeded(request, username: str) -> None:
    cache.delete(_keys(request, username)[0])


def locked_out_message() -> str:
    return LOCKED_OUT.format(minutes=max(1, _lockout_s() // 60))


class LoginView(auth_views.LoginView):
    """Django's login view, counting failures and refusing a locked-out username or address."""

    def post(self, request, *args, **kwargs):
        if login_locked(request, request.POST.get("username", "")):
            form = self.get_form()
            context = self.get_context_data(form=form, locked_out=locked_out_message())
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        login_succeeded(self.request, form.get_user().get_username())
        return super().form_valid(form)

    def form_invalid(self, form):
        login_failed(self.request, self.request.POST.get("username", ""))
        return super().form_invalid(form)
