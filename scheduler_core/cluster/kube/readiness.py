"""Whether this deployment may schedule the cluster now: a flag the watcher keeps in Redis.

The watcher process sets ``gangsched:kube:ready`` (its identity) after every successful Lease
renew while all its kinds are listed, with an expiry shorter than the time another candidate
must wait to take the Lease over. Workers (``KubernetesCluster.sync``) read it before each cycle:
a watcher that died, lost the Lease or has not finished listing lets the flag lapse, and
nothing is bound from a stale or half-read mirror.
"""

from __future__ import annotations

import redis
from django.conf import settings

READY_KEY = "gangsched:kube:ready"


def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)


def ready_set(identity: str, ttl_s: float) -> None:
    _client().set(READY_KEY, identity, px=max(1, int(ttl_s * 1000)))


def ready_clear() -> None:
    _client().delete(READY_KEY)


def is_ready() -> bool:
    try:
        return _client().get(READY_KEY) is not None
    except redis.RedisError:
        return False


def holder() -> str:
    """The identity of the leading watcher, or "" (shown on the dashboard's health panel)."""
    try:
        value = _client().get(READY_KEY)
    except redis.RedisError:
        return ""
    return value.decode() if value else ""
