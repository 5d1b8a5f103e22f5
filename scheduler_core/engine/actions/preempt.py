"""Whole-gang preemption for a gang that is blocked by resources.

1. Wait instead of preempting when pods already being deleted would make room.
2. Candidates are running work of strictly lower priority that may be preempted: a satisfied
   gang together with the rest of its gang group, or a lone pod. Never a gang marked
   non-preemptible, never part of the preemptor's own group, never half a gang.
3. Victims are ordered cheapest first (lowest priority, then fewest pods, then the most recently
   started); the shortest prefix of that order that lets the preemptor fit is found by binary
   search (more victims never make it fit less); then victims on nodes the preemptor would not
   use are given back, and each other one too, most expensive first, if the preemptor still
   fits without it.
4. Only if the preemptor then fits: the victims are evicted and the preemptor's members are
   reserved (nominated) on the room they leave; they bind in a later cycle, once it is free.
"""

from __future__ import annotations

import bisect
import dataclasses
from dataclasses import dataclass

import numpy as np

from ..decisions import Evict, Explanation, Reason, Reserve, Transition, TransitionKind
from ..gang import attempt, fits
from ..model import Pod
from ..queue import Unit, gang_priority
from ..session import Session


@dataclass
class Victim:
    key: str
    priority: int
    pods: list[Pod]
    gangs: tuple[str, ...]
    nodes: np.ndarray  # node index of each pod
    rows: np.ndarray  # request row of each pod
    evicted: bool = False  # by an earlier preemptor in this cycle

    def cost(self) -> tuple:
        latest = max((pod.started or 0.0) for pod in self.pods)
        return (self.priority, len(self.pods), -latest, self.key)

    def free(self, used: np.ndarray) -> None:
        np.subtract.at(used, self.nodes, self.rows)

    def restore(self, used: np.ndarray) -> None:
        np.add.at(used, self.nodes, self.rows)


def preempt(session: Session, unit: Unit) -> bool:
    """Evict the cheapest set of lower-priority running work that lets ``unit`` fit."""
    terminating = _terminating_usage(session)
    if terminating is not None and _fits_without(session, unit, terminating):
        for key in unit.gangs or (unit.key,):
            session.result.explanations[key] = Explanation(
                key, Reason.PREEMPTING, "waiting for evicted pods to terminate", {}
            )
        return True
    own = set(unit.gangs)
    candidates = _candidates(session)
    # Sorted by cost, priority first: the lower-priority ones are a prefix.
    lower = bisect.bisect_left([victim.priority for victim in candidates], unit.priority)
    victims = [
        victim for victim in candidates[:lower] if not victim.evicted and not own.intersection(victim.gangs)
    ]
    if not victims:
        return False
    count = _shortest_prefix(session, unit, victims)
    if count is None:
        return False
    chosen = _minimal(session, unit, victims[:count])
    _commit(session, unit, chosen)
    return True


def _minimal(session: Session, unit: Unit, chosen: list[Victim]) -> list[Victim]:
    """Evict ``chosen`` (which lets ``unit`` fit) and give back every victim not needed after all.

    Victims with no pod on a node the preemptor would use are given back at once; the rest one
    by one, most expensive first, each only if the preemptor still fits without it.
    """
    used = session.state.used
    for victim in chosen:
        victim.free(used)
    trial = attempt(session, unit, explain=False).trial
    landing = {int(index) for placed in trial.placed for index in placed.nodes}
    trial.discard()
    idle = [victim for victim in chosen if landing.isdisjoint(victim.nodes.tolist())]
    for victim in idle:
        victim.restore(used)
    if idle and not fits(session, unit):  # placement shifted with the room given back: keep them
        for victim in idle:
            victim.free(used)
        idle = []
    skipped = {id(victim) for victim in idle}
    needed = [victim for victim in chosen if id(victim) not in skipped]
    kept: list[Victim] = []
    for victim in reversed(needed):
        victim.restore(used)
        if fits(session, unit):
            continue
        victim.free(used)
        kept.append(victim)
    kept.reverse()
    return kept


def _shortest_prefix(session: Session, unit: Unit, victims: list[Victim]) -> int | None:
    """The fewest cheapest victims whose eviction lets ``unit`` fit; None if all of them do not."""
    state = session.state
    saved = state.used.copy()
    nodes = np.concatenate([victim.nodes for victim in victims])
    rows = np.concatenate([victim.rows for victim in victims])
    ends = np.cumsum([len(victim.nodes) for victim in victims])

    def fits_after(count: int) -> bool:
        state.used[:] = saved
        np.subtract.at(state.used, nodes[: ends[count - 1]], rows[: ends[count - 1]])
        return fits(session, unit)

    try:
        if not fits_after(len(victims)):
            return None
        low, high = 1, len(victims)
        while low < high:
            middle = (low + high) // 2
            if fits_after(middle):
                high = middle
            else:
                low = middle + 1
        return low
    finally:
        state.used[:] = saved


def _terminating_usage(session: Session) -> np.ndarray | None:
    """Per-node usage of pods already being deleted (None when there are none); once a cycle."""
    if session.terminating_usage is None:
        pods = [pod for pod in session.snapshot.pods if pod.terminating]
        session.terminating_usage = session.state.usage_of(pods) if pods else False
    return session.terminating_usage if session.terminating_usage is not False else None


def _fits_without(session: Session, unit: Unit, usage: np.ndarray) -> bool:
    session.state.used -= usage
    try:
        return fits(session, unit)
    finally:
        session.state.used += usage


def _candidates(session: Session) -> list[Victim]:
    """Every piece of running work that could ever be a victim, cheapest first; once a cycle."""
    if session.victims is not None:
        return session.victims
    groups = {group.key: group for group in session.snapshot.gang_groups}
    seen: set[str] = set()
    found: list[tuple[str, int, list[Pod], tuple[str, ...]]] = []
    for pod in session.snapshot.pods:
        if pod.node is None or pod.terminating or pod.node not in session.state.node_index:
            continue
        gang = session.gangs.get(pod.gang) if pod.gang is not None and session.config.gangs else None
        if gang is None:
            if pod.preemptible:
                found.append((pod.key, pod.priority, [pod], ()))
            continue
        group = groups.get(gang.group) if gang.group is not None else None
        key = group.key if group is not None else gang.key
        if key in seen:
            continue
        seen.add(key)
        members = tuple(k for k in (group.members if group else (gang.key,)) if k in session.gangs)
        pods = [
            p
            for k in members
            for p in session.members.get(k, ())
            if p.node is not None and not p.terminating and p.node in session.state.node_index
        ]
        priority = max(gang_priority(session.gangs[k], session.members.get(k, [])) for k in members)
        movable = all(session.gangs[k].preemptible for k in members) and all(p.preemptible for p in pods)
        if pods and movable:
            found.append((key, priority, pods, members))
    victims = _victims(session, found)
    victims.sort(key=Victim.cost)
    session.victims = victims
    return victims


def _victims(session: Session, found: list[tuple[str, int, list[Pod], tuple[str, ...]]]) -> list[Victim]:
    """Victims whose node and request arrays are views into two arrays built in one go."""
    state = session.state
    pods = [pod for _key, _priority, members, _gangs in found for pod in members]
    if not pods:
        return []
    positions = np.fromiter((state.pod_position[id(pod)] for pod in pods), dtype=np.int64, count=len(pods))
    nodes = state.pod_where[positions]
    rows = state.pod_rows[positions]
    victims, start = [], 0
    for key, priority, members, gangs in found:
        end = start + len(members)
        victims.append(Victim(key, priority, members, gangs, nodes[start:end], rows[start:end]))
        start = end
    return victims


def _commit(session: Session, unit: Unit, chosen: list[Victim]) -> None:
    names = ", ".join(f"{v.key} (priority {v.priority}, {len(v.pods)} pods)" for v in chosen)
    reason = f"preempted by {unit.key} (priority {unit.priority})"
    for victim in chosen:
        victim.evicted = True
        for pod in victim.pods:
            session.evicted.add(pod.key)
            session.result.evictions.append(Evict(pod.key, pod.node, pod.gang, reason))
        for key in victim.gangs:
            session.gangs[key] = dataclasses.replace(session.gangs[key], satisfied=False, wait_started=None)
            session.result.transitions.append(Transition(key, TransitionKind.PREEMPTED, reason))
    result = attempt(session, unit, explain=False)
    for pod, node in result.trial.assignments():
        session.reserve(pod, node)
        session.result.reservations.append(Reserve(pod.key, node, pod.gang, f"nominated: evicting {names}"))
    session.done.add(unit.key)
    for key in unit.gangs or (unit.key,):
        session.result.explanations[key] = Explanation(
            key,
            Reason.PREEMPTING,
            f"evicting {names} to make room; binds once they are gone",
            {"victims": [v.key for v in chosen]},
        )
