"""A per-user limit on submissions (gang jobs and manifests), counted in this process and
shared through the cache once a second rather than on every request."""

from __future__ import annotations

import threading

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, BaseCache, caches
from rest_framework.throttling import UserRateThrottle

from dashboard.client_address import client_address

DEFAULT_SUBMIT_RATE = "60/min"
#: Seconds between two exchanges of this process's counts with the shared cache.
SYNC_S = 1.0

_process_cache: tuple[object, BaseCache] | None = None


def process_cache() -> BaseCache:
    """The default cache, one object per process.

    ``django.core.cache.cache`` is one object per request under ASGI (Django keeps it in a
    context variable, and each request runs in a context of its own), so every throttled request
    built a Redis client and opened a new connection: a third of a submission's time. The Redis
    client's connection pool is thread-safe, so one object serves every request of the process.
    It is made again when ``CACHES`` is replaced (tests give each test its own key prefix)."""
    global _process_cache
    config = settings.CACHES
    if _process_cache is None or _process_cache[0] is not config:
        _process_cache = (config, caches.create_connection(DEFAULT_CACHE_ALIAS))
    return _process_cache[1]


class ProcessCacheThrottle:
    """A DRF rate throttle mixin counting in ``process_cache()``, per client address as
    dashboard/client_address.py finds it (DRF's own ``get_ident`` believes any
    ``X-Forwarded-For``, so a client could pick its address per request)."""

    @property
    def cache(self) -> BaseCache:
        return process_cache()

    def get_ident(self, request) -> str:
        return client_address(request)


class SharedHistories:
    """Each user's submission times (DRF's sliding-window history), kept in this process.

    ``shared`` is every process's history as the cache held it at the last exchange, ``local``
    what this process admitted since. A decision reads both, without a round trip. At most once
    per ``SYNC_S`` (and before refusing anyone, and the first time this process sees a user) the
    process merges its own into the cache's and reads back everyone's, for all its users in one
    ``get_many`` and one ``set_many``. So other processes' submissions are seen within a second:
    a user spreading a burst over several web processes may pass the limit by what they admit in
    that second, never more.
    """

    def __init__(self, cache: BaseCache):
        self.cache = cache
        self.shared: dict[str, list[float]] = {}
        self.local: dict[str, list[float]] = {}
        self.synced_at = float("-inf")
        self.lock = threading.Lock()

    def history(self, key: str, now: float, duration: float) -> list[float]:
        """The user's admitted times within ``duration``, newest first (as DRF keeps them)."""
        if key not in self.shared or now - self.synced_at >= SYNC_S:
            self.sync(now, duration, also=key)
        times = self.local.get(key, []) + self.shared.get(key, [])
        return sorted((t for t in times if t > now - duration), reverse=True)

    def admit(self, key: str, now: float) -> None:
        with self.lock:
            self.local.setdefault(key, []).append(now)

    def sync(self, now: float, duration: float, also: str | None = None) -> None:
        with self.lock:
            keys = set(self.local) | set(self.shared) | ({also} if also else set())
            if not keys:
                return
            stored = self.cache.get_many(list(keys))
            merged = {}
            for key in keys:
                times = set(stored.get(key) or []) | set(self.local.get(key, []))
                merged[key] = sorted((t for t in times if t > now - duration), reverse=True)
            if self.local:
                self.cache.set_many({k: merged[k] for k in self.local}, timeout=int(duration) + 1)
            self.shared = {k: v for k, v in merged.items() if v or k == also}
            self.local = {}
            self.synced_at = now


_histories: SharedHistories | None = None


def histories() -> SharedHistories:
    """This process's histories, kept with the cache object they exchange with (a new one, as
    tests make with their own key prefix, starts afresh)."""
    global _histories
    cache = process_cache()
    if _histories is None or _histories.cache is not cache:
        _histories = SharedHistories(cache)
    return _histories


class SubmitThrottle(ProcessCacheThrottle, UserRateThrottle):
    """``GANGSCHED_SUBMIT_RATE`` submissions per user, read at request time (so a test can
    override it), counted in ``SharedHistories``; reads on the same view are never throttled.

    A request with ``dryRun`` in its query (any value: a bad one is refused after this) counts
    in a budget of its own at the same rate: dry runs are limited as submissions are, since each
    runs the whole write path, but checking a job a few times never blocks submitting it."""

    scope = "submit"
    dry_run_scope = "submit-dry-run"

    def __init__(self):  # the parent reads the rate from DRF's settings here; ours is read per request
        pass

    def allow_request(self, request, view) -> bool:
        if request.method not in ("POST", "PUT", "PATCH"):
            return True
        self.rate = getattr(settings, "GANGSCHED_SUBMIT_RATE", DEFAULT_SUBMIT_RATE)
        self.num_requests, self.duration = self.parse_rate(self.rate)
        if self.rate is None:
            return True
        self.scope = self.dry_run_scope if "dryRun" in request.query_params else type(self).scope
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        shared, self.now = histories(), self.timer()
        self.history = shared.history(self.key, self.now, self.duration)
        if len(self.history) >= self.num_requests:
            shared.sync(self.now, self.duration, also=self.key)  # refuse on the freshest counts only
            self.history = shared.history(self.key, self.now, self.duration)
            if len(self.history) >= self.num_requests:
                return self.throttle_failure()
        shared.admit(self.key, self.now)
        if len(self.history) == 0:  # a user's first in the window: counted in the cache at once
            shared.sync(self.now, self.duration)
        return True
