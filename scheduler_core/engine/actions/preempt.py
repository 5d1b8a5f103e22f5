"""Whole-gang preemption for the first gang that is blocked by resources.

1. Wait instead of preempting when pods already being deleted would make room.
2. Candidates are running work of strictly lower priority that may be preempted: a satisfied
   gang together with the rest of its gang group, or a lone pod. Never a gang marked
   non-preemptible, never part of the preemptor's own group, never half a gang.
3. Victims are taken cheapest first (lowest priority, then fewest pods, then the most recently
   started) until the preemptor fits; then each is given back, most expensive first, if the
   preemptor still fits without it.
4. Only if the preemptor then fits: the victims are evicted and the preemptor's members are
   reserved (nominated) on the room they leave; they bind in a later cycle, once it is free.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..decisions import Evict, Explanation, Reason, Reserve, Transition, TransitionKind
from ..gang import attempt
from ..model import Pod
from ..queue import Unit, gang_priority
from ..session import Session


@dataclass
class Victim:
    key: str
    priority: int
    pods: list[Pod]
    gangs: tuple[str, ...]

    def cost(self) -> tuple:
        latest = max((pod.started or 0.0) for pod in self.pods)
        return (self.priority, len(self.pods), -latest, self.key)


def preempt(session: Session, unit: Unit) -> bool:
    """Evict the cheapest set of lower-priority running work that lets ``unit`` fit."""
    state = session.state
    terminating = state.usage_of(pod for pod in session.snapshot.pods if pod.terminating)
    if terminating.any() and _fits_without(session, unit, terminating):
        session.result.explanations[_gang_of(unit)] = Explanation(
            _gang_of(unit), Reason.PREEMPTING, "waiting for evicted pods to terminate", {}
        )
        return True
    victims = sorted(_candidates(session, unit), key=Victim.cost)
    if not victims:
        return False
    usage = {victim.key: state.usage_of(victim.pods) for victim in victims}
    chosen: list[Victim] = []
    for victim in victims:
        state.used -= usage[victim.key]
        chosen.append(victim)
        if _fits(session, unit):
            break
    else:
        for victim in chosen:
            state.used += usage[victim.key]
        return False
    for victim in reversed(chosen[:-1]):  # the last one was needed, or the loop would have stopped
        state.used += usage[victim.key]
        if _fits(session, unit):
            chosen.remove(victim)
        else:
            state.used -= usage[victim.key]
    _commit(session, unit, chosen)
    return True


def _fits(session: Session, unit: Unit) -> bool:
    result = attempt(session, unit)
    result.trial.discard()
    return result.satisfied


def _fits_without(session: Session, unit: Unit, usage: np.ndarray) -> bool:
    session.state.used -= usage
    try:
        return _fits(session, unit)
    finally:
        session.state.used += usage


def _candidates(session: Session, unit: Unit) -> list[Victim]:
    own = set(unit.gangs)
    groups = {group.key: group for group in session.snapshot.gang_groups}
    seen: set[str] = set()
    victims: list[Victim] = []
    for pod in session.snapshot.pods:
        if pod.node is None or pod.terminating or pod.key in session.evicted:
            continue
        gang = session.gangs.get(pod.gang) if pod.gang is not None and session.config.gangs else None
        if gang is None:
            if pod.priority < unit.priority and pod.preemptible:
                victims.append(Victim(pod.key, pod.priority, [pod], ()))
            continue
        group = groups.get(gang.group) if gang.group is not None else None
        key = group.key if group is not None else gang.key
        if key in seen:
            continue
        seen.add(key)
        members = [k for k in (group.members if group else (gang.key,)) if k in session.gangs]
        if own.intersection(members):
            continue
        pods = [p for k in members for p in session.running(k) if p.node is not None and not p.terminating]
        priority = max(gang_priority(session.gangs[k], session.members.get(k, [])) for k in members)
        movable = all(session.gangs[k].preemptible for k in members) and all(p.preemptible for p in pods)
        if pods and movable and priority < unit.priority:
            victims.append(Victim(key, priority, pods, tuple(members)))
    return victims


def _gang_of(unit: Unit) -> str:
    return unit.gangs[0] if unit.gangs else unit.key


def _commit(session: Session, unit: Unit, chosen: list[Victim]) -> None:
    names = ", ".join(f"{v.key} (priority {v.priority}, {len(v.pods)} pods)" for v in chosen)
    reason = f"preempted by {unit.key} (priority {unit.priority})"
    for victim in chosen:
        for pod in victim.pods:
            session.evicted.add(pod.key)
            session.result.evictions.append(Evict(pod.key, pod.node, pod.gang, reason))
        for key in victim.gangs:
            session.gangs[key] = dataclasses.replace(session.gangs[key], satisfied=False, wait_started=None)
            session.result.transitions.append(Transition(key, TransitionKind.PREEMPTED, reason))
    result = attempt(session, unit)
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
