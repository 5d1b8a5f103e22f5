"""Deleting pods, gangs, nodes and namespaces, with what the cluster would do about it.

``manage.py delete`` calls these; the API and the pages can too.

- ``pod_delete``: as in Kubernetes, what happens next depends on who owns the pod.
  A pod a workload owns (``Member.owner``: a Job, vcjob, GangJob, ... or a Pod's controller
  ownerReference) of an active gang is killed (it frees its node at once) and counts against
  its gang: the gang's restart policy runs, which replaces it (its controller recreates it:
  the Member row becomes a fresh pending pod), restarts the whole gang when it fell below
  minMember, or fails the gang (``Never``). A bare Pod (applied as ``kind: Pod``, no
  controller) is removed for good, as is any pod without a gang, finished, or of a finished
  gang: whoever created it applies the next one, under a new name, and it joins the gang
  (``match_policy`` says when it binds; total-number counts the pods that exist now).
- ``pods_remove``: pods removed for good, their owner being deleted too (``delete -f job.yaml``).
- ``gang_delete``: the gang and all its pods are removed (pods on nodes are deleted first).
- ``node_delete``: the node is removed; its pods fail and their gangs' rules reschedule them.
- ``namespace_delete``: every gang and pod of the namespace.

Each change wakes the scheduler once committed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from scheduler_core.cluster import ClusterError, get_backend
from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, GangEventKind, Member
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES

from . import lifecycle, nodes
from .history import event_record

logger = logging.getLogger(__name__)


class NotFound(ValueError):
    """What was to be deleted does not exist."""


def _wake() -> None:
    # Up a layer on purpose, as in submit.py: cycle_trigger sits beside the Celery task it queues.
    from scheduler_core.tasks import cycle_trigger

    transaction.on_commit(cycle_trigger)


def _kill(members: Iterable[Member], reason: str) -> None:
    """Delete pods on nodes through the backend (frees their node); a failed delete is logged."""
    backend = get_backend()
    for member in members:
        if member.node and member.phase in ACTIVE_MEMBER_PHASES:
            try:
                backend.delete_pod(member.namespace, member.name, reason)
            except ClusterError as error:
                logger.warning("deleting %s: %s", member.key, error)


@transaction.atomic
def pod_delete(*, namespace: str, name: str, by: str = "an operator") -> str:
    """Delete a pod; returns what became of it: ``replaced``, ``gang restarted``, ``gang
    failed`` (restart policies, for a pod its workload owns) or ``removed`` (a bare pod, or a
    pod no gang keeps). NotFound if there is no such pod."""
    member = Member.objects.select_for_update().filter(namespace=namespace, name=name).first()
    if member is None:
        raise NotFound(f'pod "{name}" not found in namespace {namespace}')
    reason = f"deleted by {by}"
    now = timezone.now()
    gang = member.gang
    _kill([member], reason)
    if (
        not member.owner
        or gang is None
        or gang.phase in lifecycle.DONE_PHASES
        or member.phase not in ACTIVE_MEMBER_PHASES
    ):
        member.delete()
        if gang is not None:
            _removed_record(gang, [member.name], by)
            lifecycle.gangs_refresh(now=now, gang_ids=[gang.id])
        outcome = "removed"
    else:
        others = Member.objects.filter(gang=gang, node__isnull=False, phase__in=ACTIVE_MEMBER_PHASES)
        had_others = others.exclude(pk=member.pk).exists()
        # A pending pod (or one the backend failed to delete) fails here, so it counts too.
        lifecycle.members_fail(Member.objects.filter(pk=member.pk), reason=reason, now=now)
        handled = lifecycle.failures_handle(now=now, reasons={gang.id: reason})
        lifecycle.gangs_refresh(now=now, gang_ids=handled)
        gang.refresh_from_db(fields=["phase"])
        if gang.phase == GangPhase.FAILED.value:
            outcome = "gang failed"
        elif had_others and not others.exists():
            outcome = "gang restarted"
        else:
            outcome = "replaced"
    logger.info("pod %s/%s %s: %s", namespace, name, reason, outcome)
    _wake()
    return outcome


def _removed_record(gang: Gang, names: list[str], by: str) -> None:
    """Removing pods of a gang changes it: its history says which and who."""
    event_record(
        gang=gang,
        kind=GangEventKind.CONFIGURED,
        reason=f"pods deleted {', '.join(names)} (by {by})",
        details={"by": by, "podsDeleted": names},
    )


@transaction.atomic
def pods_remove(keys: Iterable[tuple[str, str]], *, by: str = "an operator") -> list[Member]:
    """Remove pods for good (their owner is deleted too); the ones that existed."""
    found = []
    for namespace, name in keys:
        member = Member.objects.select_for_update().filter(namespace=namespace, name=name).first()
        if member is not None:
            found.append(member)
    _kill(found, f"deleted by {by}")
    gang_ids = {m.gang_id for m in found if m.gang_id}
    for gang in Gang.objects.filter(pk__in=gang_ids):
        _removed_record(gang, sorted(m.name for m in found if m.gang_id == gang.pk), by)
    Member.objects.filter(pk__in=[m.pk for m in found]).delete()
    if gang_ids:
        lifecycle.gangs_refresh(gang_ids=gang_ids)
    if found:
        _wake()
    return found


@transaction.atomic
def gang_delete(*, namespace: str, name: str, by: str = "an operator") -> list[str]:
    """Delete a gang and its pods; the names of the pods deleted. NotFound if no such gang."""
    gang = Gang.objects.select_for_update().filter(namespace=namespace, name=name).first()
    if gang is None:
        raise NotFound(f'gang "{name}" not found in namespace {namespace}')
    members = list(gang.members.select_for_update().order_by("name"))
    _kill(members, f"gang {gang.key} deleted by {by}")
    gang.delete()  # its members and history go with it
    logger.info("gang %s deleted by %s (%d pods)", gang.key, by, len(members), extra={"gang": gang.key})
    _wake()
    return [m.name for m in members]


@transaction.atomic
def node_delete(*, name: str) -> int:
    """Remove a node; how many of its pods failed (their gangs' restart policies ran)."""
    try:
        failed = nodes.node_remove(name=name)
    except ValueError:
        raise NotFound(f'node "{name}" not found') from None
    _wake()
    return failed


@transaction.atomic
def namespace_delete(*, namespace: str, by: str = "an operator") -> int:
    """Delete every gang and pod of a namespace; how many pods."""
    count = 0
    for gang in Gang.objects.filter(namespace=namespace).order_by("name"):
        count += len(gang_delete(namespace=namespace, name=gang.name, by=by))
    rest = Member.objects.filter(namespace=namespace).values_list("namespace", "name")
    return count + len(pods_remove(list(rest), by=by))
