"""YuniKorn placeholders between cycles: real members take their places; the timeout frees them.

The first pod carrying an application's task groups reserves their capacity with placeholder
members (``declarations/yunikorn_apps.py``); the engine places them as any gang group, all or
nothing. Before each cycle, ``placeholders_reconcile`` does what YuniKorn does with them:

1. a real member of a task group takes a placeholder's place: while the task group waits, the
   waiting placeholders beyond what min_member still lacks are dropped (never counted twice);
   once the task group is satisfied, the real member is bound to the node a bound placeholder
   held, and that placeholder is removed (YuniKorn's replacement), provided the placeholder's
   requests cover the real member's and the node passes its filters; otherwise the real member
   is scheduled as an ordinary pod of a satisfied gang;
2. ``placeholderTimeoutInSeconds`` after the application is first seen here (YuniKorn's shim
   starts the timer when it creates the placeholders), an application whose task groups are
   not all satisfied gives its placeholders back: Soft, its gangs fall back and its pods are
   scheduled one by one; Hard, its gangs fail. A satisfied application's placeholders that
   real members have not replaced by then are released too, and it keeps running. The timer is
   the gangs' ``wait_started``, started here for the whole application at once (the engine
   starts a gang's only when a member can be placed, which a task group whose node selector
   matches no node never reaches); retrying a gang resets it;
3. an application whose pods outside task groups (its originator) are gone, their gang deleted
   or left without a pod, releases its placeholders, as YuniKorn cleans them up when the
   originator pod is deleted.

Every placeholder dropped here that was placed is deleted through the backend as well: on
Kubernetes it is a pod that holds its node (``cluster/kube/placeholder_pods.py``), deleted before
a real member is bound in its place. Only gangs read from YuniKorn annotations have
placeholders; with none, this is one query.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from scheduler_core.cluster import ClusterError
from scheduler_core.cluster.base import BindOutcome, BindRequest, ClusterBackend
from scheduler_core.engine.decisions import Reason
from scheduler_core.engine.filters import NodeFilter
from scheduler_core.engine.model import GangPhase, TimeoutStyle
from scheduler_core.models import Gang, GangEventKind, Member, Node
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES
from scheduler_core.services.history import events_record_many
from scheduler_core.snapshot.build import DONE_PHASES, member_to_engine, node_to_engine
from scheduler_core.specs.yunikorn import PLACEHOLDER, SOURCE, is_placeholder

logger = logging.getLogger(__name__)


def placeholders_reconcile(*, backend: ClusterBackend, now=None) -> None:
    """Run inside the cycle's fenced transaction, before the snapshot is read."""
    now = now or timezone.now()
    gangs = list(
        Gang.objects.filter(source_format=SOURCE, provisional=False)
        .select_related("group")
        .exclude(application="")
        .exclude(phase__in=DONE_PHASES)
    )
    if not gangs:
        return
    members: dict[int, list[Member]] = defaultdict(list)
    # Only what a replacement or a release can touch: placeholders, and members still waiting.
    rows = Member.objects.filter(gang__in=gangs, phase__in=ACTIVE_MEMBER_PHASES).filter(
        Q(annotations__contains={PLACEHOLDER: "true"}) | Q(node__isnull=True)
    )
    for member in rows.order_by("name"):
        members[member.gang_id].append(member)
    apps: dict[tuple[str, str], list[Gang]] = defaultdict(list)
    for gang in gangs:
        apps[gang.namespace, gang.application].append(gang)
    events: list[dict] = []
    for app_gangs in apps.values():
        _clock_start(app_gangs, now)
        if _timed_out(app_gangs, now):
            _time_out(app_gangs, members, events, backend)
            continue
        if _originator_gone(app_gangs, members):
            _release_all(
                app_gangs, members, events, backend, "the application's pods outside its task groups are gone"
            )
            continue
        for gang in app_gangs:
            _swap(gang, members[gang.pk], backend, events)
    events_record_many(events)


def _clock_start(app_gangs: list[Gang], now) -> None:
    idle = [g for g in app_gangs if g.wait_started is None and g.phase == GangPhase.PENDING.value]
    if idle:
        Gang.objects.filter(pk__in=[g.pk for g in idle]).update(wait_started=now)
        for gang in idle:
            gang.wait_started = now


def _timed_out(app_gangs: list[Gang], now) -> bool:
    wait = app_gangs[0].wait_seconds
    started = [g.wait_started for g in app_gangs if g.wait_started is not None]
    if wait is None or not started:
        return False
    return now >= min(started) + timedelta(seconds=wait)


def _originator_gone(app_gangs: list[Gang], members: dict[int, list[Member]]) -> bool:
    """Was the application declared by a pod outside its task groups, which is gone now?"""
    if not any(is_placeholder(m.annotations) for gang in app_gangs for m in members[gang.pk]):
        return False
    namespace, app = app_gangs[0].namespace, app_gangs[0].application
    group = next((gang.group for gang in app_gangs if gang.group is not None), None)
    if group is None or f"{namespace}/{app}" not in group.members:
        return False  # declared by a task group's member: no originator to lose
    return not Member.objects.filter(gang__namespace=namespace, gang__name=app).exists()


def _release_all(
    app_gangs: list[Gang],
    members: dict[int, list[Member]],
    events: list[dict],
    backend: ClusterBackend,
    why: str,
) -> None:
    for gang in app_gangs:
        held = [m for m in members[gang.pk] if is_placeholder(m.annotations)]
        if held:
            _drop(held, backend, why)
            events.append(_event(gang, GangEventKind.RELEASED, f"{len(held)} placeholders: {why}"))


def _time_out(
    app_gangs: list[Gang], members: dict[int, list[Member]], events: list[dict], backend: ClusterBackend
) -> None:
    """Release every placeholder; an application still reserving falls back (Soft) or fails (Hard)."""
    held = {gang.pk: [m for m in members[gang.pk] if is_placeholder(m.annotations)] for gang in app_gangs}
    _drop([m for ms in held.values() for m in ms], backend, "the placeholder timeout")
    task_groups = [gang for gang in app_gangs if "taskGroup" in gang.declaration]
    reserving = not all(gang.satisfied for gang in task_groups)
    app = app_gangs[0].application
    wait = f"{app_gangs[0].wait_seconds:g}s"
    for gang in app_gangs:
        count = len(held[gang.pk])
        if not reserving:
            if count:
                events.append(
                    _event(gang, GangEventKind.RELEASED, f"{count} placeholders not replaced within {wait}")
                )
            continue
        reason = f"application {app}: its task groups were not all reserved within {wait}"
        if count:
            reason += f"; {count} placeholders released"
        if gang.style == TimeoutStyle.HARD.value:
            if gang.phase == GangPhase.FAILED.value:
                continue
            Gang.objects.filter(pk=gang.pk).update(
                phase=GangPhase.FAILED.value,
                reason=Reason.TIMED_OUT.value,
                message=f"{reason} (gangSchedulingStyle=Hard: the application failed)",
                details={"application": app, "placeholders_released": count},
            )
            events.append(_event(gang, GangEventKind.FAILED, f"{reason}; Hard: the application failed"))
        elif not (gang.satisfied or gang.fallen_back):
            Gang.objects.filter(pk=gang.pk).update(fallen_back=True)
            events.append(
                _event(gang, GangEventKind.FELL_BACK, f"{reason}; Soft: its pods are scheduled one by one")
            )
        elif count:
            events.append(_event(gang, GangEventKind.RELEASED, reason))


def _swap(gang: Gang, gang_members: list[Member], backend: ClusterBackend, events: list[dict]) -> None:
    placeholders = [m for m in gang_members if is_placeholder(m.annotations)]
    if not placeholders:
        return
    real = [m for m in gang_members if not is_placeholder(m.annotations)]
    waiting = [m for m in placeholders if _waiting(m)]
    if not (gang.satisfied or gang.fallen_back):
        # Placeholders stand for the members min_member still lacks; the rest make room.
        excess = len(placeholders) + len(real) - gang.min_member
        dropped = waiting[len(waiting) - max(0, min(len(waiting), excess)) :]
        if dropped:
            _drop(dropped, backend, "real members came")
            events.append(
                _event(gang, GangEventKind.RELEASED, f"{len(dropped)} placeholders: real members came")
            )
        return
    if waiting:  # a settled gang's placeholder that never bound has nothing left to hold
        _drop(waiting, backend, "its task group is settled")
    bound = [m for m in placeholders if m.node]
    replaced = 0
    for member in filter(_waiting, real):
        placeholder = next((p for p in bound if _replaceable(p, member)), None)
        if placeholder is None:
            continue
        bound.remove(placeholder)
        _drop([placeholder], backend, f"replaced by {member.key}")  # its node's room, for the member
        result = backend.bind([BindRequest(member.namespace, member.name, placeholder.node)])[0]
        if result.outcome == BindOutcome.BOUND:
            replaced += 1
        else:  # the engine schedules it as an ordinary pod of its satisfied gang
            logger.warning(
                "%s did not take its placeholder's node %s: %s", member.key, placeholder.node, result
            )
    if replaced:
        events.append(
            _event(gang, GangEventKind.BOUND, f"{replaced} members bound where their placeholders were")
        )


def _drop(placeholders: list[Member], backend: ClusterBackend, why: str) -> None:
    """Remove placeholder members, and the pods of those placed: on Kubernetes each is a pod that
    holds its node (``cluster/kube/placeholder_pods.py``); a delete that fails leaves an orphan,
    which the watch deletes when it sees it again."""
    for member in placeholders:
        if member.node:
            try:
                backend.delete_pod(member.namespace, member.name, f"placeholder released: {why}")
            except ClusterError as error:
                logger.warning("placeholder %s: %s", member.key, error)
    Member.objects.filter(pk__in=[m.pk for m in placeholders]).delete()


def _waiting(member: Member) -> bool:
    return member.node is None and member.reserved_node is None and not member.terminating


def _replaceable(placeholder: Member, member: Member) -> bool:
    """YuniKorn replaces a placeholder only with a real pod that fits in what it holds."""
    if any(amount > placeholder.requests.get(name, 0) for name, amount in member.requests.items()):
        return False
    node = Node.objects.filter(name=placeholder.node).first()
    if node is None or not node.ready:
        return False
    return bool(NodeFilter([node_to_engine(node)]).mask(member_to_engine(member, None))[0])


def _event(gang: Gang, kind: str, reason: str) -> dict:
    return {"gang": gang, "kind": kind, "reason": reason}
