"""Python's cyclic garbage collector in the web process: survivors of a full collection are
frozen, so the next full collection looks only at what came since.

A web process holds a few hundred thousand objects that live as long as it does (Django, DRF,
the modules, the read cache), and a full collection walks them all with the GIL held: 110-125 ms
of CPU (bench/api_cost.py), during which every request of the process, the cached reads the
event loop answers included, stands still. Under bench/load.py CPython runs one every few
seconds in each web process: its Django threads move short-lived objects into the oldest
generation fast.
Here each full collection is followed by ``gc.freeze()`` (from the event loop, not inside the
collector's callback): its survivors move to the permanent generation, which collections skip,
and the next full collection costs 0.4 ms (bench/api_cost.py, after 300 requests). Frozen
objects are still freed when their last reference goes; only garbage in reference cycles among
them waits, so every ``GANGSCHED_GC_THAW_SECONDS`` (default 600; 0 turns this off) they are
thawed (``gc.unfreeze()``) and the next full collection sees everything again.
"""

from __future__ import annotations

import asyncio
import gc
import time

from django.conf import settings

DEFAULT_THAW_S = 600.0
#: How often the event loop looks whether a full collection ended (freezes at most this late).
CHECK_S = 0.5


def thaw_seconds() -> float:
    return float(getattr(settings, "GANGSCHED_GC_THAW_SECONDS", DEFAULT_THAW_S))


class FreezeAfterFullCollections:
    """The policy of the module docstring: ``on_gc`` is a ``gc.callbacks`` entry that notes a
    finished full collection; ``step`` (from the event loop) freezes after one, and thaws when
    ``thaw_s`` passed since the last thaw."""

    def __init__(self, thaw_s: float, now=time.monotonic):
        self.thaw_s = thaw_s
        self._now = now
        self.full_collection_ended = False
        self.thawed_at = now()
        self.freezes = 0
        self.thaws = 0

    def on_gc(self, phase: str, info: dict) -> None:
        if phase == "stop" and info.get("generation") == 2:
            self.full_collection_ended = True

    def step(self) -> None:
        if self._now() - self.thawed_at >= self.thaw_s:
            gc.unfreeze()  # the next full collection sees everything, cycles among the frozen too
            self.thawed_at = self._now()
            self.full_collection_ended = False
            self.thaws += 1
            return
        if self.full_collection_ended:
            self.full_collection_ended = False
            gc.freeze()
            self.freezes += 1


_policy: FreezeAfterFullCollections | None = None


async def run() -> None:
    """Started once per web process at ASGI lifespan startup; runs until the loop stops."""
    global _policy
    thaw_s = thaw_seconds()
    if thaw_s <= 0 or _policy is not None:
        return
    _policy = FreezeAfterFullCollections(thaw_s)
    gc.callbacks.append(_policy.on_gc)
    try:
        while True:
            await asyncio.sleep(CHECK_S)
            _policy.step()
    finally:
        gc.callbacks.remove(_policy.on_gc)
        _policy = None
