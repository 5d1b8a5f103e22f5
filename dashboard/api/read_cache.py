"""The API's read cache: finished gang-list and gang-detail responses kept in the web process.

A cached response is the bytes and headers Django produced, stored under a key naming who may
see it (the *scope*: ``*`` for users who see every gang, ``u:<username>`` for a submitter, who
sees only their own) and what was asked (host, path and query, ``Accept``). Nothing is ever
looked up under another scope than the requester's, so one user's answer cannot reach another.

An entry is valid while the generations it was stored under are current. PostgreSQL triggers
(dashboard/migrations/0008) NOTIFY, at commit, the submitter of every gang whose row, members
or events changed, or ``*`` for what any detail may show (nodes' labels, topologies, groups);
dashboard/api/invalidation.py listens and calls ``changed``:

- a submitter's scope is valid while neither its own generation nor the ``*`` one moved;
- the all-gangs scope while nothing at all changed (``_everything``).

The generation is read *before* the response is computed, so an answer computed from data a
later commit changed is stored under a generation that commit's notification makes stale. While
the listener is not connected (starting, or its connection lost) nothing is served or stored,
and every reconnection starts a new epoch: no entry survives a gap in which changes were missed.
What another process committed is seen once the notification is delivered and applied (within
``invalidation.BATCH_S``, 50 ms, of the commit); a write through this process's API
(``changed_here``) at once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from django.conf import settings

EVERYONE = "*"
DEFAULT_MAX_ENTRIES = 20_000


@dataclass(frozen=True)
class Entry:
    generation: tuple
    status: int
    headers: tuple[tuple[bytes, bytes], ...]  # as ASGI sends them
    body: bytes


class _State:
    def __init__(self):
        self.connected = False
        self.epoch = 0
        self.everything = 0  # bumped by every change: the all-gangs scope
        self.shared = 0  # bumped by ``*`` changes: every scope
        self.owners: dict[str, int] = {}
        self.entries: dict[tuple, Entry] = {}
        self.scopes: dict[str, tuple[float, str]] = {}  # token key -> (expires, scope)
        self.lock = threading.Lock()


_state = _State()


def enabled() -> bool:
    return bool(getattr(settings, "GANGSCHED_API_CACHE", True))


def active() -> bool:
    """True when entries may be served and stored: enabled and the listener is connected."""
    return _state.connected and enabled()


def scope_of(*, sees_all: bool, username: str) -> str:
    return EVERYONE if sees_all else f"u:{username}"


def generation(scope: str) -> tuple:
    """What an entry of ``scope`` is valid for; read before computing what is stored."""
    state = _state
    if scope == EVERYONE:
        return (state.epoch, state.everything)
    return (state.epoch, state.shared, state.owners.get(scope[2:], 0))


def lookup(key: tuple) -> Entry | None:
    """The entry for ``key`` (whose first item is its scope) if it is still valid."""
    if not active():
        return None
    entry = _state.entries.get(key)
    if entry is None or entry.generation != generation(key[0]):
        return None
    return entry


def lookup_at(key: tuple, generation: tuple) -> Entry | None:
    """The entry for ``key`` if it was stored under ``generation`` (coalesce.py: what a request
    that arrived at ``generation`` may be answered)."""
    if not active():
        return None
    entry = _state.entries.get(key)
    if entry is None or entry.generation != generation:
        return None
    return entry


def store(key: tuple, entry: Entry) -> None:
    if not active():
        return
    entries = _state.entries
    limit = int(getattr(settings, "GANGSCHED_API_CACHE_ENTRIES", DEFAULT_MAX_ENTRIES))
    if len(entries) >= limit:
        with _state.lock:
            for old in list(entries)[: max(1, limit // 10)]:  # the oldest tenth
                entries.pop(old, None)
    entries[key] = entry


def changed(who: str) -> None:
    """A change to the gangs of submitter ``who`` committed (``*``: something every scope shows)."""
    state = _state
    with state.lock:
        state.everything += 1
        if who == EVERYONE:
            state.shared += 1
        else:
            state.owners[who] = state.owners.get(who, 0) + 1


def changed_here(who: str) -> None:
    """A write this process made and committed: seen by its next read without waiting for the
    notification (which also comes, and bumps again)."""
    changed(who)


def connected(is_connected: bool) -> None:
    """The listener (dis)connected. Connecting starts a new epoch: entries stored before it may
    miss changes made while nobody listened."""
    state = _state
    with state.lock:
        state.epoch += 1
        state.connected = is_connected
        state.entries.clear()


# ---------------------------------------------------------------- token scopes
# The ASGI fast path (fast_reads.py) answers a token's request without a query, so it must know
# the token user's scope: remembered here when the view computed it, for no longer than the
# token cache keeps the token (authentication.py), and forgotten with it.


def scope_remember(token_key: str, expires: float, scope: str) -> None:
    _state.scopes[token_key] = (expires, scope)


def scope_recall(token_key: str, now: float) -> str | None:
    found = _state.scopes.get(token_key)
    if found is None or found[0] <= now:
        return None
    return found[1]


def scopes_forget(token_keys=None) -> None:
    """Forget the given tokens' scopes, or every scope (a group or permission changed)."""
    with _state.lock:
        if token_keys is None:
            _state.scopes.clear()
        else:
            for key in token_keys:
                _state.scopes.pop(key, None)


def reset() -> None:
    """Tests: a process that never listened."""
    global _state
    _state = _State()
