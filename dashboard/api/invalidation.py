"""The read cache's ear: a thread per web process that LISTENs on ``gangsched_api``.

The triggers of dashboard/migrations/0008 NOTIFY at commit whose gangs changed (a submitter's
name, or ``*``; after who changed them, 0009: ``payload``); each moves that scope's generation
(read_cache.changed), those arriving within ``BATCH_S`` of each other together. The
thread holds one connection of its own, outside Django's pool, in autocommit (LISTEN takes
effect at once). When the connection fails the cache stops serving until the thread has
connected and listens again, then starts a new epoch (read_cache.connected): notifications sent
while nobody listened are lost, so every entry from before is dropped.

Started on first use (``ensure_listening``) by whatever process serves API reads; Celery workers
and management commands never start it.
"""

from __future__ import annotations

import logging
import os
import threading
import time

import psycopg
from django.db import connections

from . import read_cache

logger = logging.getLogger(__name__)

CHANNEL = "gangsched_api"
RETRY_S = (0.5, 1.0, 2.0, 5.0)
#: How long one wait for notifications blocks; the thread checks ``_stop`` between waits.
WAIT_S = 1.0
#: Notifications that arrive within this many seconds of the first are applied together, once
#: per scope: the all-gangs scope, which every change moves, then changes at most 1/BATCH_S
#: times a second instead of at every commit. A change is seen at most this much later.
BATCH_S = 0.05

_thread: threading.Thread | None = None
_stop = threading.Event()
_start_lock = threading.Lock()


def connection_params() -> dict:
    """psycopg's keyword arguments for the default database (the test database under tests)."""
    given = connections["default"].settings_dict
    params = {
        "dbname": given["NAME"],
        "user": given.get("USER") or None,
        "password": given.get("PASSWORD") or None,
        "host": given.get("HOST") or None,
        "port": given.get("PORT") or None,
    }
    for name, value in (given.get("OPTIONS") or {}).items():
        if name not in ("pool", "server_side_binding", "isolation_level", "assume_role", "application_name"):
            params[name] = value
    return {name: value for name, value in params.items() if value is not None}


def listen() -> psycopg.Connection:
    """A connection that listens; the cache may serve once this returned (it then had LISTEN
    in effect: every commit after it is delivered to it)."""
    conn = psycopg.connect(**connection_params(), autocommit=True, application_name="gangsched-api-cache")
    conn.execute(f"LISTEN {CHANNEL}")
    read_cache.connected(True)
    return conn


def drain(conn: psycopg.Connection, timeout: float) -> int:
    """Wait up to ``timeout`` seconds for a notification; then gather what else arrives within
    ``BATCH_S`` and apply it as one change per scope. How many notifications were applied."""
    first = [notice.payload for notice in conn.notifies(timeout=timeout, stop_after=1)]
    if not first:
        return 0
    payloads = first + [notice.payload for notice in conn.notifies(timeout=BATCH_S)]
    for payload in dict.fromkeys(payloads):
        who, soft = parse(payload)
        read_cache.changed(who, soft=soft)
    return len(payloads)


def parse(payload: str) -> tuple[str, bool]:
    """Whose gangs a notification says changed, and whether that change is soft: the scheduler
    made it, or this process (whose API applied its own writes already, and whose other writes,
    the admin's and the pages', its API readers may see up to a second late). A payload without
    an origin (0008's functions, still running while a deployment migrates) is hard."""
    origin, space, who = payload.partition(" ")
    if not space or not (origin in ("s", "-") or origin[:1] == "w" and origin[1:].isdigit()):
        return payload, False
    return who, origin == "s" or origin == f"w{os.getpid()}"


def _run() -> None:
    failures = 0
    while not _stop.is_set():
        conn = None
        try:
            conn = listen()
            failures = 0
            while not _stop.is_set():
                drain(conn, WAIT_S)
        except Exception as error:  # a lost connection, a database restart: listen again
            read_cache.connected(False)
            delay = RETRY_S[min(failures, len(RETRY_S) - 1)]
            failures += 1
            logger.warning("API read cache: listener lost (%s); cache off, retrying in %.1f s", error, delay)
            _stop.wait(delay)
        finally:
            if conn is not None:
                conn.close()
    read_cache.connected(False)


def ensure_listening() -> None:
    """Start the listener thread once per process (when the cache is enabled)."""
    global _thread
    if _thread is not None or not read_cache.enabled():
        return
    with _start_lock:
        if _thread is None:
            _stop.clear()
            _thread = threading.Thread(target=_run, name="api-cache-listener", daemon=True)
            _thread.start()


def stop(timeout: float = 5.0) -> None:
    """Stop the thread (tests)."""
    global _thread
    _stop.set()
    if _thread is not None:
        _thread.join(timeout)
    _thread = None


def wait_connected(timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if read_cache.active():
            return True
        time.sleep(0.01)
    return False
