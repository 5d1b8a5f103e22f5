"""Python's cyclic garbage collector paused for the length of a scheduling cycle.

A cycle allocates hundreds of thousands of objects that live until it ends (the snapshot, the
engine's state, the rows it writes), and every 700 allocations the collector walks the young
ones, every tenth pass the older ones too: measured on a 12,000-pod snapshot, the collector was
close to half of the build's time, work that finds nothing to free (frozen dataclasses and
tuples do not make cycles). Reference counting still frees everything at once; the collector
runs again, once, when the pause ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block, unless it was disabled already; nested
    pauses leave it to the outermost one."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
