"""Concurrent misses of one read-cache key share one computation.

Under load one change makes every reader of the same list miss at once: the operators all read
the all-gangs list, which any change invalidates, and each miss ran the same query in a thread of
its own while the entry was being computed. Here the first miss of a key at a generation
(read_cache.generation) computes it (Django answers, ``StoreMiddleware`` stores); the misses of
the same key at the same generation that arrive while it runs wait for it in the event loop,
without a thread, and are then answered from the entry it stored if that entry is of the
generation they arrived under. That is the answer a hit at their arrival would have given: the
entry's data was read after every change they could know of. Otherwise (the generation moved,
nothing was stored: not a 200, an error, the client left) they go to Django themselves.

Waiting is bounded (``WAIT_S``): a computation stuck on the database does not hold its waiters
longer than that; they then go to Django as before.
"""

from __future__ import annotations

import asyncio
import contextlib

from . import read_cache

#: Longest a miss waits for another request's computation of the same key.
WAIT_S = 2.0


class Misses:
    """The computations running in this process, per key (one event loop's; tests run several
    loops, so a computation of another loop is not waited for)."""

    def __init__(self):
        self._running: dict[tuple, tuple[tuple, asyncio.Future]] = {}

    def running(self, key: tuple) -> bool:
        """Whether a computation of ``key`` runs here, at any generation."""
        return key in self._running

    async def wait(self, key: tuple, generation: tuple) -> read_cache.Entry | None:
        """The entry another request is computing for ``key`` at ``generation``, once stored;
        None at once when no such computation runs here, or when it ends without one."""
        running = self._running.get(key)
        if running is None or running[0] != generation:
            return None
        future = running[1]
        if future.get_loop() is not asyncio.get_running_loop():
            return None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(future), WAIT_S)
        return read_cache.lookup_at(key, generation)

    @contextlib.asynccontextmanager
    async def computing(self, key: tuple, generation: tuple):
        """Around a request that computes ``key``: later misses of it wait for its end. A key
        already being computed at another generation is left to that request's waiters."""
        if key in self._running:
            yield
            return
        future = asyncio.get_running_loop().create_future()
        self._running[key] = (generation, future)
        try:
            yield
        finally:
            if self._running.get(key, (None, None))[1] is future:
                del self._running[key]
            future.set_result(None)
