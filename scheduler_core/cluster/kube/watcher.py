"""The watcher process (``manage.py kube_watch``): leads, mirrors, writes back.

Every renew period it renews (or tries to take) the Lease. While it leads it runs one Reflector
per kind, and once all have listed it marks the deployment ready to schedule (``readiness``),
writes PodGroup status and Events (``status``) and makes the placeholder pods match the
reservations in the database. When it loses the Lease it stops its watches and clears the
flag at once: a follower neither schedules nor writes to the cluster.

Optional kinds (Volcano's and KAI's PodGroups, the upstream Workload API) are watched only when the
cluster serves their API; a cluster without them is not an error.
"""

from __future__ import annotations

import functools
import logging
import threading
from dataclasses import dataclass

from django import db
from django.conf import settings
from kubernetes import client
from kubernetes.client.rest import ApiException

from scheduler_core.cluster.base import BindRequest
from scheduler_core.models import Member, MemberPhase

from . import readiness
from .backend import KubernetesCluster
from .client import RateLimiter, identity, own_namespace, rate_limiter
from .leader import LeaderElector
from .mirror import DeclarationMirror, NodeMirror, PodMirror
from .status import StatusWriter
from .volcano_jobs import VolcanoJobMirror, VolcanoJobs
from .watch import Reflector, start

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CustomKind:
    group: str
    version: str
    plural: str
    kind: str
    required: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


#: Gang-declaring kinds read from the cluster. Volcano's job controller creates a Job's PodGroup
#: and pods itself: those are watched, and the Job only for its restart behaviour.
DECLARATION_KINDS = (
    CustomKind("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", required=True),
    CustomKind("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup"),
    CustomKind("scheduling.k8s.io", "v1alpha1", "workloads", "Workload"),
    CustomKind("scheduling.k8s.io", "v1alpha2", "workloads", "Workload"),
    CustomKind("scheduling.k8s.io", "v1alpha2", "podgroups", "PodGroup"),
    # KAI's podgrouper makes these for its pods' owners; KAI writes their status itself.
    CustomKind("scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup"),
)
VOLCANO_JOBS = CustomKind("batch.volcano.sh", "v1alpha1", "jobs", "Job")


class Watcher:
    def __init__(
        self,
        api: client.ApiClient,
        *,
        identity_: str | None = None,
        namespace: str | None = None,
        scheduler_name: str | None = None,
        aliases: list[str] | None = None,
        limiter: RateLimiter | None = None,
        duration_s: float | None = None,
        renew_s: float | None = None,
        watch_timeout_s: int = 300,
    ) -> None:
        self.api = api
        self.identity = identity_ or identity()
        self.scheduler_name = scheduler_name or settings.GANGSCHED_SCHEDULER_NAME
        self.aliases = settings.GANGSCHED_SCHEDULER_ALIASES if aliases is None else aliases
        self.limiter = limiter or rate_limiter()
        self.renew_s = renew_s or settings.GANGSCHED_LEASE_RENEW_S
        self.elector = LeaderElector(
            api,
            namespace=namespace or own_namespace(),
            identity=self.identity,
            duration_s=duration_s or settings.GANGSCHED_LEASE_DURATION_S,
            renew_s=self.renew_s,
        )
        self.backend = KubernetesCluster(api, limiter=self.limiter, scheduler_name=self.scheduler_name)
        self.watch_timeout_s = watch_timeout_s
        self.reflectors: list[Reflector] = []
        self._stop: threading.Event | None = None
        self._threads: list[threading.Thread] = []
        self._status: StatusWriter | None = None

    # ------------------------------------------------------------ the loop

    def run(self, stop: threading.Event) -> None:
        try:
            while not stop.is_set():
                self.step()
                stop.wait(self.renew_s)
        finally:
            self.halt()
            self.elector.release()

    def step(self) -> bool:
        """One renew period; returns whether this watcher leads and is ready."""
        db.close_old_connections()  # a long-lived process: drop a connection PostgreSQL closed
        leading = self.elector.try_lead()
        if not leading:
            if self._stop is not None:
                logger.warning("watcher %s no longer leads: stopping its watches", self.identity)
                self.halt()
            return False
        if self._stop is None:
            self.begin()
        if not self.synced:
            return False
        readiness.ready_set(self.identity, self.elector.duration_s - self.renew_s)
        try:
            self._status.step()
            self.placeholders_reconcile()
        except Exception:  # write-back is advisory; it must not stop the leader
            logger.exception("watcher %s: write-back failed", self.identity)
        return True

    @property
    def synced(self) -> bool:
        return bool(self.reflectors) and all(r.stats.synced.is_set() for r in self.reflectors)

    def begin(self) -> None:
        self.reflectors = self.build_reflectors()
        self._stop = threading.Event()
        self._threads = start(self.reflectors, self._stop)
        self._status = StatusWriter(
            self.api, limiter=self.limiter, component=self.scheduler_name, instance=self.identity
        )

    def halt(self) -> None:
        readiness.ready_clear()
        if self._stop is not None:
            self._stop.set()
            for reflector in self.reflectors:
                reflector.cancel()
            for thread in self._threads:
                thread.join(timeout=2)
        self._stop, self._threads, self.reflectors = None, [], []

    # ------------------------------------------------------------ what is watched

    def build_reflectors(self) -> list[Reflector]:
        core = client.CoreV1Api(self.api)
        custom = client.CustomObjectsApi(self.api)
        lock = threading.Lock()
        refused = self._refused
        reflectors = [
            Reflector(core.list_node, NodeMirror(), lock=lock, watch_timeout_s=self.watch_timeout_s),
            Reflector(
                core.list_pod_for_all_namespaces,
                PodMirror(
                    scheduler_name=self.scheduler_name,
                    aliases=self.aliases,
                    refused=refused,
                    backend=self.backend,
                ),
                lock=lock,
                watch_timeout_s=self.watch_timeout_s,
            ),
        ]
        jobs = VolcanoJobs()
        for kind in (*DECLARATION_KINDS, VOLCANO_JOBS):
            if not self._served(custom, kind):
                (logger.warning if kind.required else logger.info)(
                    "%s (%s) is not served by this cluster: not watched", kind.kind, kind.api_version
                )
                continue
            reflectors.append(
                Reflector(
                    functools.partial(
                        custom.list_cluster_custom_object, kind.group, kind.version, kind.plural
                    ),
                    self._mirror(kind, jobs),
                    lock=lock,
                    watch_timeout_s=self.watch_timeout_s,
                )
            )
        return reflectors

    def _mirror(self, kind: CustomKind, jobs: VolcanoJobs):
        if kind is VOLCANO_JOBS:
            return VolcanoJobMirror(jobs)
        if kind.group != "scheduling.volcano.sh":
            return DeclarationMirror(kind.kind, api_version=kind.api_version, refused=self._refused)
        jobs.podgroup_mirror = DeclarationMirror(
            kind.kind, api_version=kind.api_version, refused=self._refused, prepare=jobs.prepare
        )
        return jobs.podgroup_mirror

    def _served(self, custom: client.CustomObjectsApi, kind: CustomKind) -> bool:
        try:
            resources = custom.get_api_resources(kind.group, kind.version)
        except ApiException as error:
            if error.status == 404:
                return False
            raise
        return any(resource.name == kind.plural for resource in (resources.resources or []))

    def _refused(self, obj, reason: str) -> None:
        """Tell the owner of an object gangsched could not read, with an Event on it."""
        meta = obj.get("metadata") or {}
        if self._status is None or not meta.get("namespace"):
            return
        involved = {
            "apiVersion": obj.get("apiVersion") or "v1",
            "kind": obj.get("kind") or "Pod",
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
        }
        self._status.event(
            involved, "FailedScheduling", "Warning", f"gangsched cannot read this object: {reason}"
        )

    # ------------------------------------------------------------ placeholders

    def placeholders_reconcile(self) -> tuple[int, int]:
        """Make the placeholder pods match the reservations: (created, deleted)."""
        wanted = {
            (namespace, name): node
            for namespace, name, node in Member.objects.filter(
                reserved_node__isnull=False, node__isnull=True, phase=MemberPhase.PENDING
            ).values_list("namespace", "name", "reserved_node")
        }
        held = {(r.namespace, r.name): r.node for r in self.backend.held()}
        extra = [
            BindRequest(ns, name, node) for (ns, name), node in held.items() if wanted.get((ns, name)) != node
        ]
        missing = [
            BindRequest(ns, name, node) for (ns, name), node in wanted.items() if held.get((ns, name)) != node
        ]
        if extra:
            self.backend.unhold(extra)
        if missing:
            self.backend.hold(missing)
        if extra or missing:
            logger.info("placeholders: %d created, %d deleted", len(missing), len(extra))
        return len(missing), len(extra)
