"""Keeping the database in step with a real cluster, one watch event at a time.

The scheduling loop decides from the database; on Kubernetes the database is a mirror the
watches (``watch.py``) keep. Each kind has a mirror with two entry points, the ones an informer
has: ``replace(objects)`` after a (re)list, which also forgets what the list no longer holds,
and ``apply(event_type, obj)`` for each watch event. Everything goes through the services the
simulated cluster uses (node_apply, manifests_apply, the lifecycle's restart policies), so a gang
behaves the same on both backends.

What "recreating a pod" means differs: the simulated cluster resets its Member row, while on
Kubernetes only the pod's controller can make a new pod. So when a restart policy resets a
member whose pod is finished in the cluster, the mirror deletes that pod object: its
controller (Job, MPIJob, StatefulSet) creates the replacement, which the watch brings in.
"""

from __future__ import annotations

import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

# Up two layers on purpose: the mirror is the Kubernetes door, as the API and manage.py apply
# are theirs: watched objects become writes through the declarations and the services. It
# stays in cluster/kube/ beside the watch and client it runs on.
from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.declarations.documents import Manifest
from scheduler_core.declarations.registry import manifest_load
from scheduler_core.models import Gang, Member, MemberPhase, Node
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES
from scheduler_core.services import delete, lifecycle, nodes
from scheduler_core.services.tenancy import Actor
from scheduler_core.specs.errors import DeclarationError
from scheduler_core.specs.yunikorn import is_placeholder

from . import convert, placeholder_pods

logger = logging.getLogger(__name__)

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
#: Who the history names when the cluster, not a person, removed something.
BY_CLUSTER = "Kubernetes"
#: The cluster itself, declaring what its users applied: it may change any gang, and history
#: names it as the one who did.
CLUSTER = Actor(BY_CLUSTER, changes_all=True, sees_all=True)

Refused = Callable[[Mapping[str, Any], str], None]  # (object, reason): tell the object's owner


def _quiet_refusal(obj: Mapping[str, Any], reason: str) -> None:
    return None


class NodeMirror:
    """v1 Nodes -> Node rows (allocatable, labels, taints, cordon, readiness)."""

    kind = "Node"

    def replace(self, objects: Iterable[Mapping[str, Any]]) -> None:
        seen = set()
        for obj in objects:
            seen.add(convert.metadata(obj).get("name"))
            self.apply(ADDED, obj)
        for name in Node.objects.exclude(name__in=seen).values_list("name", flat=True):
            self._forget(name)

    def apply(self, event_type: str, obj: Mapping[str, Any]) -> None:
        name = convert.metadata(obj).get("name") or ""
        if event_type == DELETED:
            self._forget(name)
            return
        fields = convert.node_fields(obj)
        ready = fields.pop("ready")
        try:
            with transaction.atomic():
                node, _ = nodes.node_apply(**fields)
                if node.ready != ready:
                    nodes.node_set_ready(name=name, ready=ready)
        except ValueError as error:
            logger.warning("node %s not mirrored: %s", name, error)

    def _forget(self, name: str) -> None:
        with contextlib.suppress(ValueError):  # already gone
            nodes.node_remove(name=name)


class PodMirror:
    """Pods -> Member rows (gangsched's own pods) and Node.external_usage (everyone else's).

    gangsched's pods are the ones whose ``spec.schedulerName`` is ours (its name or one of its
    aliases, ``GANGSCHED_SCHEDULER_ALIASES``: the name an operator writes into the pods it makes,
    where gangsched stands in for that scheduler); the first sight of one
    goes through ``manifests_apply`` like a submitted pod, so its labels and annotations put it
    in its gang. Placeholder pods (ours too) are never declared: a reservation's is counted as
    the reservation it stands for, a YuniKorn placeholder's as its member's row, which
    ``placeholder_pods.mirror`` keeps in step with it. Any other pod bound to a node and not
    finished uses that node's resources, which gangsched must leave alone.
    """

    kind = "Pod"

    def __init__(
        self,
        *,
        scheduler_name: str,
        aliases: Iterable[str] = (),
        refused: Refused = _quiet_refusal,
        backend=None,
    ) -> None:
        self.scheduler_names = frozenset({scheduler_name, *aliases})
        self.refused = refused
        self.backend = backend
        self._external: dict[tuple[str, str], tuple[str, dict[str, int]]] = {}

    # ------------------------------------------------------------ entry points

    def replace(self, objects: Iterable[Mapping[str, Any]]) -> None:
        objects = list(objects)
        seen = {
            convert.key_of(obj) for obj in objects if self._ours(obj) or self._task_group_placeholder(obj)
        }
        self._external.clear()
        for obj in objects:
            self._apply(ADDED, obj, usage=False)
        self._usage_write(set(Node.objects.values_list("name", flat=True)))
        gone = [
            key
            for key in Member.objects.filter(phase__in=ACTIVE_MEMBER_PHASES).values_list("namespace", "name")
            if key not in seen
        ]
        for namespace, name in gone:
            self._forget(namespace, name)

    def apply(self, event_type: str, obj: Mapping[str, Any]) -> None:
        self._apply(event_type, obj, usage=True)

    # ------------------------------------------------------------ dispatch

    def _ours(self, obj: Mapping[str, Any]) -> bool:
        spec = obj.get("spec") or {}
        return spec.get("schedulerName") in self.scheduler_names and not convert.is_placeholder(obj)

    def _task_group_placeholder(self, obj: Mapping[str, Any]) -> bool:
        spec = obj.get("spec") or {}
        return spec.get("schedulerName") in self.scheduler_names and convert.is_task_group_placeholder(obj)

    def _apply(self, event_type: str, obj: Mapping[str, Any], *, usage: bool) -> None:
        if convert.is_placeholder(obj):
            if self._task_group_placeholder(obj):  # its member's row is the truth (placeholder_pods)
                placeholder_pods.mirror(event_type, obj, self.backend)
            return
        if not self._ours(obj):
            touched = self._external_track(event_type, obj)
            if usage and touched:
                self._usage_write(touched)
            return
        namespace, name = convert.key_of(obj)
        try:
            if event_type == DELETED:
                self._forget(namespace, name, convert.metadata(obj).get("uid") or "")
            else:
                self._seen(obj)
        except DeclarationError as error:
            reason = f"{error.field}: {error.reason}" if error.field else error.reason
            logger.warning("pod %s/%s refused: %s", namespace, name, reason)
            self.refused(obj, reason)
        except ValueError as error:
            logger.warning("pod %s/%s refused: %s", namespace, name, error)
            self.refused(obj, str(error))

    # ------------------------------------------------------------ other schedulers' pods

    def _external_track(self, event_type: str, obj: Mapping[str, Any]) -> set[str]:
        key = convert.key_of(obj)
        before = self._external.pop(key, None)
        touched = {before[0]} if before else set()
        if event_type != DELETED and convert.holds_node(obj):
            try:
                requests = convert.pod_requests(obj)
            except ValueError as error:
                logger.warning("%s; its usage is not counted", error)
                return touched
            node = convert.pod_node(obj)
            self._external[key] = (node, requests)
            touched.add(node)
        return touched

    def _usage_write(self, node_names: set[str]) -> None:
        totals: dict[str, dict[str, int]] = defaultdict(dict)
        for node, requests in self._external.values():
            if node in node_names:
                total = totals[node]
                for resource, amount in requests.items():
                    total[resource] = total.get(resource, 0) + amount
        for node in Node.objects.filter(name__in=node_names).only("name", "external_usage"):
            usage = totals.get(node.name, {})
            if node.external_usage != usage:
                Node.objects.filter(pk=node.pk).update(external_usage=usage, updated=timezone.now())

    # ------------------------------------------------------------ gangsched's pods

    def _seen(self, obj: Mapping[str, Any]) -> None:
        namespace, name = convert.key_of(obj)
        uid = convert.metadata(obj).get("uid") or ""
        phase, node = convert.pod_phase(obj), convert.pod_node(obj)
        member = Member.objects.filter(namespace=namespace, name=name).first()
        if member is not None and member.uid and member.uid != uid:
            if member.phase in ACTIVE_MEMBER_PHASES and not member.node:
                member.uid = uid  # the replacement a restart policy's reset row waits for
                Member.objects.filter(pk=member.pk).update(uid=uid, terminating=False)
            else:
                member.delete()  # a new pod under an old name: the old row is history
                member = None
        if member is None:
            manifests_apply([convert.declared_pod(obj)], actor=CLUSTER)
            Member.objects.filter(namespace=namespace, name=name).update(uid=uid)
            member = Member.objects.get(namespace=namespace, name=name)
        elif not member.uid:
            Member.objects.filter(pk=member.pk).update(uid=uid)
        finished = phase in ("Succeeded", "Failed")
        if (
            member.phase in ACTIVE_MEMBER_PHASES
            and not member.node
            and node
            and (finished or convert.pod_deleting(obj))
        ):
            # A row reset by a restart policy while its old pod object still exists (finished or
            # terminating): not schedulable until that pod is gone; a finished one is deleted
            # so that its controller makes the replacement. (A live bound pod with an unbound
            # row is our own bind whose row is not written yet: _follow records the node.)
            Member.objects.filter(pk=member.pk).update(terminating=True)
            if finished and not convert.pod_deleting(obj):
                self._delete_stale(namespace, name)
            return
        self._follow(member, obj, phase, node)

    def _follow(self, member: Member, obj: Mapping[str, Any], phase: str, node: str) -> None:
        """Move the row to what the kubelet reports: bound, started, finished or failed."""
        if member.phase not in ACTIVE_MEMBER_PHASES:
            return
        now = timezone.now()
        updates: dict[str, Any] = {}
        labels = dict(convert.metadata(obj).get("labels") or {})
        if labels != member.labels:
            updates["labels"] = labels
        if node and member.node != node:
            updates.update(node=node, reserved_node=None)
        if convert.pod_deleting(obj) and not member.terminating:
            updates["terminating"] = True
        if phase == "Running" and member.phase == MemberPhase.PENDING and (node or member.node):
            updates.update(phase=MemberPhase.RUNNING, started_at=_time(convert.pod_started_at(obj)) or now)
        if updates:
            updates["updated"] = now
            Member.objects.filter(pk=member.pk).update(**updates)
        if phase == "Succeeded":
            with transaction.atomic():
                Member.objects.filter(pk=member.pk, phase__in=ACTIVE_MEMBER_PHASES).update(
                    phase=MemberPhase.SUCCEEDED, finished_at=now, updated=now
                )
                lifecycle.gangs_refresh(now=now, gang_ids=[member.gang_id] if member.gang_id else [])
        elif phase == "Failed":
            self._failed(member, convert.pod_failure(obj), now)
        elif updates.get("phase") == MemberPhase.RUNNING and member.gang_id:
            lifecycle.gangs_refresh(now=now, gang_ids=[member.gang_id])

    def _failed(self, member: Member, reason: str, now: datetime) -> None:
        with transaction.atomic():
            failed, reasons = lifecycle.members_fail(
                Member.objects.filter(pk=member.pk), reason=reason, now=now
            )
            handled = lifecycle.failures_handle(now=now, reasons=reasons) if failed else []
            lifecycle.gangs_refresh(now=now, gang_ids=handled)
        # A restart policy that reset this member: its finished pod must go (module docstring).
        if Member.objects.filter(pk=member.pk, phase=MemberPhase.PENDING, node__isnull=True).exists():
            self._delete_stale(member.namespace, member.name)

    def _delete_stale(self, namespace: str, name: str) -> None:
        if self.backend is not None:
            self.backend.delete_pod(namespace, name, "restarted by its gang's restart policy")

    def _forget(self, namespace: str, name: str, uid: str = "") -> None:
        """The pod is gone from the cluster: its row goes too, after its gang's policy ran."""
        member = Member.objects.filter(namespace=namespace, name=name).first()
        if member is None or (uid and member.uid and member.uid != uid):
            return  # never seen, or already replaced by a newer pod of that name
        if is_placeholder(member.annotations):
            placeholder_pods.lost(member)  # a YuniKorn placeholder: its pod is not in the list
            return
        if member.node and member.phase in ACTIVE_MEMBER_PHASES:
            delete.pod_delete(namespace=namespace, name=name, by=BY_CLUSTER)
        # Whatever is left is a row without a pod (pending, or reset by a restart policy).
        Member.objects.filter(namespace=namespace, name=name, node__isnull=True).exclude(
            phase=MemberPhase.RUNNING
        ).delete()
        if member.gang_id:
            lifecycle.gangs_refresh(gang_ids=[member.gang_id])


class DeclarationMirror:
    """Gang-declaring objects (PodGroup, and the other kinds when served) -> Gang rows."""

    def __init__(
        self,
        kind: str,
        *,
        api_version: str,
        refused: Refused = _quiet_refusal,
        prepare: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
    ) -> None:
        self.kind, self.api_version = kind, api_version
        self.refused = refused
        self.prepare = prepare or (lambda obj: obj)

    def replace(self, objects: Iterable[Mapping[str, Any]]) -> None:
        seen = set()
        for obj in objects:
            seen.update(self._gang_keys(obj))
            self.apply(ADDED, obj)
        # A KAI PodGroup's subgroup gangs keep the PodGroup under "podGroup" in their declaration.
        declared = Gang.objects.filter(
            Q(declaration__kind=self.kind, declaration__apiVersion=self.api_version)
            | Q(declaration__podGroup__kind=self.kind, declaration__podGroup__apiVersion=self.api_version),
            provisional=False,
        ).values_list("namespace", "name")
        for namespace, name in [key for key in declared if key not in seen]:
            self._forget(namespace, name)

    def apply(self, event_type: str, obj: Mapping[str, Any]) -> None:
        namespace, name = convert.key_of(obj)
        if event_type == DELETED:
            for gang_namespace, gang_name in self._gang_keys(obj):
                self._forget(gang_namespace, gang_name)
            return
        try:
            manifests_apply([convert.declared_object(self.prepare(obj))], actor=CLUSTER)
        except DeclarationError as error:
            reason = f"{error.field}: {error.reason}" if error.field else error.reason
            logger.warning("%s %s/%s refused: %s", self.kind, namespace, name, reason)
            self.refused(obj, reason)

    def _gang_keys(self, obj: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The gangs the object declares: one of its own name, or one per leaf subgroup of a KAI
        PodGroup. An object that cannot be read declared nothing but its name."""
        try:
            loaded = manifest_load(Manifest("", convert.declared_object(self.prepare(obj))))
        except DeclarationError:
            return [convert.key_of(obj)]
        return [(gang.namespace, gang.name) for gang in loaded.gangs] or [convert.key_of(obj)]

    def _forget(self, namespace: str, name: str) -> None:
        """The object was deleted. Its gang goes once no pod is left in it; pods still there
        keep it (their owner deletes them next, or an operator does)."""
        gang = Gang.objects.filter(namespace=namespace, name=name).first()
        if gang is None:
            return
        if gang.members.filter(phase__in=ACTIVE_MEMBER_PHASES).exists():
            logger.info("%s %s deleted; its gang stays while it has pods", self.kind, gang.key)
            return
        gang.delete()
        logger.info("%s %s deleted: gang removed", self.kind, gang.key)


def _time(value: str | None) -> datetime | None:
    return parse_datetime(value) if value else None
