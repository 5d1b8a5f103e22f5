"""The snapshot's gangs by key, and which of them may time out, kept from cycle to cycle.

A cluster of 65,000 nodes runs about 140,000 gangs; mapping them by key and looking at each for
a timeout cost a few hundredths of a second a cycle, though few change between cycles. Snapshots
keep most gang objects of the last one (``apply_result`` replaces those it changes; the service's
snapshot reuses unchanged rows), drop the gangs gone and add new ones after the others: then only
the gangs replaced, gone or new are looked at. When the gangs kept moved about, or a new one
comes before one kept, they are all mapped again. The map is the one ``{gang.key: gang for gang
in gangs}`` gives, in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .model import INACTIVE_PHASES, Gang
from .same_objects import LastIds


def may_time_out(gang: Gang) -> bool:
    """Unsatisfied, active and its clock started: the timeout sweep compares its wait."""
    if gang.satisfied or gang.fallen_back or gang.phase in INACTIVE_PHASES:
        return False
    return gang.wait_seconds is not None and gang.wait_started is not None


class GangTable(dict):
    """The gangs by key for one cycle: a dict that notes in ``written`` the keys the cycle
    writes (a gang started, preempted, timed out: a new Gang object), so that what was kept
    about the old object is looked at again (``victim_book.py``)."""

    def __init__(self, gangs: dict[str, Gang]) -> None:
        super().__init__(gangs)
        self.written: set[str] = set()

    def __setitem__(self, key: str, gang: Gang) -> None:
        self.written.add(key)
        super().__setitem__(key, gang)


class GangMap:
    def __init__(self) -> None:
        self._gangs: Sequence[Gang] = ()
        self._last_ids = LastIds()  # the last gangs' ids (same_objects.py)
        self._by_key: dict[str, Gang] = {}
        self._watch: set[str] = set()
        # The keys of the gangs replaced, gone or new at the last update; None: all mapped again.
        self.changed: set[str] | None = None

    def update(self, gangs: Sequence[Gang]) -> tuple[GangTable, set[str]]:
        """This snapshot's gangs by key (a copy the cycle may change, ``GangTable``) and the keys
        of those that may time out (``may_time_out``; the set is the map's own: read it, do not
        change it)."""
        ids = np.fromiter(map(id, gangs), np.int64, len(gangs))
        self.changed = set()
        if not self._carried(gangs, ids):
            self.changed = None
            self._by_key = {gang.key: gang for gang in gangs}
            self._watch = {key for key, gang in self._by_key.items() if may_time_out(gang)}
        self._gangs = gangs
        self._last_ids = LastIds(ids)
        return GangTable(self._by_key), self._watch

    def _carried(self, gangs: Sequence[Gang], ids: np.ndarray) -> bool:
        """Apply the gangs replaced, gone and new; False: map them all again."""
        last, by_key = self._gangs, self._by_key
        if not last or len(by_key) != len(last):
            return False  # nothing to carry, or keys given twice: no shortcut
        last_ids = self._last_ids
        old = last_ids.match(ids)  # position in the last gangs, or -1
        fresh = np.flatnonzero(old < 0).tolist()
        replaced, new = [], []
        for i in fresh:
            was = by_key.get(gangs[i].key)
            (new if was is None else replaced).append(i)
        if replaced:
            old[replaced] = last_ids.match(np.array([id(by_key[gangs[i].key]) for i in replaced], np.int64))
        kept = np.flatnonzero(old >= 0)
        if np.any(np.diff(old[kept]) <= 0) or (new and kept.size and new[0] < kept[-1]):
            return False  # the gangs kept moved about, or a new one comes before one kept
        matched = np.zeros(len(last), bool)
        matched[old[kept]] = True
        watch = self._watch
        changed = self.changed
        for p in np.flatnonzero(~matched).tolist():
            key = last[p].key
            del by_key[key]
            watch.discard(key)
            changed.add(key)
        for i in replaced + new:
            gang = gangs[i]
            by_key[gang.key] = gang
            changed.add(gang.key)
            if may_time_out(gang):
                watch.add(gang.key)
            else:
                watch.discard(gang.key)
        return len(by_key) == len(gangs)
