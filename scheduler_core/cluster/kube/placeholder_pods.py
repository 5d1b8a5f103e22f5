"""The pods of YuniKorn placeholder members on a real cluster: created bound, mirrored apart.

The first pod carrying an application's task groups declares a placeholder member
``tg-<app>-<group>-<i>`` for each member a task group still lacks
(``declarations/yunikorn_apps.py``). Such a row has no pod: when the engine places it, the
backend creates its pod on the chosen node instead of binding one (``bodies``, shaped by
``convert.placeholder_manifest`` as YuniKorn's k8shim shapes its placeholders), so
the application's capacity is held in the cluster at once, where kube-scheduler and the
kubelet see it. Whatever removes a placeholder member deletes its pod by its name (the member's
name): a real pod taking its place, the timeout, the originator's deletion
(``services/placeholders.py``), a preempted or deleted gang.

The watch brings these pods back; they are not user pods, so the mirror hands them here
(``mirror``) instead of declaring them: a pod whose member is gone (its deletion failed or
raced) is an orphan and is deleted, as k8shim's placeholder manager retries its orphans; a
placeholder that runs makes its member Running; one that fails or is deleted by someone else
no longer holds its place, so its member is released (``lost``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from scheduler_core.cluster.base import BindRequest
from scheduler_core.models import Member, MemberPhase
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES

# Up a layer on purpose: placeholder pods are created and removed as the services decide,
# and a placeholder pod that ends refreshes its gang through them (services/lifecycle.py).
from scheduler_core.services import lifecycle
from scheduler_core.specs.yunikorn import PLACEHOLDER, is_placeholder

from . import convert

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- the backend's side


def bodies(requests: Sequence[BindRequest], backend) -> dict[tuple[str, str], dict[str, Any]]:
    """The pods to create, by key, for the requests that place YuniKorn placeholder members.

    Only members without a pod yet (no uid): one whose pod was created by an earlier attempt
    is bound as any pod is, which answers "already on this node" for a retry.
    """
    members = Member.objects.filter(
        namespace__in={r.namespace for r in requests},
        name__in={r.name for r in requests},
        annotations__contains={PLACEHOLDER: "true"},
        uid="",
    ).select_related("gang")
    by_key = {(m.namespace, m.name): m for m in members}
    owners: dict[tuple[str, str], dict[str, Any] | None] = {}
    out = {}
    for request in requests:
        member = by_key.get((request.namespace, request.name))
        if member is None or member.gang is None:
            continue
        app = (member.namespace, member.gang.application)
        if app not in owners:
            owners[app] = _originator(*app)
        task_group = member.gang.declaration.get("taskGroup") or {}
        out[(member.namespace, member.name)] = backend.placeholder_body(
            member,
            request.node,
            owner=owners[app],
            task_group=convert.TaskGroupPod(task_group, member.labels, member.annotations),
        )
    return out


def _originator(namespace: str, app: str) -> dict[str, Any] | None:
    """An ownerReference to the application's originator pod (its pods outside task groups), as
    k8shim gives its placeholders: deleting the originator lets Kubernetes' garbage collector
    remove them too."""
    if not app:
        return None
    pod = (
        Member.objects.filter(namespace=namespace, gang__namespace=namespace, gang__name=app)
        .exclude(uid="")
        .order_by("created", "name")
        .values("name", "uid")
        .first()
    )
    if pod is None:
        return None
    return {"apiVersion": "v1", "kind": "Pod", **pod, "controller": False, "blockOwnerDeletion": True}


def rows_uid(created: Mapping[tuple[str, str], str]) -> None:
    """The placeholder members now have a pod: its uid tells its watch events from another's."""
    for (namespace, name), uid in created.items():
        Member.objects.filter(namespace=namespace, name=name, uid="").update(uid=uid)


# ---------------------------------------------------------------- the mirror's side


def mirror(event_type: str, pod: Mapping[str, Any], backend) -> None:
    """A watch event of a placeholder pod gangsched created (``convert.is_task_group_placeholder``)."""
    namespace, name = convert.key_of(pod)
    uid = convert.metadata(pod).get("uid") or ""
    member = Member.objects.filter(namespace=namespace, name=name).first()
    own = (
        member is not None
        and is_placeholder(member.annotations)
        and member.phase in ACTIVE_MEMBER_PHASES
        and (not member.uid or member.uid == uid)
    )
    if event_type == "DELETED":
        if own:
            lost(member)
        return
    if not own:
        if backend is not None and not convert.pod_deleting(pod):
            logger.info("placeholder pod %s/%s has no placeholder member left: deleted", namespace, name)
            backend.placeholder_pod_delete(namespace, name, uid)
        return
    phase = convert.pod_phase(pod)
    if phase in ("Failed", "Succeeded"):
        logger.warning(
            "placeholder pod %s/%s ended (%s): its member waits to be placed again", namespace, name, phase
        )
        lost(member)
        if backend is not None:
            backend.placeholder_pod_delete(namespace, name, uid)
    elif phase == "Running" and member.phase == MemberPhase.PENDING and member.node:
        now = timezone.now()
        Member.objects.filter(pk=member.pk, phase=MemberPhase.PENDING).update(
            phase=MemberPhase.RUNNING, started_at=now, updated=now
        )
        if member.gang_id:
            lifecycle.gangs_refresh(now=now, gang_ids=[member.gang_id])


def lost(member: Member) -> None:
    """The member's pod is gone, or ended, or missing from a list of the cluster.

    A placed placeholder is released (its row goes), as YuniKorn removes the allocation of a
    placeholder pod someone deleted and makes no other in its place. One that is not placed
    (a restart policy reset it after its pod was deleted) only forgets that pod, so that a new
    one is created when it is placed again (``bodies``).
    """
    if member.phase not in ACTIVE_MEMBER_PHASES:
        return
    if member.node:
        with transaction.atomic():
            # Locked first: a cycle releasing this placeholder (its row, then its bind journal
            # rows) finishes before this looks again, and finds nothing left to release.
            row = Member.objects.select_for_update().filter(pk=member.pk, node=member.node).first()
            if row is None or row.phase not in ACTIVE_MEMBER_PHASES:
                return
            logger.info("placeholder %s lost its pod on %s: released", member.key, member.node)
            row.delete()
            if member.gang_id:
                lifecycle.gangs_refresh(gang_ids=[member.gang_id])
    elif member.uid:
        Member.objects.filter(pk=member.pk).update(uid="", updated=timezone.now())
