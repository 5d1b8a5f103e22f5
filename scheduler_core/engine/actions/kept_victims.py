"""Preemption's candidates from the victim book (``victim_book.py``): with a carry, the list the
last cycles found, brought up to date.

Only the gangs the book was told changed (pods new or gone, Gang objects replaced, new or gone)
are looked at again: each one's entry, the entries whose group names it, and the one it is
listed under now are found again as ``victims.py`` finds them (``victim_specs.py``); every other
entry keeps its victims, with no pass over its pods. An entry's victims are found when first
asked for, by a preemptor above its priority (as ``victims.py`` skips the gangs it may not take).
The running pods of the gangs looked at again, and the lone pods, are read from the state's
arrays (``pod_where``, ``pod_pending``, ``pod_terminating``, ``pod_gang``), which say for each pod
what ``victims.py`` asks of it.

The list is every entry's victims in the order taken (kept sorted in the book), those of
priority below the preemptor's, with the lone pods merged in: the list ``victims.py`` builds
afresh, victim for victim (``tests/engine/test_kept_victims.py`` decides both ways).
"""

from __future__ import annotations

from operator import itemgetter

import numpy as np

from ..model import Pod
from ..session import Session
from ..state import ClusterState
from ..victim_book import Entry, VictimBook
from .victim_specs import Victim, from_specs, gang_victims, priority_of

_ORDER = itemgetter(0)


def kept_candidates(session: Session, below: int, book: VictimBook) -> list[Victim]:
    """Running work that could be a victim of a unit of priority ``below``, in the order taken."""
    state = session.state
    running = (state.pod_where >= 0) & ~state.pod_pending & ~state.pod_terminating
    names = state.gang_codes.keys
    fresh = book.open(
        (state.node_names, state.resources, state.gang_codes), tuple(session.snapshot.gang_groups)
    )
    keys = book.take_changes(names)
    counts = np.bincount(state.pod_gang[running & (state.pod_gang >= 0)], minlength=len(names))
    if fresh:
        keys.update(names[code] for code in np.flatnonzero(counts).tolist())
    _mark_gangless(session, book, keys, fresh)
    _find_again(session, book, keys, running, counts, below)
    pairs = [pair for pair in book.ranked if pair[1].priority < below]
    lone = _lone(session, below, running, book.gangless)
    if lone:  # before the gangs' victims, as victims.py finds them: the first of equals
        pairs = [(victim.order(), victim) for victim in lone] + pairs
        pairs.sort(key=_ORDER, reverse=True)
    victims = [victim for _, victim in pairs]
    gone = session.evicted  # kept victims may say evicted from an earlier cycle: said afresh
    for victim in victims:
        victim.evicted = bool(gone) and any(pod.key in gone for pod in victim.pods)
    return victims


def _mark_gangless(session: Session, book: VictimBook, keys: set[str], fresh: bool) -> None:
    """Per gang code, whether its key names no gang of this cycle (its pods are lone pods)."""
    names, gangs = session.state.gang_codes.keys, session.gangs
    known = 0 if fresh else len(book.gangless)
    more = np.fromiter((key not in gangs for key in names[known:]), bool, len(names) - known)
    book.gangless = np.concatenate((book.gangless[:known], more))
    code_of = session.state.gang_codes.code_of
    for key in keys:
        code = code_of.get(key)
        if code is not None:
            book.gangless[code] = key not in gangs


def _find_again(
    session: Session, book: VictimBook, keys: set[str], running: np.ndarray, counts: np.ndarray, below: int
) -> None:
    """Find again the entries the gangs ``keys`` are or were listed under or named in. An
    entry's victims are found once a preemptor above its priority asks (``VictimBook.unfound``)."""
    gangs, code_of = session.gangs, session.state.gang_codes.code_of
    groups = {group.key: group for group in session.snapshot.gang_groups}
    touched: set[str] = set()
    for key in keys:
        was = book.listed_under.pop(key, None)
        if was is not None:
            book.lists[was].discard(key)
            touched.add(was)
        touched |= book.named_in.get(key, set())
        gang, code = gangs.get(key), code_of.get(key)
        if gang is not None and code is not None and counts[code]:
            group = groups.get(gang.group) if gang.group is not None else None
            under = group.key if group is not None else gang.key
            book.listed_under[key] = under
            book.lists.setdefault(under, set()).add(key)
            touched.add(under)
    gone: set[int] = set()
    for under in touched:
        entry = book.entries.pop(under, None)
        book.unfound.pop(under, None)
        if entry is not None:
            gone.update(map(id, entry.victims))
            for name in entry.names:
                book.named_in[name].discard(under)
    book.used += len(book.entries)
    for under in touched:
        if book.lists.get(under):
            names = groups[under].members if under in groups else (under,)
            members = tuple(k for k in names if k in gangs)
            book.entries[under] = Entry(priority_of(session, members), [], names, members)
            book.unfound[under] = book.entries[under].priority
            for name in names:
                book.named_in.setdefault(name, set()).add(under)
    wanted = [under for under, priority in book.unfound.items() if priority < below]
    book.found += len(wanted)
    found = _running_pods(session, running, {k for under in wanted for k in book.entries[under].members})
    new: list[tuple[tuple, Victim]] = []
    for under in wanted:
        entry = book.entries[under]
        specs = gang_victims(session, under, entry.members, entry.priority, found[0])
        entry.victims = _victims(session.state, specs, found[1])
        del book.unfound[under]
        new.extend((victim.order(), victim) for victim in entry.victims)
    if gone or new:
        ranked = [pair for pair in book.ranked if id(pair[1]) not in gone] if gone else book.ranked
        ranked.extend(new)
        ranked.sort(key=_ORDER, reverse=True)  # the kept ones are in order already: a merge
        book.ranked = ranked


def _running_pods(
    session: Session, running: np.ndarray, keys: set[str]
) -> tuple[dict[str, list[Pod]], dict[int, int]]:
    """The running pods of the gangs ``keys`` in snapshot order, and each one's position."""
    state, code_of = session.state, session.state.gang_codes.code_of
    codes = [code_of[key] for key in keys if key in code_of]
    if not codes:
        return {}, {}
    wanted = np.zeros(len(state.gang_codes) + 1, bool)  # the last: no gang
    wanted[codes] = True
    positions = np.flatnonzero(running & wanted[state.pod_gang])
    positions = positions[np.argsort(state.pod_gang[positions], kind="stable")]
    of = state.pod_gang[positions]
    starts = np.flatnonzero(np.concatenate(([True], of[1:] != of[:-1])))
    ends = np.append(starts[1:], len(of))
    pods = state.pods
    by_gang: dict[str, list[Pod]] = {}
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        at = positions[start:end].tolist()
        by_gang[state.gang_codes.keys[int(of[start])]] = [pods[i] for i in at]
    position = {id(pods[i]): i for i in positions.tolist()}
    return by_gang, position


def _victims(state: ClusterState, specs: list[tuple], position: dict[int, int]) -> list[Victim]:
    """One gang (or group)'s victims from its specs (``position``: each pod's in the snapshot)."""
    pods = [pod for spec in specs for pod in spec[1]]
    return from_specs(state, specs, np.fromiter((position[id(pod)] for pod in pods), np.int64, len(pods)))


def _lone(session: Session, below: int, running: np.ndarray, gangless: np.ndarray) -> list[Victim]:
    """The running pods of no gang (or of a gang this cycle does not declare) that may be taken."""
    state = session.state
    codes = state.pod_gang
    alone = codes < 0
    if gangless.any():
        alone |= np.append(gangless, False)[codes]  # code -1: the appended False
    positions = np.flatnonzero(running & alone).tolist()
    victims: list[Victim] = []
    for i in positions:
        pod = state.pods[i]
        if pod.preemptible and pod.priority < below:
            where, rows = state.pod_where[i : i + 1], state.pod_rows[i : i + 1]
            victims.append(
                Victim(pod.key, pod.priority, [pod], (), where, rows, pod.started or 0.0, pod.created)
            )
    return victims
