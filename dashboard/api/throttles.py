"""A per-user limit on submissions (gang jobs and manifests), counted in the shared cache."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, BaseCache, caches
from rest_framework.throttling import UserRateThrottle

from dashboard.client_address import client_address

DEFAULT_SUBMIT_RATE = "60/min"

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


class SubmitThrottle(ProcessCacheThrottle, UserRateThrottle):
    """``GANGSCHED_SUBMIT_RATE`` submissions per user, read at request time (so a test can
    override it); reads on the same view are never throttled."""

    scope = "submit"

    def __init__(self):  # the parent reads the rate from DRF's settings here; ours is read per request
        pass

    def allow_request(self, request, view) -> bool:
        if request.method not in ("POST", "PUT", "PATCH"):
            return True
        self.rate = getattr(settings, "GANGSCHED_SUBMIT_RATE", DEFAULT_SUBMIT_RATE)
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)
