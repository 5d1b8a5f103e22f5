"""Preemption's candidates per running gang, kept from cycle to cycle (``carry.py``).

The first preemptor of a cycle lists every running gang that could be a victim
(``actions/victims.py``): its elastic members, its core, their nodes and request rows. On a busy
cluster that pass over a thousand gangs cost a fifth of a cycle that preempts, and almost all of
it is what the last cycle found: a running gang changes when it starts, loses or gains a member,
or is respecified, and then it is a new object or has new pod objects (the snapshot reuses the
objects of what did not change, ``snapshot/reuse.py``). So what was found for a gang (or gang
group) is kept with the objects it was found from, and used again while the gangs and their
running pods are the same objects, the cluster's nodes and resource columns are the same, and
the configuration says the same about gangs. Anything else is found afresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import is_
from typing import Any

import numpy as np

from .model import Gang, Pod


@dataclass(slots=True)
class Found:
    """What was found for one gang or gang group, and the objects it was found from."""

    gangs: list[Gang]
    pods: list[list[Pod]]  # each gang's running pods, in snapshot order
    priority: int
    specs: list[tuple]  # (key, pods, gangs, priority, elastic_of, started, created), as victims.py
    arrays: list[tuple[np.ndarray, np.ndarray]] | None = None  # each spec's (nodes, rows)


class VictimBook:
    def __init__(self) -> None:
        self.entries: dict[str, Found] = {}
        self.layout: tuple[Any, ...] | None = None
        self.used = 0  # entries used again, for tests

    def open(self, layout: tuple[Any, ...]) -> None:
        """Start a cycle; ``layout`` is the objects the arrays depend on (nodes, columns,
        whether gangs are scheduled as gangs): different ones forget everything."""
        if self.layout is None or not _same(self.layout, layout):
            self.entries.clear()
        self.layout = layout

    def get(self, key: str, gangs: list[Gang], pods: list[list[Pod]]) -> Found | None:
        """What was found for ``key`` from these very objects, if anything."""
        entry = self.entries.get(key)
        if entry is None or not _same(entry.gangs, gangs) or len(entry.pods) != len(pods):
            return None
        if not all(map(_same, entry.pods, pods)):
            return None
        self.used += 1
        return entry

    def put(self, key: str, found: Found) -> Found:
        self.entries[key] = found
        return found

    def forget_others(self, seen: set[str]) -> None:
        """Drop the gangs no longer running (what ``seen`` does not name)."""
        if len(seen) != len(self.entries):
            for key in [key for key in self.entries if key not in seen]:
                del self.entries[key]


def _same(old, new) -> bool:
    return len(old) == len(new) and all(map(is_, old, new))
