"""Writing gangsched's view back to the cluster: PodGroup status and Kubernetes Events.

Users of a real cluster look with ``kubectl get podgroup`` and ``kubectl describe pod``, not at
gangsched's dashboard, so the leading watcher writes (every renew period):

- each PodGroup's ``status`` (phase, running / succeeded / failed, scheduleStartTime) as the
  scheduler-plugins controller would, when it changed since the last write;
- Events from the gang history: ``Scheduled`` (a gang bound), ``GangWaiting`` (the engine's
  explanation of why a gang waits), ``GangTimeout``, on the PodGroup and its pods.

History rows are read after a cursor that starts at the newest row when the watcher starts, so a
restart does not repeat old Events (Events are advisory; a few lost on a crash are acceptable,
a flood of repeats is not).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from django.db.models import Max, Q
from kubernetes import client
from kubernetes.client.rest import ApiException

from scheduler_core.models import Gang, GangEvent, GangEventKind, Member, MemberPhase

from .client import RateLimiter

logger = logging.getLogger(__name__)

#: gangsched's phases in scheduler-plugins' PodGroup vocabulary (it has no TimedOut or Killed).
PODGROUP_PHASE = {
    "Pending": "Pending",
    "Scheduling": "Scheduling",
    "Running": "Running",
    "Finished": "Finished",
    "Failed": "Failed",
    "TimedOut": "Failed",
    "Killed": "Failed",
    "Unknown": "Unknown",
}
#: ... and in Volcano's (Pending, Inqueue, Running, Completed, Unknown; no failed phase).
VOLCANO_PHASE = {
    "Pending": "Pending",
    "Scheduling": "Inqueue",
    "Running": "Running",
    "Finished": "Completed",
}


def _counts(gang: Gang) -> dict[str, Any]:
    return {"running": gang.running, "succeeded": gang.succeeded, "failed": gang.failed}


def podgroup_status(gang: Gang) -> dict[str, Any]:
    """scheduler-plugins' PodGroup status, as its controller writes it."""
    return {
        "phase": PODGROUP_PHASE.get(gang.phase, "Unknown"),
        **_counts(gang),
        "scheduleStartTime": _stamp(gang.schedule_start_time),
    }


def volcano_status(gang: Gang) -> dict[str, Any]:
    return {"phase": VOLCANO_PHASE.get(gang.phase, "Unknown"), **_counts(gang)}


def upstream_status(gang: Gang) -> dict[str, Any]:
    """The upstream PodGroup's status: a ``PodGroupScheduled`` condition (the API is alpha and
    still moving; gangsched writes the one condition users look for)."""
    scheduled = gang.phase in ("Running", "Finished") or gang.satisfied
    return {
        "conditions": [
            {
                "type": "PodGroupScheduled",
                "status": "True" if scheduled else "False",
                "reason": "Scheduled" if scheduled else (gang.reason or gang.phase),
                "message": "" if scheduled else (gang.message or f"gang is {gang.phase}")[:1024],
                "lastTransitionTime": _stamp(gang.updated),
            }
        ]
    }


#: (apiVersion, kind) of a declaring object -> (group, version, plural, its status from a gang).
STATUS_KINDS = {
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): (
        "scheduling.x-k8s.io",
        "v1alpha1",
        "podgroups",
        podgroup_status,
    ),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): (
        "scheduling.volcano.sh",
        "v1beta1",
        "podgroups",
        volcano_status,
    ),
    ("scheduling.k8s.io/v1alpha2", "PodGroup"): (
        "scheduling.k8s.io",
        "v1alpha2",
        "podgroups",
        upstream_status,
    ),
}
#: history kinds that become Events: (reason, type, on the pods too?)
EVENT_OF = {
    GangEventKind.BOUND: ("Scheduled", "Normal"),
    GangEventKind.EXPLAINED: ("GangWaiting", "Warning"),
    GangEventKind.TIMED_OUT: ("GangTimeout", "Warning"),
    GangEventKind.KILLED: ("GangKilled", "Warning"),
    GangEventKind.FAILED: ("GangFailed", "Warning"),
}
MAX_PODS_PER_EVENT = 50  # a gang of 1,000 gets its Event on the PodGroup and the first 50 pods


def _stamp(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


class StatusWriter:
    def __init__(self, api: client.ApiClient, *, limiter: RateLimiter, component: str, instance: str) -> None:
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)
        self.limiter = limiter
        self.component, self.instance = component, instance
        self._written: dict[tuple[str, str, str], str] = {}
        self._cursor = GangEvent.objects.aggregate(last=Max("id"))["last"] or 0

    def step(self) -> tuple[int, int]:
        """Write what changed; returns (statuses written, events created)."""
        return self.statuses_write(), self.events_write()

    # ------------------------------------------------------------ PodGroup status

    def statuses_write(self) -> int:
        """Each declaring object's status, written when it changed since the last write."""
        written = 0
        declared = Q()
        for api_version, kind in STATUS_KINDS:
            declared |= Q(declaration__apiVersion=api_version, declaration__kind=kind)
        for gang in Gang.objects.filter(declared).defer("details"):
            group, version, plural, status_of = STATUS_KINDS[
                (gang.declaration["apiVersion"], gang.declaration["kind"])
            ]
            status = status_of(gang)
            key = (group, gang.namespace, gang.name)
            fingerprint = repr(sorted(status.items()))
            if self._written.get(key) == fingerprint:
                continue
            if self._patch_status((group, version, plural), gang.namespace, gang.name, status):
                self._written[key] = fingerprint
                written += 1
        return written

    def _patch_status(
        self, api: tuple[str, str, str], namespace: str, name: str, status: dict[str, Any]
    ) -> bool:
        group, version, plural = api
        self.limiter.acquire()
        try:
            self.custom.patch_namespaced_custom_object_status(
                group, version, namespace, plural, name, {"status": status}
            )
            return True
        except ApiException as error:
            if error.status != 404:  # 404: the PodGroup was deleted meanwhile
                logger.warning(
                    "PodGroup %s/%s status not written: %s %s", namespace, name, error.status, error.reason
                )
            return error.status == 404
        except Exception as error:
            logger.warning("PodGroup %s/%s status not written: %s", namespace, name, error)
            return False

    # ------------------------------------------------------------ Events

    def events_write(self) -> int:
        rows = list(
            GangEvent.objects.filter(id__gt=self._cursor, kind__in=list(EVENT_OF))
            .select_related("gang")
            .order_by("id")[:500]
        )
        if not rows:
            self._cursor = max(self._cursor, GangEvent.objects.aggregate(last=Max("id"))["last"] or 0)
            return 0
        created = 0
        for row in rows:
            reason, kind = EVENT_OF[GangEventKind(row.kind)]
            message = f"gang {row.gang.key}: {row.reason}"[:1024]
            declaration = row.gang.declaration or {}
            if (declaration.get("apiVersion"), declaration.get("kind")) in STATUS_KINDS:
                meta = declaration.get("metadata") or {}
                involved = {
                    "apiVersion": declaration["apiVersion"],
                    "kind": "PodGroup",
                    "name": row.gang.name,
                    "namespace": row.gang.namespace,
                    "uid": meta.get("uid"),
                }
                created += self.event(involved, reason, kind, message)
            for pod in self._pods(row.gang, row.kind):
                involved = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod.name,
                    "namespace": pod.namespace,
                    "uid": pod.uid or None,
                }
                created += self.event(involved, reason, kind, message)
            self._cursor = row.id
        return created

    def _pods(self, gang: Gang, kind: str) -> Iterable[Member]:
        pods = Member.objects.filter(gang=gang)
        if kind == GangEventKind.BOUND:
            pods = pods.filter(node__isnull=False)
        elif kind in (GangEventKind.EXPLAINED, GangEventKind.TIMED_OUT):
            pods = pods.filter(node__isnull=True, phase=MemberPhase.PENDING)
        return pods.order_by("name").only("namespace", "name", "uid")[:MAX_PODS_PER_EVENT]

    def event(self, involved: dict[str, Any], reason: str, kind: str, message: str) -> int:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{involved['name'][:200]}.", "namespace": involved["namespace"]},
            "involvedObject": {key: value for key, value in involved.items() if value},
            "reason": reason,
            "message": message,
            "type": kind,
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "reportingInstance": self.instance,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        self.limiter.acquire()
        try:
            self.core.create_namespaced_event(
                involved["namespace"], body, _preload_content=False
            ).release_conn()
            return 1
        except Exception as error:
            logger.warning(
                "event %s on %s/%s not created: %s", reason, involved["namespace"], involved["name"], error
            )
            return 0
