"""The sign-in pages (ours and the admin's): when dashboard/signin.py refused an attempt, the
page says why and answers 429 with ``Retry-After``; otherwise they are Django's.

The limits themselves are enforced in the authentication backend, so a refused attempt never
reaches the password check on any door; this module only makes the answer say so.
"""

from __future__ import annotations

import functools

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.core.exceptions import ValidationError

from dashboard.signin import Refusal, refusal_of


def _too_many(response, refused: Refusal):
    response.status_code = 429
    response["Retry-After"] = str(refused.retry_after)
    return response


class LoginView(auth_views.LoginView):
    """Django's login view; a refused attempt renders the reason (``locked_out``) with 429."""

    def form_invalid(self, form):
        refused = refusal_of(self.request)
        if refused is None:
            return super().form_invalid(form)
        return _too_many(
            self.render_to_response(self.get_context_data(form=form, locked_out=refused.message)), refused
        )


class AdminSignInForm(AdminAuthenticationForm):
    """The admin's login form, naming a refusal instead of "enter the correct username"."""

    def get_invalid_login_error(self):
        refused = refusal_of(self.request)
        if refused is None:
            return super().get_invalid_login_error()
        return ValidationError(refused.message, code="locked_out")


def with_refusal_status(view):
    """``view`` (a sign-in view) answering 429 with ``Retry-After`` when the attempt was refused."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        refused = refusal_of(request)
        return response if refused is None else _too_many(response, refused)

    return wrapped


def protect_admin_login(site) -> None:
    """Make ``site``'s login say why an attempt was refused, with 429 (called by dashboard/admin.py)."""
    site.login_form = AdminSignInForm
    site.login = with_refusal_status(site.login)
