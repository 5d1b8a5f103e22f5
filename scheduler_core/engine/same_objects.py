"""Where each object of this cycle's sequence was in the last cycle's, by identity, and copying
the rows of what stayed.

The carried state (``carry.py``) keeps, per pod, a row of several arrays and copies the rows of
the pods that are the same objects as last cycle. On 65,000 nodes that is 700,000 pods and
eight arrays, and a copy by index arrays (``new[kept] = old[at]``) costs a few hundredths of a
second per two-dimensional array, where a copy of a slice costs a thousandth: most pods stay at
the position they had, or move together with their neighbours (pods are appended, and those that
go leave a gap), so the positions kept form few runs, and each run is copied as a slice.
Finding the positions is cheap the same way: most objects are at their old position, and only
the others are looked up among the last ids, sorted.
"""

from __future__ import annotations

import numpy as np

#: More runs than this are copied with index arrays in one go (each slice costs a Python call).
MAX_RUNS = 256


class LastIds:
    """The ids of the last sequence: as they were, and sorted (with their positions)."""

    def __init__(self, ids: np.ndarray | None = None) -> None:
        self.ids = np.zeros(0, np.int64) if ids is None else ids
        self.order = np.argsort(self.ids, kind="stable")
        self.sorted = self.ids[self.order]

    def match(self, ids: np.ndarray) -> np.ndarray:
        """For each id, its position in the last sequence if it was there, else -1."""
        known = self.sorted
        old = np.full(len(ids), -1, np.int64)
        if not known.size:
            return old
        common = min(len(ids), len(self.ids))
        still = np.flatnonzero(ids[:common] == self.ids[:common])
        old[still] = still
        if still.size == len(ids):
            return old
        others = np.ones(len(ids), bool)
        others[still] = False
        rest = np.flatnonzero(others)
        at = np.minimum(np.searchsorted(known, ids[rest]), known.size - 1)
        old[rest] = np.where(known[at] == ids[rest], self.order[at], -1)
        return old


class Moves:
    """The positions kept (``kept``: here; ``at``: in the last sequence) and new (``fresh``)."""

    def __init__(self, old: np.ndarray) -> None:
        self.kept = np.flatnonzero(old >= 0)
        self.fresh = np.flatnonzero(old < 0)
        self.at = old[self.kept]
        breaks = np.flatnonzero((np.diff(self.kept) != 1) | (np.diff(self.at) != 1)) + 1
        starts = np.concatenate(([0], breaks)) if self.kept.size else np.zeros(0, np.int64)
        ends = np.concatenate((breaks, [self.kept.size])) if self.kept.size else starts
        # Each run: (first position here, first position there, length).
        self.runs: list[tuple[int, int, int]] | None = None
        if len(starts) <= MAX_RUNS:
            lengths = (ends - starts).tolist()
            self.runs = list(zip(self.kept[starts].tolist(), self.at[starts].tolist(), lengths, strict=True))

    def carried(self, last: np.ndarray, size: int, fill) -> np.ndarray:
        """A new array of ``size`` rows shaped like ``last``'s, ``fill`` in the fresh rows and
        the kept rows copied from ``last``."""
        out = np.full((size, *last.shape[1:]), fill, last.dtype)
        if self.runs is None:
            out[self.kept] = last[self.at]
        else:
            for here, there, length in self.runs:
                out[here : here + length] = last[there : there + length]
        return out
