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

import numpy as np

from ..model import Pod
from ..session import Session
from ..state import ClusterState
from .kept_victims import kept_candidates
from .victim_specs import Victim, from_specs, gang_victims, priority_of

__all__ = ["Victim", "VictimPool", "candidates", "fewest", "mark_gone", "of_queue", "shift_all"]


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
    never outranks it (should one do so, the list is built again for it). With a carry, from
    what the last cycles found, the gangs that changed since looked at again (``kept_victims.py``).
    """
    if session.victims is not None and session.victims.below >= below:
        return session.victims
    book = session.victim_book
    if book is not None and session.config.gangs:
        victims = kept_candidates(session, below, book)
    else:
        victims = _collect(session, below, session.snapshot.pods)
    session.victims = VictimPool(below, victims)
    return session.victims


def _collect(session: Session, below: int, pods) -> list[Victim]:
    """``candidates`` among ``pods`` (all of the snapshot's, or those of some queues), found
    afresh."""
    found: list[tuple] = []
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
    groups = {group.key: group for group in session.snapshot.gang_groups}
    seen: set[str] = set()
    for gang_key in running:
        gang = session.gangs[gang_key]
        group = groups.get(gang.group) if gang.group is not None else None
        key = group.key if group is not None else gang.key
        if key in seen:
            continue
        seen.add(key)
        members = tuple(k for k in (group.members if group else (gang.key,)) if k in session.gangs)
        priority = priority_of(session, members)
        if priority < below:
            found.extend(gang_victims(session, key, members, priority, running))
    victims = _build(session, found)
    victims.sort(key=Victim.order, reverse=True)
    for victim in victims if session.evicted else ():  # built later: what is gone stays gone
        victim.evicted = any(pod.key in session.evicted for pod in victim.pods)
    return victims


def of_queue(session: Session, queue: int, below: int) -> VictimPool:
    """With queues: ``candidates`` of one queue (preemption stays within the preemptor's
    queue), built from that queue's pods only, once a cycle per queue."""
    ledger = session.queues
    cached = ledger.queue_victims.get(queue)
    if cached is None or cached.below < below:
        victims = _collect(session, below, ledger.pods_of({queue}))
        cached = ledger.queue_victims[queue] = VictimPool(below, victims)
    return cached


def _build(session: Session, found: list[tuple]) -> list[Victim]:
    """Victims whose node and request arrays are views into two arrays built in one go."""
    state = session.state
    pods = [pod for spec in found for pod in spec[1]]
    positions = np.fromiter((state.pod_position[id(pod)] for pod in pods), np.int64, len(pods))
    return from_specs(state, found, positions)


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
