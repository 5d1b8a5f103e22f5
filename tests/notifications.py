"""Waiting for the API read cache's listener (dashboard/api/invalidation.py) to apply what
PostgreSQL notified: on the notification itself, never on the clock.

The listener thread applies a commit's notifications some time after the commit (in batches,
``invalidation.BATCH_S``, and later still on a busy machine): an answer cached in between is
made stale by them, so a test that wants its next read to be a hit waits for them first.
PostgreSQL delivers a listener the notifications of different transactions in the order they
committed, and the listener applies them in the order it received them: once a notification
sent after a commit is applied, so is every notification of that commit. ``caught_up`` sends one
of its own, for a submitter nobody is, and waits until the listener applied it.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import psycopg

from dashboard.api import invalidation, read_cache

#: How long a wait may last: only a safety net against a listener that died, never reached when
#: the notification comes, however busy the machine.
TIMEOUT_S = 60.0


def wait_until(condition, what: str = "a notification", timeout: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout:.0f}s for {what}"
        time.sleep(0.01)


def moved(scope: str):
    """A condition: the scope's generation moved since now (a change to it was applied)."""
    before = read_cache.generation(scope)
    return lambda: read_cache.generation(scope) != before


def caught_up() -> None:
    """Return once the listener applied every notification committed before the call.

    Its own notification, as any change, moves the all-gangs scope (``*``) a step (a soft one):
    call it before the reads whose answers a test wants cached, not between two of them."""
    who = f"caught-up-{uuid.uuid4().hex}"
    applied = moved(read_cache.scope_of(sees_all=False, username=who))
    with psycopg.connect(**invalidation.connection_params(), autocommit=True) as conn:
        conn.execute("SELECT pg_notify(%s, %s)", [invalidation.CHANNEL, f"- {who}"])
    wait_until(applied, "the listener to apply the notifications committed so far")


async def caught_up_async() -> None:
    """``caught_up`` from a coroutine (the event loop keeps running meanwhile)."""
    await asyncio.to_thread(caught_up)
