"""The gang rule: try a unit in a Trial and say whether it may bind, and if not, why.

Every action (allocate, backfill, preemption, deadlock breaking) asks the same question of a
unit on some state of the cluster: "if we placed it now, would every gang of its group reach
min_member and min_resources?". ``attempt`` answers it without committing anything; the caller
commits, keeps (NonStrict reservations) or discards the trial.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import diagnosis, explain, topology, topology_explain
from .decisions import Explanation, Reason
from .model import INACTIVE_PHASES, Gang, GangPhase, Pod
from .placement import fit_and_limit
from .queue import Unit
from .session import Session, Trial, shapes


@dataclass
class Attempt:
    trial: Trial
    satisfied: bool
    # Set when the unit cannot even be tried (a missing group member, too few pods, timed out):
    # such a unit never becomes the head of the queue and never preempts.
    precondition: Explanation | None = None
    # Per gang that fell short, why: an Explanation, or a ``Deferred`` one (short of room),
    # worked out only if somebody reads it (``explained``).
    shortfalls: dict[str, Explanation | Deferred] = field(default_factory=dict)
    placed: dict[str, int] = field(default_factory=dict)  # gang key -> members placed in this trial
    # The ``fit_bound.Bound`` whose count failed it, when counting did (``actions/counted.py``).
    bound: object | None = None

    @property
    def resource_blocked(self) -> bool:
        return not self.satisfied and self.precondition is None

    def explained(self) -> dict[str, Explanation]:
        """``shortfalls``, every one worked out."""
        for key, shortfall in self.shortfalls.items():
            if isinstance(shortfall, Deferred):
                self.shortfalls[key] = shortfall.explanation()
        return self.shortfalls  # type: ignore[return-value]


@dataclass(slots=True)
class Deferred:
    """A gang short of room, its explanation not yet worked out. Most units that fail behind
    the head of the queue are told they are behind it instead, and the per-node diagnosis of
    room (the dearest part of a failure) is then never read; ``available`` is the capacity the
    gang was tried on, kept so that the explanation is the same whenever it is worked out."""

    session: Session
    gang: Gang
    need: int
    waiting: list[Pod]
    available: np.ndarray
    counted: tuple[np.ndarray, int | None] | None = None  # ``fit_and_limit`` of its one shape

    def explanation(self) -> Explanation:
        return _resource_explanation(
            self.session, self.gang, self.need, self.waiting, self.available, self.counted
        )


def unit_gangs(session: Session, unit: Unit) -> list[Gang]:
    return [session.gangs[key] for key in unit.gangs]


def attempt(
    session: Session, unit: Unit, limit: np.ndarray | None = None, *, explain: bool = True
) -> Attempt:
    """Try ``unit``; ``explain=False`` (dry runs) skips building the explanation of a failure."""
    ledger = session.queues if session.admission else None
    trial = Trial(session.state, limit, ledger=ledger)
    if not unit.is_gang:
        pod = unit.pods[0]
        gang = session.gangs.get(pod.gang) if pod.gang is not None else None
        left, _miss = topology.place(session, trial, gang, [pod])
        return Attempt(trial, satisfied=not left)
    precondition_ = precondition(session, unit)
    if precondition_ is not None:
        return Attempt(trial, satisfied=False, precondition=precondition_)
    result = Attempt(trial, satisfied=True)
    for gang in unit_gangs(session, unit):
        if gang.settled:
            continue
        waiting = session.waiting(gang.key)
        before = len(trial.placed)  # what was available then is rebuilt only to explain a failure
        left, miss = topology.place(session, trial, gang, waiting)
        result.placed[gang.key] = len(waiting) - len(left)
        shortfall = _shortfall(session, gang, waiting, left, before, trial, with_reason=explain)
        if miss is not None and isinstance(shortfall, Deferred):
            shortfall = shortfall.explanation()
        if miss is not None and shortfall is not None and shortfall.reason == Reason.INSUFFICIENT_RESOURCES:
            shortfall = topology_explain.no_domain(gang, miss, shortfall)
        if shortfall is not None:
            result.shortfalls[gang.key] = shortfall
            result.satisfied = False
    return result


def fits(session: Session, unit: Unit) -> bool:
    """Would ``unit`` bind now? A dry run: the state is left as it was."""
    result = attempt(session, unit, explain=False)
    result.trial.discard()
    return result.satisfied


#: The shortfall of a dry run: it failed, and nobody will read why.
_UNEXPLAINED = Explanation("", Reason.INSUFFICIENT_RESOURCES, "")


def precondition(session: Session, unit: Unit) -> Explanation | None:
    first = unit.gangs[0]
    if unit.missing:
        return Explanation(
            first,
            Reason.WAITING_FOR_GROUP,
            f"waiting for gang group member {unit.missing[0]}",
            {"missing": list(unit.missing), "group": unit.key},
        )
    for gang in unit_gangs(session, unit):
        if gang.phase in INACTIVE_PHASES:
            reason = Reason.TIMED_OUT if gang.phase == GangPhase.TIMED_OUT else Reason.WAITING_FOR_GROUP
            return Explanation(
                first, reason, f"gang group member {gang.key} is {gang.phase.value}", {"member": gang.key}
            )
        if gang.settled:
            continue
        unknown = topology.unknown(session, gang)
        if unknown is not None:
            return topology_explain.unknown(gang, unknown)
        members = session.members.get(gang.key, ())
        present = len(members) if gang.counts_running else sum(1 for pod in members if pod.pending)
        if present >= gang.min_member:
            continue
        details = {"present": present, "min_member": gang.min_member}
        message = f"{gang.key} has {present} of its {gang.min_member} members; waiting for the rest"
        if not gang.counts_running:
            details["match_policy"] = gang.match_policy.value
            message = (
                f"{gang.key} has {present} waiting members; match-policy {gang.match_policy.value} "
                f"places {gang.min_member} together, not counting the running ones"
            )
        return Explanation(gang.key, Reason.WAITING_FOR_MEMBERS, message, details)
    return None


def _shortfall(
    session: Session,
    gang: Gang,
    waiting: list[Pod],
    left: list[Pod],
    before: int,
    trial: Trial,
    *,
    with_reason: bool,
) -> Explanation | Deferred | None:
    running = session.running(gang.key) if gang.counts_running else []
    held = session.held(gang.key)
    unplaced = {pod.key for pod in left}
    placed = [pod for pod in waiting if pod.key not in unplaced]
    count = len(running) + len(held) + len(placed)
    need = gang.min_member - len(running) - len(held)
    if count >= gang.min_member:
        if not gang.min_resources:
            return None
        total = np.zeros(len(session.state.resources), dtype=np.int64)
        for pod in (*running, *held, *placed):
            total += session.state.vector(pod)
        wanted = session.state.requests_vector(gang.min_resources)
        missing = {
            name: int(wanted[i] - total[i])
            for i, name in enumerate(session.state.resources)
            if wanted[i] > total[i]
        }
        if not missing:
            return None
        return Explanation(
            gang.key,
            Reason.MIN_RESOURCES,
            f"{gang.key} places {count} members but they request less than minResources: short by "
            + explain.resources_text(missing),
            {"short": missing},
        )
    if not with_reason:
        return _UNEXPLAINED
    return Deferred(session, gang, need, waiting, trial.available_before(before))


def _resource_explanation(
    session: Session,
    gang: Gang,
    need: int,
    waiting: list[Pod],
    available: np.ndarray,
    counted: tuple[np.ndarray, int | None] | None = None,
) -> Explanation:
    """'needs 8 x {cpu 4, nvidia.com/gpu 1}; 5 nodes can take one each; short by 3; ...' when
    resources hold the gang back; NoFeasibleNodes, with kube-scheduler's per-reason node counts
    ('0/16 nodes are available: 4 node(s) had untolerated taint ...'), when a filter keeps a
    shape of member off every node that could take it (``diagnosis.py``)."""
    parts = []
    nodes_fit = 0
    placeable = 0
    limiting = None
    groups = shapes(session, waiting)
    diagnosed = []
    for request, pods in groups:
        mask = session.filter.mask(pods[0])
        fit, column = counted if counted is not None else fit_and_limit(available, request, mask)
        found = diagnosis.shape(session, available, request, pods, fit)
        diagnosed.append(found)
        capped = np.minimum(fit, len(pods))
        nodes_fit += int(np.count_nonzero(capped))
        placeable += int(capped.sum())
        shown = need if len(groups) == 1 else len(pods)
        parts.append((shown, found["requests"]))
        if limiting is None and column is not None:
            limiting = session.state.resources[column]
    placeable = min(placeable, need)
    short = max(need - placeable, 1)
    details = {
        "needed": need,
        "placeable": placeable,
        "short_by": short,
        "nodes_that_fit": nodes_fit,
        "shapes": [{**found, "count": count} for found, (count, _) in zip(diagnosed, parts, strict=True)],
    }
    blocked = [i for i, found in enumerate(diagnosed) if diagnosis.blocked_by_filters(found)]
    if blocked:
        details["excluded_by"] = session.filter.excluded_by(groups[blocked[0]][1][0])
        return Explanation(
            gang.key,
            Reason.NO_FEASIBLE_NODES,
            explain.nodes_text(details["shapes"], blocked, needs=parts),
            details,
        )
    details["limiting_resource"] = limiting
    text = explain.insufficient_text(parts, nodes_fit, placeable, short, limiting)
    if any(diagnosis.filtered(found) for found in diagnosed):
        shown = [i for i, found in enumerate(diagnosed) if diagnosis.filtered(found)]
        text += "; " + explain.nodes_text(details["shapes"], shown)
    return Explanation(gang.key, Reason.INSUFFICIENT_RESOURCES, text, details)
