"""One victim, and what a running gang (or gang group) offers as victims.

Shared by the list built afresh (``victims.py``) and the list kept from cycle to cycle
(``kept_victims.py``): both find a gang's victims the same way, so both decide the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import Gang, Pod
from ..queue import gang_priority
from ..session import Session
from ..state import ClusterState


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


def from_specs(state: ClusterState, specs: list[tuple], positions: np.ndarray) -> list[Victim]:
    """Victims from their specs; ``positions``: the snapshot position of each spec's pods, spec
    after spec (their nodes and request rows are read in one go, each victim's a view). An
    elastic member's ``whole`` is its gang taken whole, when among ``specs``."""
    nodes, rows = state.pod_where[positions], state.pod_rows[positions]
    victims: list[Victim] = []
    wholes: dict[str, Victim] = {}
    start = 0
    for key, pods, gangs, priority, elastic_of, started, created in specs:
        end = start + len(pods)
        where, rows_of = nodes[start:end], rows[start:end]
        victim = Victim(key, priority, pods, gangs, where, rows_of, started, created, elastic_of)
        start = end
        for gang in gangs:
            wholes[gang] = victim
        victims.append(victim)
    for victim in victims:
        if victim.elastic_of is not None:
            victim.whole = wholes.get(victim.elastic_of.key)
    return victims


def priority_of(session: Session, members: tuple[str, ...]) -> int:
    """A gang group's priority: the highest of its gangs' (a gang's own, else its pods')."""
    return max(gang_priority(session.gangs[k], session.members.get(k, [])) for k in members)


def gang_victims(
    session: Session, key: str, members: tuple[str, ...], priority: int, running: dict[str, list[Pod]]
) -> list[tuple]:
    """The elastic members of each gang of a group, then the group's core taken whole, as specs
    (key, pods, gangs, priority, elastic_of, started, created)."""
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
