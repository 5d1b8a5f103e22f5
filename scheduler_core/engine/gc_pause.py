"""The cycle runs with Python's cyclic garbage collector paused.

A cycle allocates hundreds of thousands of small objects (trial placements, victims, bundles)
beside a snapshot of as many more (pods, gangs, nodes). Each time the allocations cross the
collector's threshold, a collection may walk the whole heap, snapshot included, though almost
nothing a cycle makes is cyclic garbage: reference counting frees it. Measured on the 100-queue
benchmark's cycles (``bench/engine.py --queues 100``): 12-15% of a cycle's CPU time. So the
collector is paused for the cycle and resumed after it (if it was running), and what cyclic
garbage the cycle left is collected then, at the collector's next threshold, outside the cycle.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block; resume it after, only if it was running."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()
