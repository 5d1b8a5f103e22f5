"""Engine objects kept between snapshot builds in one process, reused while their row is unchanged.

A worker builds a snapshot every cycle, and most of what it reads did not change since the last
one: the nodes, the running pods, the gangs that wait. Building 10,000 ``engine.Pod`` objects
(and the garbage collector's passes over them) took longer than the query that reads their rows,
so ``build_snapshot`` keeps what it built, keyed by the whole row it built it from, and builds
again only the rows that differ (new pods, pods bound or reserved since, nodes that changed).

Correct by construction: a key is the complete row (every column the object is made of, plus
anything else its value depends on, such as the queue a pod's queue name resolves to), so a hit
returns exactly what building would; the objects are frozen and the engine never changes their
mappings. Only the last build's entries are kept, so the cache never holds more than one
snapshot's worth, and a row that left the snapshot is forgotten at the next build.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class RowCache(Generic[T]):
    """``row -> object`` for the rows of the current build, falling back on the previous build's."""

    def __init__(self) -> None:
        self._previous: dict[Hashable, T] = {}
        self._current: dict[Hashable, T] = {}
        self.hits = 0
        self.built = 0

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        value = self._previous.get(key)
        if value is None:
            value = self._current.get(key)
            if value is None:
                value = build()
                self.built += 1
            else:
                self.hits += 1
        else:
            self.hits += 1
        self._current[key] = value
        return value

    def rotate(self) -> None:
        """End of a build: what it used becomes what the next build may reuse."""
        self._previous, self._current = self._current, {}

    def clear(self) -> None:
        self._previous, self._current = {}, {}
        self.hits = self.built = 0


class SnapshotReuse:
    """The caches of one process (pods, nodes, gangs); a build holds ``lock`` while it uses them.

    Two threads building at once (a web process's and a test's, say) would otherwise rotate each
    other's entries away: harmless for correctness, but the lock keeps the statistics honest.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pods: RowCache = RowCache()
        self.nodes: RowCache = RowCache()
        self.gangs: RowCache = RowCache()

    def rotate(self) -> None:
        for cache in (self.pods, self.nodes, self.gangs):
            cache.rotate()

    def clear(self) -> None:
        for cache in (self.pods, self.nodes, self.gangs):
            cache.clear()


#: One per process: a Celery worker process keeps it from cycle to cycle.
REUSE = SnapshotReuse()
