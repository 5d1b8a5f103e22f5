"""Preemption's candidates, kept from cycle to cycle (``carry.py``), and what changed since.

The first preemptor of a cycle lists the running work that could be a victim
(``actions/victims.py``): each running gang's elastic members and core, their nodes and request
rows, in the order taken. On a busy cluster that list cost a fifth of a cycle that preempts,
most of it a pass over every pod to group the running ones by gang, though almost all of it is
what the last cycle found: a running gang's victims change only when one of its pods starts,
ends, is replaced or joins (a new pod object, or one gone), when its Gang object is replaced (by
the snapshot or by an action of the cycle), or when its gang group is respecified.

So the book keeps, per running gang (or gang group), the victims found for it (``Entry``), and all
of them in the order taken (``ranked``); the carry tells it, cycle after cycle, the gang codes of
the pods new or gone (``pods_changed``) and the gangs replaced, new or gone (``gangs_changed``,
with the cycle's gang table, which notes the keys the cycle writes). The next list looks at
those gangs again and keeps the other entries as they are (``actions/kept_victims.py``). Lone
pods are found again each time, from the state's arrays. Anything the notes cannot tell (the
state built afresh, other nodes or resource columns, other gang groups, the gangs mapped again)
starts the book over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import is_
from typing import Any

import numpy as np

from .gang_map import GangTable

#: Arrays of codes noted before they are merged into one; gang keys noted before starting over.
_MOST_NOTES = 32
_MOST_CHANGED = 100_000


@dataclass(eq=False, slots=True)
class Entry:
    """The victims of one running gang or gang group, found together."""

    priority: int
    victims: list  # of actions/victim_specs.Victim, in the order found; [] until found
    names: tuple[str, ...]  # every gang key it was found from, its group's undeclared ones too
    members: tuple[str, ...]  # those of its gangs the snapshot declares


@dataclass(eq=False)
class VictimBook:
    entries: dict[str, Entry] = field(default_factory=dict)  # gang or gang group -> its victims
    ranked: list[tuple[tuple, Any]] = field(default_factory=list)  # (order, victim), as taken
    # Entries whose victims are not found yet, and their priority: found when a preemptor above
    # it asks (most running gangs are above most preemptors; the list afresh skips them too).
    unfound: dict[str, int] = field(default_factory=dict)
    listed_under: dict[str, str] = field(default_factory=dict)  # running gang -> its entry's key
    lists: dict[str, set[str]] = field(default_factory=dict)  # entry key -> its running gangs
    named_in: dict[str, set[str]] = field(default_factory=dict)  # gang key -> entries naming it
    gangless: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # per gang code
    changed: set[str] = field(default_factory=set)  # gangs to look at again
    table: GangTable = field(default_factory=lambda: GangTable({}))  # the cycle's gangs by key
    codes: list[np.ndarray] = field(default_factory=list)  # gang codes of pods new or gone
    fresh: bool = True  # nothing kept: the next list finds everything
    layout: tuple[Any, ...] = ()
    groups: tuple[Any, ...] = ()
    used: int = 0  # entries kept at a listing, for tests
    found: int = 0  # entries whose victims were found, for tests

    def start_over(self) -> None:
        """Forget everything: the next list is found afresh."""
        self.fresh = True
        self.changed.clear()
        self.codes.clear()

    def pods_changed(self, codes: np.ndarray) -> None:
        """The gang codes of this cycle's pods that are new, and of the last one's that are gone."""
        if not self.fresh and codes.size:
            self.codes.append(codes)
            if len(self.codes) > _MOST_NOTES:  # cycles without a listing: one array of codes
                self.codes = [np.unique(np.concatenate(self.codes))]

    def gangs_changed(self, keys: set[str] | None, table: GangTable) -> None:
        """A cycle opens: ``keys``, the gangs replaced, new or gone since the last snapshot
        (None: not known), and ``table``, the gangs by key the cycle writes to. The gangs the
        last cycle wrote are looked at again too, though a listing of that cycle may have looked
        at them already: it may have found them before they were written, and the snapshot may
        hold the gangs it wrote or, when its decisions were lost, the gangs as they were."""
        if keys is None or len(self.changed) > _MOST_CHANGED:
            self.start_over()  # not known, or so many that finding all again costs no more
        elif not self.fresh:
            self.changed |= keys
            self.changed |= self.table.written
        self.table = table

    def open(self, layout: tuple[Any, ...], groups: tuple[Any, ...]) -> bool:
        """Start a listing; ``layout``: the objects the arrays and gang codes depend on (nodes,
        columns, gang codes), ``groups``: the gang groups. Other objects than last time start
        the book over. True: everything is to be found."""
        if not _same(self.layout, layout) or not _same(self.groups, groups):
            self.start_over()
        self.layout, self.groups = layout, groups
        if self.fresh:
            self.entries.clear()
            self.unfound.clear()
            self.ranked.clear()
            self.listed_under.clear()
            self.lists.clear()
            self.named_in.clear()
            self.gangless = np.zeros(0, bool)
        return self.fresh

    def take_changes(self, names: list[str]) -> set[str]:
        """The gang keys to look at again (``names``: gang code -> key), noted since the last
        listing; the notes start again empty."""
        keys = self.changed | self.table.written  # what this cycle wrote so far too
        if self.codes:
            codes = np.unique(np.concatenate(self.codes))
            keys.update(names[code] for code in codes[codes >= 0].tolist())
        self.changed.clear()
        self.codes.clear()
        self.fresh = False
        return keys


def _same(old, new) -> bool:
    return len(old) == len(new) and all(map(is_, old, new))
