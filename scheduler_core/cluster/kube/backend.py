"""The Kubernetes backend: what the scheduling loop asks of a real cluster, through its API.

The loop decides from the database, which the watcher (``manage.py kube_watch``: watches,
leader election, status write-back) keeps in step with the cluster; this class only acts:
binds through the pods/binding subresource, deletes and annotates pods, holds reserved
capacity with placeholder pods, and creates the pods of YuniKorn placeholder members (which
have none until placed) on their node. ``sync()`` is True only while this deployment's watcher
leads and has listed everything (``readiness.py``), so a follower or a half-read cluster never
binds.

Binds run concurrently on a thread pool, every API call through one token bucket (QPS/burst
as kube-scheduler's). A bound pod's row is written at once (not when the watch echoes it), so
the next cycle counts its node as used.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone
from kubernetes import client
from kubernetes.client.rest import ApiException

from scheduler_core.cluster import ClusterError
from scheduler_core.cluster.base import BindOutcome, BindRequest, BindResult
from scheduler_core.cluster.simulated import DELETED_REASON, json_merge
from scheduler_core.engine.quantity import format_amount
from scheduler_core.models import Gang, Member, MemberPhase
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES

from . import convert, placeholder_pods, readiness
from .client import RateLimiter, api_client, rate_limiter

logger = logging.getLogger(__name__)

BIND_THREADS = 16


class KubernetesCluster:
    name = "kubernetes"

    def __init__(
        self,
        api: client.ApiClient | None = None,
        *,
        limiter: RateLimiter | None = None,
        scheduler_name: str | None = None,
        placeholder_image: str | None = None,
    ) -> None:
        self.api = api or api_client()
        self.core = client.CoreV1Api(self.api)
        self.limiter = limiter or rate_limiter()
        self.scheduler_name = scheduler_name or settings.GANGSCHED_SCHEDULER_NAME
        self.placeholder_image = placeholder_image or settings.GANGSCHED_PLACEHOLDER_IMAGE
        self._pool = ThreadPoolExecutor(max_workers=BIND_THREADS, thread_name_prefix="kube-bind")

    # ------------------------------------------------------------ the Protocol

    def sync(self) -> bool:
        return readiness.is_ready()

    def bind(self, requests: Sequence[BindRequest]) -> list[BindResult]:
        """Bind concurrently; then write the rows of the pods now bound (and forget the gone)."""
        if not requests:
            return []
        held = self._held_keys({(r.namespace, r.name) for r in requests})
        placeholders = placeholder_pods.bodies(requests, self)
        created: dict[tuple[str, str], str] = {}  # uid of each placeholder pod created, by key

        def one(request: BindRequest) -> BindResult:
            body = placeholders.get((request.namespace, request.name))
            if body is None:
                return self._bind_one(request, held)
            return self._create_bound(request, body, held, created)

        results = list(self._pool.map(one, requests))
        _rows_bound([r.request for r in results if r.outcome is BindOutcome.BOUND])
        placeholder_pods.rows_uid(created)
        _rows_unbindable([r.request for r in results if r.outcome is BindOutcome.CONFLICT])
        _rows_gone([r.request for r in results if r.outcome is BindOutcome.GONE])
        return results

    def delete_pod(self, namespace: str, name: str, reason: str) -> bool:
        """Delete the pod in the cluster, and mark its row Failed at once, as the simulated
        cluster does (the restart policies run on that); the watch removes the row later."""
        self.limiter.acquire()
        try:
            self.core.delete_namespaced_pod(name, namespace, _preload_content=False).release_conn()
            deleted = True
        except ApiException as error:
            if error.status != 404:
                raise ClusterError(
                    f"deleting pod {namespace}/{name}: {error.status} {error.reason}"
                ) from None
            deleted = False
        except Exception as error:
            raise ClusterError(f"deleting pod {namespace}/{name}: {error}") from None
        Member.objects.filter(namespace=namespace, name=name, phase__in=ACTIVE_MEMBER_PHASES).update(
            phase=MemberPhase.FAILED,
            finished_at=timezone.now(),
            reserved_node=None,
            annotations=json_merge("annotations", {DELETED_REASON: reason}),
            updated=timezone.now(),
        )
        if deleted:
            logger.info("pod %s/%s deleted: %s", namespace, name, reason)
        return deleted

    def annotate_pod(self, namespace: str, name: str, annotations: dict[str, str]) -> None:
        """Merge annotations into the pod (a merge patch); a pod already gone is left alone."""
        self.limiter.acquire()
        try:
            self.core.patch_namespaced_pod(
                name, namespace, {"metadata": {"annotations": dict(annotations)}}, _preload_content=False
            ).release_conn()
        except ApiException as error:
            if error.status != 404:
                raise ClusterError(
                    f"annotating pod {namespace}/{name}: {error.status} {error.reason}"
                ) from None
        Member.objects.filter(namespace=namespace, name=name).update(
            annotations=json_merge("annotations", dict(annotations)), updated=timezone.now()
        )

    def hold(self, requests: Sequence[BindRequest]) -> None:
        """Create a placeholder pod for each reservation (see ``convert.placeholder_manifest``)."""
        members = _members(requests)
        for request in requests:
            member = members.get((request.namespace, request.name))
            if member is None:
                continue
            body = self.placeholder_body(member, request.node, owner=_owner(member.gang))
            self.limiter.acquire()
            try:
                self.core.create_namespaced_pod(
                    request.namespace, body, _preload_content=False
                ).release_conn()
            except ApiException as error:
                if error.status != 409:  # 409: it exists already, which is what we want
                    logger.warning(
                        "placeholder for %s/%s on %s not created: %s %s",
                        request.namespace,
                        request.name,
                        request.node,
                        error.status,
                        error.reason,
                    )

    def placeholder_body(
        self,
        member: Member,
        node: str,
        *,
        owner: dict[str, Any] | None,
        task_group: convert.TaskGroupPod | None = None,
    ) -> dict[str, Any]:
        """The pause pod that holds ``member``'s requests on ``node``: its reservation's, or
        (``task_group``) the pod of a YuniKorn placeholder member (``placeholder_pods.bodies``)."""
        return convert.placeholder_manifest(
            namespace=member.namespace,
            member=member.name,
            node=node,
            requests={name: format_amount(name, amount) for name, amount in member.requests.items()},
            tolerations=member.tolerations,
            image=self.placeholder_image,
            scheduler_name=self.scheduler_name,
            owner=owner,
            task_group=task_group,
        )

    def unhold(self, requests: Sequence[BindRequest]) -> None:
        for request in requests:
            self._placeholder_delete(request.namespace, request.name)

    def held(self) -> list[BindRequest]:
        """The reservations placeholder pods hold now, read from the cluster."""
        self.limiter.acquire()
        response = self.core.list_pod_for_all_namespaces(
            label_selector=f"{convert.PLACEHOLDER_LABEL}=true", _preload_content=False
        )
        try:
            items = json.loads(response.data).get("items") or []
        finally:
            response.release_conn()
        held = []
        for pod in items:
            owner = (convert.metadata(pod).get("annotations") or {}).get(
                convert.PLACEHOLDER_FOR_ANNOTATION, ""
            )
            namespace, _, name = owner.partition("/")
            if name and not convert.pod_deleting(pod):
                held.append(BindRequest(namespace, name, convert.pod_node(pod)))
        return held

    # ------------------------------------------------------------ helpers

    def _create_bound(
        self,
        request: BindRequest,
        body: dict,
        held: set[tuple[str, str]],
        created: dict[tuple[str, str], str],
    ) -> BindResult:
        """Create a YuniKorn placeholder's pod on its node: its "bind" (``placeholder_pods.bodies``)."""
        if (request.namespace, request.name) in held:
            self._placeholder_delete(request.namespace, request.name)  # its reservation's pod
        self.limiter.acquire()
        try:
            response = self.core.create_namespaced_pod(request.namespace, body, _preload_content=False)
            try:
                uid = (json.loads(response.data).get("metadata") or {}).get("uid") or ""
            finally:
                response.release_conn()
            created[(request.namespace, request.name)] = uid
            return BindResult(request, BindOutcome.BOUND)
        except ApiException as error:
            if error.status == 409:  # created by an earlier attempt, or a pod holds the name
                return self._already_bound(request)
            return BindResult(request, BindOutcome.FAILED, f"{error.status} {error.reason}")
        except Exception as error:
            return BindResult(request, BindOutcome.FAILED, str(error) or type(error).__name__)

    def _bind_one(self, request: BindRequest, held: set[tuple[str, str]]) -> BindResult:
        if (request.namespace, request.name) in held:
            self._placeholder_delete(request.namespace, request.name)  # make room for the real pod
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": request.name, "namespace": request.namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": request.node},
        }
        self.limiter.acquire()
        try:
            # _preload_content=False: client 37 fails to decode the Status a 201 answers with.
            self.core.create_namespaced_pod_binding(
                request.name, request.namespace, body, _preload_content=False
            ).release_conn()
            return BindResult(request, BindOutcome.BOUND)
        except ApiException as error:
            if error.status == 404:
                return BindResult(request, BindOutcome.GONE, "the pod no longer exists")
            if error.status == 409:
                return self._already_bound(request)
            return BindResult(request, BindOutcome.FAILED, f"{error.status} {error.reason}")
        except Exception as error:
            return BindResult(request, BindOutcome.FAILED, str(error) or type(error).__name__)

    def _already_bound(self, request: BindRequest) -> BindResult:
        """A 409: bound to this very node is our own earlier bind (a retry), elsewhere a conflict."""
        node = self._node_of(request)
        if node == request.node:
            return BindResult(request, BindOutcome.BOUND)
        return BindResult(request, BindOutcome.CONFLICT, f"already bound to {node or 'another node'}")

    def _node_of(self, request: BindRequest) -> str:
        self.limiter.acquire()
        try:
            pod = self.core.read_namespaced_pod(request.name, request.namespace)
        except Exception:
            return ""
        return (pod.spec.node_name if pod.spec else "") or ""

    def _held_keys(self, keys: set[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of these pods hold a reservation, so may have a placeholder to remove first."""
        reserved = Member.objects.filter(
            namespace__in={k[0] for k in keys}, name__in={k[1] for k in keys}, reserved_node__isnull=False
        ).values_list("namespace", "name")
        return {key for key in reserved if key in keys}

    def _placeholder_delete(self, namespace: str, member: str) -> None:
        self.placeholder_pod_delete(namespace, convert.placeholder_name(namespace, member))

    def placeholder_pod_delete(self, namespace: str, name: str, uid: str = "") -> None:
        """Delete a placeholder pod, at once (no grace period), and only that very pod when its
        ``uid`` is given; no Member row changes (a placeholder pod has none of its own, or its
        row is already gone: an orphan, see ``placeholder_pods.py``)."""
        options = client.V1DeleteOptions(
            grace_period_seconds=0, preconditions=client.V1Preconditions(uid=uid) if uid else None
        )
        self.limiter.acquire()
        try:
            self.core.delete_namespaced_pod(
                name, namespace, body=options, _preload_content=False
            ).release_conn()
        except ApiException as error:
            if error.status not in (404, 409):  # 409: the uid differs, a newer pod of that name
                logger.warning(
                    "placeholder pod %s/%s not deleted: %s %s", namespace, name, error.status, error.reason
                )


def _members(requests: Sequence[BindRequest]) -> dict[tuple[str, str], Member]:
    namespaces = {r.namespace for r in requests}
    names = {r.name for r in requests}
    rows = Member.objects.filter(namespace__in=namespaces, name__in=names).select_related("gang")
    return {(m.namespace, m.name): m for m in rows}


def _owner(gang: Gang | None) -> dict[str, Any] | None:
    """An ownerReference to the gang's declaring object (PodGroup), when it came from the cluster."""
    if gang is None:
        return None
    declaration = gang.declaration or {}
    meta = declaration.get("metadata") or {}
    if not meta.get("uid") or not declaration.get("apiVersion") or not declaration.get("kind"):
        return None
    return {
        "apiVersion": declaration["apiVersion"],
        "kind": declaration["kind"],
        "name": meta.get("name") or gang.name,
        "uid": meta["uid"],
        "blockOwnerDeletion": False,
    }


def _rows_update(requests: Sequence[BindRequest], sql_set: str) -> int:
    if not requests:
        return 0
    table = Member._meta.db_table
    sql = f"""
        UPDATE {table} AS m SET {sql_set}, updated = %s
          FROM unnest(%s::text[], %s::text[], %s::text[]) AS v(namespace, name, node)
         WHERE m.namespace = v.namespace AND m.name = v.name AND m.phase = ANY(%s::text[])
    """
    params = [
        timezone.now(),
        [r.namespace for r in requests],
        [r.name for r in requests],
        [r.node for r in requests],
        [phase.value for phase in ACTIVE_MEMBER_PHASES],
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _rows_bound(requests: Sequence[BindRequest]) -> int:
    return _rows_update(requests, "node = v.node, reserved_node = NULL")


def _rows_unbindable(requests: Sequence[BindRequest]) -> int:
    # Bound by someone else (or an old incarnation still terminating): never schedulable again;
    # the watch brings the truth (the other node, or the pod's deletion).
    return _rows_update(requests, "terminating = TRUE, reserved_node = NULL")


def _rows_gone(requests: Sequence[BindRequest]) -> int:
    """The pods no longer exist: their pending rows go now, not after the watch catches up,
    so the next cycle does not try them again."""
    if not requests:
        return 0
    keys = {(r.namespace, r.name) for r in requests}
    rows = Member.objects.filter(
        namespace__in={k[0] for k in keys}, name__in={k[1] for k in keys}, node__isnull=True
    ).values_list("pk", "namespace", "name")
    ids = [pk for pk, namespace, name in rows if (namespace, name) in keys]
    return Member.objects.filter(pk__in=ids).delete()[0] if ids else 0
