"""Allocate: place the queue, unit by unit, all-or-nothing.

1. Walk the units in queue order (priority, rank: least work first with bounded overtaking,
   creation, key).
2. Try each in a trial on the free capacity (behind a blocked head: only what backfilling
   allows). If every gang of the unit reaches min_member and min_resources, bind it whole.
3. Otherwise nothing of it binds: Strict gangs roll back; NonStrict gangs keep what they placed
   as reservations, but only at the head of the queue (a unit behind the head must not hold
   capacity the head may need). The timeout clock of a gang starts at its first placed member.
4. The first unit blocked by resources alone may preempt lower-priority work (of its own
   queue, when there are queues), then reclaim from queues over their fair share; if it
   cannot, it becomes the head, and the units behind it backfill (RESERVE), wait (BLOCK) or
   take whatever fits (NONE), as the configuration says.

With queues the units come in ``queue_order`` and each trial places only what its
queue's headroom admits (``ledger.py``). A unit held back by its queue (unknown or closed queue,
a max, borrowing) is explained and skipped: it never becomes the head, never reserves, and so
never blocks the units of other queues; held back by borrowing, it may still reclaim.

With a carry, a unit that failed behind the head in an earlier cycle, behind the same head now,
with no event since that could let it place, is parked: not tried (``requeue.py``, ``park.py``).
Behind the head, a failure may be settled without a trial: by counting on a small cluster
(``counted.py``), or by a unit that failed before it (``proven_failures.py``).
"""

from __future__ import annotations

import dataclasses

from .. import queue_explain, queue_order
from ..config import HeadOfLine, permit_quorum
from ..decisions import Bind, Explanation, Reason, Reserve, Transition, TransitionKind
from ..gang import Attempt, attempt
from ..model import GangMode
from ..queue import Unit
from ..session import Session
from .backfill import Head, fits_on_empty, plan_head
from .counted import counted_failure
from .fit_bound import fits_counted
from .park import Parking
from .preempt import preempt
from .proven_failures import ProvenFailures
from .reclaim import reclaim, within_max


def allocate(session: Session) -> None:
    config = session.config
    head: Head | None = None
    ledger = session.queues
    parking = Parking.open(session)
    proven = ProvenFailures()
    units = session.units if ledger is None else queue_order.ordered(ledger, session.units)
    for unit in units:
        if unit.key in session.done or _requeued(session, unit):
            continue
        if ledger is not None and (unit.key in ledger.gated or len(unit.gangs) > 1) and _gated(session, unit):
            continue
        if _nominated_alone(session, unit):
            continue
        if head is not None and config.head_of_line == HeadOfLine.BLOCK:
            _explain_behind(session, unit, head)
            continue
        limit = head.limit_for(session, unit) if head is not None else None
        if parking is not None and parking.parks(unit, head, limit):
            continue
        result = None
        if head is not None:
            result = counted_failure(session, unit, limit) or proven.settled(session, unit, limit)
        tried = result is None
        if tried:
            result = attempt(session, unit, limit)
        if result.satisfied:
            _bind(session, unit, result)
            continue
        behind = head
        head = _failed(session, unit, result, head, limit)
        if behind is not None and tried:
            proven.failed(session, unit, limit, result)
        if parking is not None and unit.key not in session.done:
            parking.failed(unit, result, behind, limit)
    if parking is not None:
        parking.close()


def _failed(session: Session, unit: Unit, result: Attempt, head: Head | None, limit) -> Head | None:
    """Say why ``unit`` did not bind. Behind a head that is all; the first unit blocked by
    resources alone may preempt or reclaim, and otherwise becomes the head. Returns the head."""
    config = session.config
    _start_clocks(session, unit, result)
    cut = result.trial.cut
    result.trial.discard()
    if cut is not None and _held_by_queue(session, unit, cut, head is None):
        return head
    if head is not None:
        if config.explain:
            _explain_failed_behind(session, unit, result, head, limit)
        return head
    if config.explain:
        _explain(session, unit, result)
    if not result.resource_blocked:
        return None
    if config.head_of_line == HeadOfLine.NONE:
        _keep_reservations(session, unit)
        return None
    if not fits_on_empty(session, unit):
        _explain_never(session, unit)
        return None
    if config.preemption and preempt(session, unit):
        return None
    if config.preemption and session.queues is not None and reclaim(session, unit):
        return None
    _explain_deferred(session, unit)
    _keep_reservations(session, unit)
    return plan_head(session, unit)


def _explain_failed_behind(session: Session, unit: Unit, result: Attempt, head: Head, limit) -> None:
    """Does it fit on the nodes, the head's reservation aside? Then it is only behind the head."""
    if limit is not None and result.precondition is None and fits_counted(session, unit, result.bound):
        _explain_behind(session, unit, head)
    else:
        _explain(session, unit, result)


def _nominated_alone(session: Session, unit: Unit) -> bool:
    """A lone pod that holds a reservation (its nomination after preemption or reclaim, kept by
    ``reservations.validate`` only once the room is free) binds there. A gang's held members
    bind with the gang (``_bind``); a lone pod's trial would place it only on free room, which
    its own reservation already counts as used, so it would wait forever."""
    if unit.is_gang:
        return False
    pod = unit.pods[0]
    node = session.reserved_node(pod)
    if node is None:
        return False
    session.bound_at[pod.key] = session.state.node_index[node]
    session.result.binds.append(Bind(pod.key, node, pod.gang))
    session.result.explanations.pop(pod.key, None)
    session.done.add(unit.key)
    return True


def _requeued(session: Session, unit: Unit) -> bool:
    """A lone member of a gang preempted earlier in this cycle: it waits for its whole gang."""
    if unit.is_gang or not session.config.gangs:
        return False
    gang = session.gangs.get(unit.pods[0].gang) if unit.pods[0].gang is not None else None
    return gang is not None and not gang.settled


def _gated(session: Session, unit: Unit) -> bool:
    """A unit whose queue is unknown, not a leaf or closed: explained, never placed."""
    why = queue_explain.gate(session.queues, session, unit)
    if why is None:
        return False
    for key in unit.gangs:
        session.result.explanations[key] = _as(why, key)
    return True


def _held_by_queue(session: Session, unit: Unit, cut, first: bool) -> bool:
    """A unit its queue's headroom held back: say why. The first blocked unit may reclaim when
    held back by borrowing, or preempt lower-priority work of its own queue when at a max. It
    never becomes the head and keeps no reservation."""
    why = queue_explain.blocked(session.queues, *cut)
    if why is None:
        return False
    for key in unit.gangs:
        if not session.gangs[key].settled:
            session.result.explanations[key] = queue_explain.on_nodes(session, _as(why, key))
    if first and session.config.preemption:
        if why.reason == Reason.QUEUE_BORROW:
            reclaim(session, unit)
        elif why.reason == Reason.QUEUE_MAX:
            within_max(session, unit)
        _explain_deferred(session, unit)
    return True


def _explain_deferred(session: Session, unit: Unit) -> None:
    """A unit that would have searched for victims past ``EngineConfig.preempt_depth`` says so:
    it is not told that no victim would do."""
    if unit.key not in session.deferred:
        return
    note = (
        f"; it may preempt in a later cycle ({len(session.searched)} units searched for victims "
        "in this one, the most a cycle does)"
    )
    for key in unit.gangs or (unit.key,):
        explanation = session.result.explanations.get(key)
        if explanation is not None:
            session.result.explanations[key] = dataclasses.replace(
                explanation,
                message=explanation.message + note,
                details={**explanation.details, "preemption_deferred": True},
            )


def _bind(session: Session, unit: Unit, result: Attempt) -> None:
    state = session.state
    for key in unit.gangs:
        gang = session.gangs[key]
        if gang.settled:
            continue
        for pod in session.held(key):
            node = session.reserved_node(pod)
            session.bound_at[pod.key] = state.node_index[node]
            session.result.binds.append(Bind(pod.key, node, key))
        placed = len(session.running(key))
        session.gangs[key] = dataclasses.replace(gang, satisfied=True)
        session.result.transitions.append(
            Transition(
                key, TransitionKind.SATISFIED, f"{placed + result.placed.get(key, 0)} members bound together"
            )
        )
        session.result.explanations.pop(key, None)
    for pod, node in result.trial.assignments():
        session.bound_at[pod.key] = state.node_index[node]
        session.result.binds.append(Bind(pod.key, node, pod.gang))
    if session.queues is not None:
        session.queues.charge_trial(result.trial)
    session.done.add(unit.key)


def _start_clocks(session: Session, unit: Unit, result: Attempt) -> None:
    for key, placed in result.placed.items():
        gang = session.gangs[key]
        if placed and gang.wait_started is None:
            session.gangs[key] = dataclasses.replace(gang, wait_started=session.now)
            session.result.transitions.append(
                Transition(key, TransitionKind.WAIT_STARTED, f"{placed} members could be placed")
            )


def _keep_reservations(session: Session, unit: Unit) -> None:
    """Redo the (deterministic) attempt and keep what NonStrict gangs placed as reservations.

    With ``permit_hold`` (the coscheduling model) a Strict gang close enough to its quorum keeps
    what it placed too. Not when holding them would leave the gang unable to complete even on
    an empty cluster (members reserved where the rest of the gang can no longer join them): a
    hold that can never pay off only wastes capacity.
    """
    if not unit.is_gang:
        return
    result = attempt(session, unit, explain=False)
    holding = {key for key in unit.gangs if _keeps(session, key, result.placed.get(key, 0))}
    for key in unit.gangs:
        if key not in holding:
            result.trial.discard_gang(key)
    kept = result.trial.assignments()
    if not kept:
        return
    for pod, node in kept:
        session.reserve(pod, node)
    if not fits_on_empty(session, unit):
        for pod, _node in kept:
            session.reserved.pop(pod.key, None)
        result.trial.discard()
        return
    if session.queues is not None:
        session.queues.charge_trial(result.trial)
    for pod, node in kept:
        gang = session.gangs[pod.gang]
        why = "NonStrict: accumulating members"
        if session.mode(gang) != GangMode.NON_STRICT:
            why = "waiting at Permit: within the reject threshold of min_member"
        session.result.reservations.append(Reserve(pod.key, node, pod.gang, why))


def _keeps(session: Session, key: str, placed: int) -> bool:
    """Does this gang keep what a failed attempt placed? NonStrict always; Strict under permit_hold."""
    gang = session.gangs[key]
    if session.mode(gang) == GangMode.NON_STRICT:
        return True
    hold = session.config.permit_hold
    if hold <= 0 or gang.settled:
        return False
    count = len(session.running(key)) + len(session.held(key)) + placed
    return count >= permit_quorum(gang.min_member, hold)


def _explain(session: Session, unit: Unit, result: Attempt) -> None:
    if not unit.is_gang:
        return
    if result.precondition is not None:
        for key in unit.gangs:
            session.result.explanations.setdefault(key, _as(result.precondition, key))
        return
    shortfalls = result.explained()
    blocker = next(iter(shortfalls.values()), None)
    for key in unit.gangs:
        own = shortfalls.get(key)
        if own is not None:
            session.result.explanations[key] = own
        elif blocker is not None and not session.gangs[key].settled:
            session.result.explanations[key] = Explanation(
                key,
                Reason.WAITING_FOR_GROUP,
                f"waiting for gang group member {blocker.gang}: {blocker.message}",
                {"member": blocker.gang, "member_reason": blocker.reason.value},
            )


def _explain_behind(session: Session, unit: Unit, head: Head) -> None:
    message = f"blocked behind {head.unit.key}, which is first in the queue and has capacity reserved"
    details: dict = {"head": head.unit.key}
    later = head.unit.created - unit.created
    if head.unit.priority == unit.priority and later > 0:
        # Least work first (queue.py): say why a newer gang is ahead, or it reads like a bug.
        message += f" (ahead as less work, though created {later:.0f} s later)"
        details["head_created_later_s"] = round(later, 3)
    for key in unit.gangs:
        session.result.explanations[key] = Explanation(key, Reason.BLOCKED_BEHIND, message, dict(details))


def _explain_never(session: Session, unit: Unit) -> None:
    for key in unit.gangs:
        explanation = session.result.explanations.get(key)
        if explanation is not None:
            session.result.explanations[key] = dataclasses.replace(
                explanation,
                message=explanation.message + "; it cannot fit even on an empty cluster",
                details={**explanation.details, "fits_on_empty_cluster": False},
            )


def _as(explanation: Explanation, key: str) -> Explanation:
    return explanation if explanation.gang == key else dataclasses.replace(explanation, gang=key)
