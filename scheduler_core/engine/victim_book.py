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

from collections.abc import Callable
from dataclasses import dataclass
from operator import is_
from typing import Any

import numpy as np

from .model import Gang, Pod


@dataclass(slots=True)
class Found:
    """What was found for one gang or gang group, and the objects it was found from."""

    gangs: tuple[Gang, ...]
    pods: tuple[tuple[Pod, ...], ...]  # each gang's running pods, in the order found
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
        if (
            self.layout is None
            or len(self.layout) != len(layout)
            or any(a is not b for a, b in zip(self.layout, layout, strict=True))
        ):
            self.entries.clear()
        self.layout = layout

    def found(
        self,
        key: str,
        gangs: tuple[Gang, ...],
        pods: tuple[tuple[Pod, ...], ...],
        find: Callable[[], tuple[int, list[tuple]]],
    ) -> Found:
        """What was found for ``key`` from these very objects, or ``find()``'s answer, kept."""
        entry = self.entries.get(key)
        if entry is not None and _same(entry.gangs, gangs) and _same_pods(entry.pods, pods):
            self.used += 1
            return entry
        priority, specs = find()
        entry = self.entries[key] = Found(gangs, pods, priority, specs)
        return entry

    def forget_others(self, seen: set[str]) -> None:
        """Drop the gangs no longer running (what ``seen`` does not name)."""
        if len(seen) != len(self.entries):
            for key in [key for key in self.entries if key not in seen]:
                del self.entries[key]


def _same(old: tuple, new: tuple) -> bool:
    return len(old) == len(new) and all(map(is_, old, new))


def _same_pods(old: tuple[tuple[Pod, ...], ...], new: tuple[tuple[Pod, ...], ...]) -> bool:
    return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))
