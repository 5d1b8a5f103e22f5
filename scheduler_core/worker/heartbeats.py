"""Worker heartbeats in Redis: each Celery worker writes ``gangsched:heartbeat:<hostname>`` (the
time, ISO 8601) every HEARTBEAT_EVERY_S with a HEARTBEAT_TTL_S expiry, so a worker that stops
(crash, SIGKILL) disappears within the TTL. The overview's health panel lists them.

The writer is a daemon thread in the worker's main process, started by ``worker_ready`` (sent
after the prefork pool has forked its children, so no fork drops the thread); it dies with the
process. ``connect_signals`` is called from ``gangsched/celery.py``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from datetime import datetime

import redis
from django.conf import settings
from django.utils import timezone

logger = logging.getLogger(__name__)

KEY_PREFIX = "gangsched:heartbeat:"
HEARTBEAT_EVERY_S = 5.0
HEARTBEAT_TTL_S = 30
SOCKET_TIMEOUT_S = 2.0


def _client(url: str | None = None) -> redis.Redis:
    return redis.Redis.from_url(
        url or settings.REDIS_URL, socket_connect_timeout=SOCKET_TIMEOUT_S, socket_timeout=SOCKET_TIMEOUT_S
    )


def heartbeat_write(hostname: str, *, client: redis.Redis | None = None, now: datetime | None = None) -> None:
    client = client or _client()
    client.set(KEY_PREFIX + hostname, (now or timezone.now()).isoformat(), ex=HEARTBEAT_TTL_S)


def heartbeats_read(*, client: redis.Redis | None = None) -> list[tuple[str, datetime]]:
    """Every live heartbeat as (hostname, last seen), most recent first. Values that do not parse
    are skipped; an unreachable Redis gives an empty list (the health panel must still render)."""
    try:
        client = client or _client()
        keys = sorted(client.scan_iter(match=KEY_PREFIX + "*", count=500))
        values = client.mget(keys) if keys else []
    except redis.RedisError as error:
        logger.warning("heartbeats unreadable: %s", error)
        return []
    beats = []
    for key, value in zip(keys, values, strict=True):
        if value is None:  # expired between SCAN and MGET
            continue
        try:
            seen = datetime.fromisoformat(value.decode())
        except (UnicodeDecodeError, ValueError):
            continue
        beats.append((key.decode()[len(KEY_PREFIX) :], seen))
    beats.sort(key=lambda beat: beat[1], reverse=True)
    return beats


class HeartbeatThread(threading.Thread):
    def __init__(self, hostname: str, every: float = HEARTBEAT_EVERY_S) -> None:
        super().__init__(name=f"heartbeat-{hostname}", daemon=True)
        self.hostname = hostname
        self.every = every
        self.stopped = threading.Event()

    def run(self) -> None:
        client = _client()
        while not self.stopped.is_set():
            try:
                heartbeat_write(self.hostname, client=client)
            except redis.RedisError as error:  # Redis down for a while: keep trying
                logger.warning("heartbeat not written: %s", error)
            self.stopped.wait(self.every)
        with contextlib.suppress(redis.RedisError):
            client.delete(KEY_PREFIX + self.hostname)  # a clean shutdown leaves no stale heartbeat


_thread: HeartbeatThread | None = None


def _on_worker_ready(sender=None, **kwargs) -> None:
    global _thread
    hostname = getattr(sender, "hostname", None)
    if not hostname or (_thread is not None and _thread.is_alive()):
        return
    _thread = HeartbeatThread(hostname)
    _thread.start()


def _on_worker_shutdown(sender=None, **kwargs) -> None:
    if _thread is not None:
        _thread.stopped.set()
        _thread.join(timeout=SOCKET_TIMEOUT_S * 2)


def connect_signals() -> None:
    from celery.signals import worker_ready, worker_shutdown

    worker_ready.connect(_on_worker_ready, weak=False, dispatch_uid="gangsched-heartbeat-start")
    worker_shutdown.connect(_on_worker_shutdown, weak=False, dispatch_uid="gangsched-heartbeat-stop")
