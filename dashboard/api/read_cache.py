"""The API's read cache: finished gang-list and gang-detail responses kept in the web process.

A cached response is the bytes and headers Django produced, stored under a key naming who may
see it (the *scope*: ``*`` for users who see every gang, ``u:<username>`` for a submitter, who
sees only their own) and what was asked (host, path and query, ``Accept``). Nothing is ever
looked up under another scope than the requester's, so one user's answer cannot reach another.

An entry is *fresh* while the generations it was stored under are current. PostgreSQL triggers
(dashboard/migrations/0008, 0009) NOTIFY, at commit, the submitter of every gang whose row,
members or events changed, or ``*`` for what any detail may show (nodes' labels, topologies,
groups); dashboard/api/invalidation.py listens and calls ``changed``:

- a submitter's scope is fresh while neither its own generation nor the ``*`` one moved;
- the all-gangs scope while nothing at all changed (``_everything``).

The generation is read *before* the response is computed, so an answer computed from data a
later commit changed is stored under a generation that commit's notification makes stale. While
the listener is not connected (starting, or its connection lost) nothing is served or stored,
and every reconnection starts a new epoch: no entry survives a gap in which changes were missed.

Each generation has a *hard* part and a *soft* part. A hard change must be seen by the next
read: a write through this process's API (``changed_here``: at once, in the writer's scope and
the submitter's), and any other change to a submitter's gangs that the scheduler did not make,
in their scope (their submission through another web process or the CLI, an operator's kill,
an admin edit: seen once its notification arrives, within ``invalidation.BATCH_S``, 50 ms, of
the commit). A soft change is the scheduler's progress on a submitter's gangs (binds, starts,
finishes, timeouts: the Celery worker's sessions, scheduler_core/db/session_names.py), any change
made in this web process (its API writes were applied by ``changed_here`` already; its other
writes, the admin's and the pages', may reach its API answers that late), and, in the all-gangs
scope, every change but an operator's own write here (that list moves with every submission).
An entry whose generation moved only in its soft part is *servable stale* for
``GANGSCHED_API_CACHE_MAX_STALE_SECONDS`` (default 1 s; 0: never) after the first change it
missed: the ASGI fast path answers it at once and recomputes it in the background
(stale-while-revalidate), so the scheduler's steps do not make every poller wait for a query.
Nobody is ever given an answer of another scope, stale or not.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

from django.conf import settings

EVERYONE = "*"
DEFAULT_MAX_ENTRIES = 20_000
DEFAULT_MAX_STALE_S = 1.0
#: The share of the stale limit after which a stale entry is recomputed (in the background).
REFRESH_AFTER = 0.5
#: A write through the API recomputes this many of its writer's newest answers before it is
#: answered (``requests_of``), so the writer's next reads are hits that show the write.
REFRESH_ON_WRITE = 4

_now = time.monotonic  # how long an entry has been stale; tests replace it with a step clock


@dataclass(frozen=True)
class Entry:
    generation: tuple
    status: int
    headers: tuple[tuple[bytes, bytes], ...]  # as ASGI sends them
    body: bytes


class _Soft:
    """A soft generation counter that remembers when it last moved (its last ``KEPT`` values):
    how long an entry stored under an older value has been stale."""

    KEPT = 64

    def __init__(self):
        self.value = 0
        self.moved_at: deque[float] = deque(maxlen=self.KEPT)  # when it reached value - len + 1 ...

    def bump(self, now: float) -> None:
        self.value += 1
        self.moved_at.append(now)

    def stale_since(self, stored: int) -> float | None:
        """When the value moved past ``stored``: None if it did not, minus infinity if too long
        ago to know (an entry that old is never served stale)."""
        if stored >= self.value:
            return None
        index = stored + 1 - (self.value - len(self.moved_at) + 1)
        return self.moved_at[index] if index >= 0 else float("-inf")


class _State:
    def __init__(self):
        self.connected = False
        self.epoch = 0
        # Hard parts: bumped by every change that the next read must see (see the docstring).
        self.everything_hard = 0  # the all-gangs scope
        self.shared_hard = 0  # ``*`` changes: every scope
        self.owners_hard: dict[str, int] = {}
        # Soft parts, which an entry may be served a little behind of.
        self.everything = _Soft()
        self.shared = _Soft()
        self.owners: dict[str, _Soft] = {}
        self.entries: dict[tuple, Entry] = {}
        # Per scope, the request (its ASGI scope) that computed each key, newest last.
        self.requests: dict[str, dict[tuple, dict]] = {}
        self.scopes: dict[str, tuple[float, str]] = {}  # token key -> (expires, scope)
        self.lock = threading.Lock()


_state = _State()


def enabled() -> bool:
    return bool(getattr(settings, "GANGSCHED_API_CACHE", True))


def max_stale_s() -> float:
    return float(getattr(settings, "GANGSCHED_API_CACHE_MAX_STALE_SECONDS", DEFAULT_MAX_STALE_S))


def active() -> bool:
    """True when entries may be served and stored: enabled and the listener is connected."""
    return _state.connected and enabled()


def scope_of(*, sees_all: bool, username: str) -> str:
    return EVERYONE if sees_all else f"u:{username}"


def generation(scope: str) -> tuple:
    """What an entry of ``scope`` is valid for; read before computing what is stored."""
    state = _state
    if scope == EVERYONE:
        return (state.epoch, state.everything_hard, state.everything.value)
    who = scope[2:]
    owner = state.owners.get(who)
    return (
        state.epoch,
        state.shared_hard,
        state.owners_hard.get(who, 0),
        state.shared.value,
        0 if owner is None else owner.value,
    )


def _stale_since(scope: str, stored: tuple, current: tuple) -> float | None:
    """When an entry of ``scope`` stored at generation ``stored`` went stale, if only soft parts
    moved since; None if it is fresh or a hard part moved."""
    state = _state
    if scope == EVERYONE:
        if stored[:2] != current[:2]:
            return None
        return state.everything.stale_since(stored[2])
    if stored[:3] != current[:3]:
        return None
    owner = state.owners.get(scope[2:])
    moments = [state.shared.stale_since(stored[3])]
    if owner is not None:
        moments.append(owner.stale_since(stored[4]))
    known = [moment for moment in moments if moment is not None]
    return min(known) if known else None


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


def lookup_stale(key: tuple, generation: tuple, now: float | None = None) -> tuple[Entry, bool] | None:
    """The entry for ``key`` if it is not fresh at ``generation`` but may be served while it is
    recomputed: only soft changes since it was stored, the first of them at most
    ``max_stale_s()`` ago; and whether to recompute it now, once it has been stale for half
    that (``REFRESH_AFTER``): the scheduler's steps on one gang (its submission's notification,
    its bind, its start) come within a second, and one computation then answers for all."""
    limit = max_stale_s()
    if limit <= 0 or not active():
        return None
    entry = _state.entries.get(key)
    if entry is None or entry.generation == generation:
        return None
    since = _stale_since(key[0], entry.generation, generation)
    if since is None:
        return None
    stale_for = (_now() if now is None else now) - since
    return (entry, stale_for >= REFRESH_AFTER * limit) if stale_for <= limit else None


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


def remember_request(key: tuple, request: dict) -> None:
    """The ASGI request that computed ``key``'s entry, to compute it again after a write
    (gangsched/asgi.py); only requests the fast path answers (a token, no cookie)."""
    requests = _state.requests.setdefault(key[0], {})
    requests.pop(key, None)
    requests[key] = request
    while len(requests) > REFRESH_ON_WRITE:
        del requests[next(iter(requests))]


def requests_of(scope: str) -> list[tuple[tuple, dict]]:
    """The keys of ``scope`` whose answers a write recomputes, with their requests."""
    return list(_state.requests.get(scope, {}).items())


def changed(who: str, *, soft: bool = False) -> None:
    """A change to the gangs of submitter ``who`` committed (``*``: something every scope shows),
    as its notification told; ``soft``: the scheduler made it. In the all-gangs scope every
    notified change is soft: this process's own writes came through ``changed_here``."""
    state = _state
    now = _now()
    with state.lock:
        state.everything.bump(now)
        if who == EVERYONE:
            if soft:
                state.shared.bump(now)
            else:
                state.shared_hard += 1
        elif soft:
            state.owners.setdefault(who, _Soft()).bump(now)
        else:
            state.owners_hard[who] = state.owners_hard.get(who, 0) + 1


def changed_here(who: str, *, by: str = EVERYONE) -> None:
    """A write this process made and committed, by a user of scope ``by``: seen by that scope's
    next read here, and by the scope of the gangs' submitter ``who``, without waiting for the
    notification (which also comes, and bumps again). In the all-gangs scope a submitter's
    write is a change made elsewhere, as it is in the other web processes."""
    state = _state
    with state.lock:
        if by == EVERYONE:
            state.everything_hard += 1
        else:
            state.everything.bump(_now())
        if who == EVERYONE:
            state.shared_hard += 1
        else:
            state.owners_hard[who] = state.owners_hard.get(who, 0) + 1


def connected(is_connected: bool) -> None:
    """The listener (dis)connected. Connecting starts a new epoch: entries stored before it may
    miss changes made while nobody listened."""
    state = _state
    with state.lock:
        state.epoch += 1
        state.connected = is_connected
        state.entries.clear()
        state.requests.clear()


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
