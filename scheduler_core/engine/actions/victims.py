"""What preemption may take, and in which order (``preempt.py`` decides how much of it).

Two kinds of victim, taken in this order, as Volcano's gang plugin and KAI-Scheduler take the
part of a job above its minAvailable before the job itself:

1. *Elastic members*: running members of a gang above its min_member (and above what its
   min_resources need), one victim per pod; lowest priority first, then youngest first. Taking
   any of them leaves the gang running with at least its minimum: it stays satisfied.
2. *Whole gangs* (with the rest of their gang group) and lone pods; lowest priority first, then
   youngest first. A whole gang's victim holds its core, the members that are not elastic;
   taking it takes its elastic members too, so a victim gang keeps >= min_member running or
   loses all of its members, never something in between.

Only running work that may be preempted: never a non-preemptible pod, never any pod of a gang
marked non-preemptible, never a gang whole when one of its pods is non-preemptible.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..model import Gang, Pod
from ..queue import gang_priority
from ..session import Session
from ..state import ClusterState
from ..victim_book import Found, VictimBook


@dataclass(eq=False)
class Victim:
    key: str  # the pod of an elastic member or a lone pod; the gang (or gang group) taken whole
    priority: int
    pods: list[Pod]
    gangs: tuple[str, ...]  # gangs taken whole (they are requeued); empty otherwise
    nodes: np.ndarray  # node index of each pod
    rows: np.ndarray  # request row of each pod
    started: float  # the latest start among its pods: the youngest victims go first
    created: float
    elastic_of: Gang | None = None  # an elastic member: the gang it is above the minimum of
    whole: Victim | None = None  # an elastic member's gang taken whole, when it may be
    evicted: bool = False  # by an earlier preemptor in this cycle

    @property
    def owners(self) -> tuple[str, ...]:
        """The gangs this victim belongs to (a preemptor never takes from its own)."""
        return (self.elastic_of.key,) if self.elastic_of is not None else self.gangs

    def order(self) -> tuple:
        """Sorted descending: elastic first, lowest priority, youngest (started, created, key)."""
        return (self.elastic_of is not None, -self.priority, self.started, self.created, self.key)

    def why(self) -> str:
        """Why this victim was taken, as the eviction and the history say it."""
        if self.elastic_of is not None:
            gang = self.elastic_of
            return f"elastic member above minMember {gang.min_member} of gang {gang.key}, lowest priority"
        if not self.gangs:
            return "lone pod, lowest priority"
        kind = "whole gang" if self.gangs == (self.key,) else "whole gang group"
        return f"{kind} {self.key}, lowest priority"

    def free(self, state: ClusterState) -> None:
        state.shift(self.nodes, self.rows, -1)

    def restore(self, state: ClusterState) -> None:
        state.shift(self.nodes, self.rows, +1)


class VictimPool:
    """``victims`` (in the order taken, all of priority below ``below``) with arrays to pick a
    preemptor's from them: a busy cycle has a hundred preemptors reading one list of a thousand
    victims, and a Python pass over it for each cost as much as their searches."""

    def __init__(self, below: int, victims: list[Victim]) -> None:
        self.below = below
        self.victims = victims
        count = len(victims)
        self.priority = np.fromiter((victim.priority for victim in victims), np.int64, count)
        self.dead = np.fromiter((victim.evicted for victim in victims), bool, count)
        # A victim is always taken whole, so its first pod tells (preemption's and reclaim's
        # lists hold distinct victims for the same pods).
        self.first_pod = {victim.pods[0].key: i for i, victim in enumerate(victims)}
        self.owned: dict[str, list[int]] = {}  # gang -> victims it owns
        for i, victim in enumerate(victims):
            for gang in victim.owners:
                self.owned.setdefault(gang, []).append(i)
        self._seen: set[str] = set()

    def select(self, session: Session, priority: int, own: tuple[str, ...]) -> list[Victim]:
        """The victims of priority below ``priority``, not gone, not of the gangs ``own``."""
        self._mark_gone(session)
        mask = (self.priority < priority) & ~self.dead
        for gang in own:
            mask[self.owned.get(gang, [])] = False
        victims = self.victims
        return [victims[i] for i in np.flatnonzero(mask)]

    def _mark_gone(self, session: Session) -> None:
        mark_gone(session, self._seen, self.first_pod, self.dead)


def mark_gone(session: Session, seen: set[str], first_pod: dict[str, int], dead: np.ndarray) -> None:
    """Mark ``dead`` the victims (by their first pod's index) whose pods were evicted since the
    last call (``seen``: the evicted pod keys seen so far, updated). Preemption's and reclaim's
    lists hold distinct victims for the same pods, always taken whole: the first pod tells."""
    if len(seen) == len(session.evicted):
        return  # only ever grows: the same size is the same set
    new = session.evicted - seen
    for key in new:
        index = first_pod.get(key)
        if index is not None:
            dead[index] = True
    seen |= new


def shift_all(state: ClusterState, victims: list[Victim], sign: int) -> None:
    """``free`` (``sign`` -1) or ``restore`` (+1) every one of ``victims`` in one shift of the
    state: the same end state as one by one, with one pass over the nodes they touch."""
    if victims:
        nodes = np.concatenate([victim.nodes for victim in victims])
        rows = np.concatenate([victim.rows for victim in victims])
        state.shift(nodes, rows, sign)


def candidates(session: Session, below: int) -> VictimPool:
    """Running work that could be a victim of a unit of priority ``below``, in the order taken.

    Built once a cycle, for the first preemptor: units come in priority order, so a later one
    never outranks it (should one do so, the list is built again for it).
    """
    if session.victims is not None and session.victims.below >= below:
        return session.victims
    victims = _collect(session, below, session.snapshot.pods, session.victim_book)
    session.victims = VictimPool(below, victims)
    return session.victims


def _collect(session: Session, below: int, pods, book: VictimBook | None = None) -> list[Victim]:
    """``candidates`` among ``pods`` (all of the snapshot's, or those of some queues). With
    ``book`` (all of the snapshot's pods, with a carry), a gang's victims are those found in an
    earlier cycle while its gangs and running pods are the same objects (``victim_book.py``)."""
    found: list[tuple] = []
    kept: list[Found | None] = []  # per spec: the book's entry it came from (its arrays), if any
    running: dict[str, list[Pod]] = defaultdict(list)
    index = session.state.node_index
    for pod in pods:
        if pod.node is None or pod.terminating or pod.node not in index:
            continue
        gang = session.gangs.get(pod.gang) if pod.gang is not None and session.config.gangs else None
        if gang is not None:
            if gang.priority is not None and gang.priority >= below:
                continue  # its group's priority is at least its own: never a victim here
            running[gang.key].append(pod)
        elif pod.preemptible and pod.priority < below:
            found.append((pod.key, [pod], (), pod.priority, None, pod.started or 0.0, pod.created))
            kept.append(None)
    groups = {group.key: group for group in session.snapshot.gang_groups}
    seen: set[str] = set()
    if book is not None:
        book.open((session.state.node_names, session.state.resources, session.config.gangs))
    for gang_key in running:
        gang = session.gangs[gang_key]
        group = groups.get(gang.group) if gang.group is not None else None
        key = group.key if group is not None else gang.key
        if key in seen:
            continue
        seen.add(key)
        members = tuple(k for k in (group.members if group else (gang.key,)) if k in session.gangs)
        priority = _priority(session, members)
        if priority >= below:
            continue
        if book is None:
            specs = _gang_victims(session, key, members, priority, running)
            found.extend(specs)
            kept.extend([None] * len(specs))
        else:
            entry = _found(session, book, key, members, running, priority)
            found.extend(entry.specs)
            kept.extend([entry] * len(entry.specs))
    if book is not None:
        book.forget_others(seen)
    victims = _build(session, found, kept)
    victims.sort(key=Victim.order, reverse=True)
    for victim in victims if session.evicted else ():  # built later: what is gone stays gone
        victim.evicted = any(pod.key in session.evicted for pod in victim.pods)
    return victims


def _priority(session: Session, members: tuple[str, ...]) -> int:
    return max(gang_priority(session.gangs[k], session.members.get(k, [])) for k in members)


def _found(
    session: Session,
    book: VictimBook,
    key: str,
    members: tuple[str, ...],
    running: dict[str, list[Pod]],
    priority: int,
) -> Found:
    """The book's entry for ``key``, or one found afresh. A gang whose priority is its pods'
    (no priority of its own) keeps its objects when a member of another priority joins: its
    entry is found again when the priority moved."""
    gangs = [session.gangs[k] for k in members]
    pods = [running.get(k, _NONE) for k in members]
    entry = book.get(key, gangs, pods)
    if entry is None or entry.priority != priority:
        entry = book.put(
            key, Found(gangs, pods, priority, _gang_victims(session, key, members, priority, running))
        )
    return entry


_NONE: list[Pod] = []  # a member gang with no running pod (never changed)


def of_queue(session: Session, queue: int, below: int) -> VictimPool:
    """With queues: ``candidates`` of one queue (preemption stays within the preemptor's
    queue), built from that queue's pods only, once a cycle per queue."""
    ledger = session.queues
    cached = ledger.queue_victims.get(queue)
    if cached is None or cached.below < below:
        victims = _collect(session, below, ledger.pods_of({queue}))
        cached = ledger.queue_victims[queue] = VictimPool(below, victims)
    return cached


def _gang_victims(
    session: Session, key: str, members: tuple[str, ...], priority: int, running: dict[str, list[Pod]]
) -> list[tuple]:
    """The elastic members of each gang of a group, then the group's core taken whole."""
    found: list[tuple] = []
    core: list[Pod] = []
    for k in members:
        gang = session.gangs[k]
        spare = _elastic(session, gang, running.get(k, [])) if gang.preemptible else []
        found.extend((p.key, [p], (), priority, gang, p.started or 0.0, p.created) for p in spare)
        taken = {p.key for p in spare}
        core.extend(p for p in running.get(k, ()) if p.key not in taken)
    everyone = [p for k in members for p in running.get(k, ())]
    movable = all(session.gangs[k].preemptible for k in members) and all(p.preemptible for p in everyone)
    if core and movable:  # dated by its youngest member, elastic ones included
        started = max(p.started or 0.0 for p in everyone)
        found.append((key, core, members, priority, None, started, max(p.created for p in everyone)))
    return found


def _elastic(session: Session, gang: Gang, running: list[Pod]) -> list[Pod]:
    """Members that may go with the gang still at min_member and min_resources: youngest first."""
    spare = len(running) - gang.min_member
    if spare <= 0:
        return []
    state = session.state
    left = None
    columns = [state.column[name] for name in gang.min_resources if name in state.column]
    if columns:
        wanted = state.requests_vector(gang.min_resources)
        left = sum((state.vector(p) for p in running), np.zeros(len(state.resources), np.int64)) - wanted
    taken: list[Pod] = []
    for pod in sorted(running, key=_age, reverse=True):
        if len(taken) == spare:
            break
        if not pod.preemptible:
            continue
        if left is not None:
            after = left - state.vector(pod)
            if np.any(after[columns] < 0):
                continue
            left = after
        taken.append(pod)
    return taken


def _age(pod: Pod) -> tuple:
    return (pod.started or 0.0, pod.created, pod.key)


def _build(session: Session, found: list[tuple], kept: list[Found | None]) -> list[Victim]:
    """Victims whose node and request arrays are the book's, or views into two arrays built
    in one go for the rest (and then kept in the book's entries)."""
    state = session.state
    fresh = [i for i, entry in enumerate(kept) if entry is None or entry.arrays is None]
    pods = [pod for i in fresh for pod in found[i][1]]
    arrays: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if pods:
        positions = np.fromiter((state.pod_position[id(pod)] for pod in pods), np.int64, len(pods))
        nodes, rows = state.pod_where[positions], state.pod_rows[positions]
        start = 0
        for i in fresh:
            end = start + len(found[i][1])
            arrays[i] = (nodes[start:end], rows[start:end])
            start = end
    filled: dict[int, list] = {}  # id(entry) -> its arrays, in its specs' order
    victims: list[Victim] = []
    wholes: dict[str, Victim] = {}
    j = 0  # the spec's place among its entry's (an entry's specs come together)
    for i, (key, members, gangs, priority, elastic_of, started, created) in enumerate(found):
        entry = kept[i]
        j = j + 1 if i and entry is not None and entry is kept[i - 1] else 0
        if i in arrays:
            where, rows_of = arrays[i]
            if entry is not None:
                filled.setdefault(id(entry), []).append((where, rows_of))
                if len(filled[id(entry)]) == len(entry.specs):
                    entry.arrays = filled.pop(id(entry))
        else:
            where, rows_of = entry.arrays[j]
        victim = Victim(key, priority, members, gangs, where, rows_of, started, created, elastic_of)
        for gang in gangs:
            wholes[gang] = victim
        victims.append(victim)
    for victim in victims:
        if victim.elastic_of is not None:
            victim.whole = wholes.get(victim.elastic_of.key)
    return victims


def fewest(total: int, enough: Callable[[int], bool], low: int = 1) -> int | None:
    """The smallest count in ``low``..``total`` for which ``enough`` holds, by binary search
    (taking more victims never leaves less room, so ``enough`` only turns true once); None when
    even ``total`` is not enough. ``low``: a count below which ``enough`` is known not to hold
    (``fit_bound.py``), tried first. Preemption and reclaim both take the shortest prefix of
    their victims this way."""
    if low > 1:
        if enough(low):
            return low
        low += 1
        if low > total:
            return None
    if not enough(total):
        return None
    high = total
    while low < high:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle + 1
    return low
