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

The entry also keeps the user's answers to the permission questions the API asks on every request
(``permissions.holds``: does this user see every gang, change every gang), asked once per entry;
a change of a group's or user's permissions, or of a user's groups, drops every entry at once in
the process that made it (``m2m_changed``), and any other change is seen with the next lookup.

Only successful lookups are kept: an unknown key, or a key of an inactive user, goes to the
database every time. Each request gets a user and token of its own (rebuilt from the stored
column values), so nothing a request sets on ``request.user`` (``has_perm``'s permission
caches) reaches another request.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models.signals import m2m_changed, post_delete, post_save
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from . import read_cache

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
    #: ``permissions.holds``' answers for this user, filled as they are asked: permission -> held.
    perms: dict = field(default_factory=dict, compare=False)


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
        entry = _Entry(expires, user.pk, _values(user), _values(token))
        _store(key, entry)
        user._gangsched_perms = entry.perms
        return user, token


def now() -> float:
    return _now()


def renew(key: str, before_keeping=None) -> tuple | None:
    """Look the token up again and keep it for another ``GANGSCHED_TOKEN_CACHE_SECONDS`` from
    now (the ASGI fast path asks this shortly before an entry in use expires, in the background,
    so a poller's reads never wait for the lookup); its user and the new expiry, or None, and
    the entry dropped, if the token no longer authenticates. ``before_keeping(user, expires)``
    runs before the new entry is visible: what the fast path needs beside the entry (the
    user's scope) is then never older than the entry, so no read falls back to Django between."""
    ttl = token_cache_seconds()
    if ttl <= 0:
        return None
    expires = _now() + ttl  # taken before the lookup, as in authenticate_credentials
    try:
        user, token = TokenAuthentication().authenticate_credentials(key)
    except exceptions.AuthenticationFailed:
        forget_token(key)
        return None
    entry = _Entry(expires, user.pk, _values(user), _values(token))
    user._gangsched_perms = entry.perms  # the caller's permission question is kept with it
    if before_keeping is not None:
        before_keeping(user, expires)
    _store(key, entry)
    return user, expires


def cached_entry(key: str) -> _Entry | None:
    """The token's entry while it may be used (the ASGI fast path's authentication)."""
    if token_cache_seconds() <= 0:
        return None
    entry = _entries.get(key)
    if entry is None or entry.expires <= _now():
        return None
    return entry


def _values(instance) -> tuple:
    return tuple(getattr(instance, name) for name in _attnames(type(instance)))


def _rebuild(entry: _Entry):
    user_model = get_user_model()
    user = user_model.from_db("default", _attnames(user_model), entry.user_values)
    token = Token.from_db("default", _attnames(Token), entry.token_values)
    token.user = user
    user._gangsched_perms = entry.perms  # permissions.holds reads and fills it
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
    read_cache.scopes_forget([key])


def forget_user(user_id) -> None:
    with _lock:
        keys = [k for k, e in _entries.items() if e.user_id == user_id]
        for key in keys:
            _entries.pop(key, None)
    read_cache.scopes_forget(keys)


def clear() -> None:
    _entries.clear()
    read_cache.scopes_forget()


def _permissions_changed(sender, **kwargs) -> None:
    """A user joined or left a group, or a group or user gained or lost a permission: who sees
    every gang may have changed, so every entry (and the permission answers it keeps) and the
    read cache's remembered scopes go. Whole entries, not their answers: a request that asked
    before the change stores its answer in an entry nobody uses any more."""
    clear()


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
    for through in (
        user_model.groups.through,
        user_model.user_permissions.through,
        Group.permissions.through,
    ):
        uid = f"read-cache-{through.__name__}"
        m2m_changed.connect(_permissions_changed, sender=through, dispatch_uid=uid)
    post_delete.connect(_permissions_changed, sender=Group, dispatch_uid="read-cache-group-deleted")
