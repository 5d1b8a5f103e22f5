"""``Authorization: Token <key>`` with the token's user kept in this process for a few seconds.

DRF's TokenAuthentication reads the token and its user from the database on every request:
about a fifth of a gang list's time. Here a token that authenticated is remembered for
``GANGSCHED_TOKEN_CACHE_SECONDS`` (default 10; 0 turns the cache off) per web process, and
revocation still holds:

- deleting a token (the admin, ``drf_create_token -r``, ``Token.objects.filter(...).delete()``)
  or saving or deleting its user (deactivated, renamed, made superuser, password changed) drops
  the entries at once in the process that made the change (``post_save`` / ``post_delete``);
- every other process, and changes that send no signal (``QuerySet.update()``, SQL), are seen
  within ``GANGSCHED_TOKEN_CACHE_SECONDS``: no entry is used longer than that after its lookup.

Only successful lookups are kept: an unknown key, or a key of an inactive user, goes to the
database every time. Each request gets a user and token of its own (rebuilt from the stored
column values), so nothing a request sets on ``request.user`` (``has_perm``'s permission
caches) reaches another request.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

DEFAULT_TOKEN_CACHE_SECONDS = 10.0
#: Entries kept at most per process (one per token in use); when full, expired ones go first.
MAX_ENTRIES = 10_000

_now = time.monotonic  # tests replace it with a step clock


@dataclass(frozen=True)
class _Entry:
    expires: float
    user_id: object
    user_values: tuple
    token_values: tuple


_entries: dict[str, _Entry] = {}
_lock = threading.Lock()  # for invalidation and pruning; lookups and stores are single dict operations


def token_cache_seconds() -> float:
    return float(getattr(settings, "GANGSCHED_TOKEN_CACHE_SECONDS", DEFAULT_TOKEN_CACHE_SECONDS))


def _attnames(model) -> list[str]:
    return [field.attname for field in model._meta.concrete_fields]


class CachedTokenAuthentication(TokenAuthentication):
    """TokenAuthentication (same header, same answers and errors) with the lookup cached as
    the module docstring says."""

    def authenticate_credentials(self, key):
        ttl = token_cache_seconds()
        if ttl <= 0:
            return super().authenticate_credentials(key)
        entry = _entries.get(key)
        if entry is not None and entry.expires > _now():
            return _rebuild(entry)
        expires = _now() + ttl  # taken before the lookup: an entry never outlives ttl after it
        user, token = super().authenticate_credentials(key)
        _store(key, _Entry(expires, user.pk, _values(user), _values(token)))
        return user, token


def _values(instance) -> tuple:
    return tuple(getattr(instance, name) for name in _attnames(type(instance)))


def _rebuild(entry: _Entry):
    user_model = get_user_model()
    user = user_model.from_db("default", _attnames(user_model), entry.user_values)
    token = Token.from_db("default", _attnames(Token), entry.token_values)
    token.user = user
    return user, token


def _store(key: str, entry: _Entry) -> None:
    if len(_entries) >= MAX_ENTRIES:
        with _lock:
            now = _now()
            for stale in [k for k, e in _entries.items() if e.expires <= now]:
                _entries.pop(stale, None)
            if len(_entries) >= MAX_ENTRIES:
                _entries.clear()
    _entries[key] = entry


def forget_token(key: str) -> None:
    _entries.pop(key, None)


def forget_user(user_id) -> None:
    with _lock:
        for key in [k for k, e in _entries.items() if e.user_id == user_id]:
            _entries.pop(key, None)


def clear() -> None:
    _entries.clear()


def _token_changed(sender, instance, **kwargs) -> None:
    forget_token(instance.pk)


def _user_changed(sender, instance, **kwargs) -> None:
    forget_user(instance.pk)


def connect_signals() -> None:
    """Called from the dashboard app's ``ready()``. A receiver on Token also makes a queryset
    ``delete()`` send ``post_delete`` per token (Django's fast delete is skipped then)."""
    post_save.connect(_token_changed, sender=Token, dispatch_uid="token-cache-token-saved")
    post_delete.connect(_token_changed, sender=Token, dispatch_uid="token-cache-token-deleted")
    user_model = get_user_model()
    post_save.connect(_user_changed, sender=user_model, dispatch_uid="token-cache-user-saved")
    post_delete.connect(_user_changed, sender=user_model, dispatch_uid="token-cache-user-deleted")
