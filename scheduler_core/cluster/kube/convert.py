"""Kubernetes objects (as the API's JSON dicts) to gangsched's terms, and back; no I/O.

The watch hands these functions plain dicts (``ApiClient.sanitize_for_serialization`` of the
typed models, or the raw JSON of a custom object), so they work the same for every kind and are
tested without a cluster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from scheduler_core.engine.quantity import QuantityError, parse_resources
from scheduler_core.specs.yunikorn import PLACEHOLDER as YUNIKORN_PLACEHOLDER

#: Labels of the placeholder pods that hold reserved capacity (see ``placeholder_manifest``).
PLACEHOLDER_LABEL = "gangsched.io/placeholder"
PLACEHOLDER_FOR = "gangsched.io/placeholder-for"  # a hash of "namespace/name" of the member
PLACEHOLDER_FOR_ANNOTATION = "gangsched.io/placeholder-for"  # the member's "namespace/name" itself

#: Pod phases whose pods still hold their node's resources.
ACTIVE_POD_PHASES = ("Pending", "Running", "Unknown")

#: Metadata worth keeping on a mirrored object: what declarations read, and the uid for owners.
_KEPT_METADATA = ("name", "namespace", "labels", "annotations", "uid")


def metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def key_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = metadata(obj)
    return meta.get("namespace") or "", meta.get("name") or ""


# ---------------------------------------------------------------- nodes


def node_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``node_apply`` keywords and readiness from a v1 Node.

    Allocatable (not capacity) is what the kubelet lets pods use. A node is ready when its
    ``Ready`` condition is ``True``, as kube-scheduler's node lifecycle sees it.
    Raises ValueError with the node's name when its allocatable cannot be read.
    """
    meta, spec, status = metadata(obj), obj.get("spec") or {}, obj.get("status") or {}
    name = meta.get("name") or ""
    taints = [
        {key: taint[key] for key in ("key", "value", "effect") if taint.get(key) is not None}
        for taint in spec.get("taints") or []
    ]
    ready = any(
        condition.get("type") == "Ready" and condition.get("status") == "True"
        for condition in status.get("conditions") or []
    )
    return {
        "name": name,
        "allocatable": dict(status.get("allocatable") or {}),
        "labels": dict(meta.get("labels") or {}),
        "taints": taints,
        "unschedulable": bool(spec.get("unschedulable")),
        "ready": ready,
    }


# ---------------------------------------------------------------- pods


def pod_requests(pod: Mapping[str, Any]) -> dict[str, int]:
    """The pod's effective requests, as kube-scheduler computes them: the sum over containers,
    at least the largest init container's, plus the pod overhead. Canonical integers.

    Raises ValueError naming the pod when a quantity does not parse.
    """
    spec = pod.get("spec") or {}
    try:
        total: dict[str, int] = {}
        for container in spec.get("containers") or []:
            _add(total, parse_resources((container.get("resources") or {}).get("requests")))
        for container in spec.get("initContainers") or []:
            requests = parse_resources((container.get("resources") or {}).get("requests"))
            for name, amount in requests.items():
                total[name] = max(total.get(name, 0), amount)
        _add(total, parse_resources(spec.get("overhead")))
    except QuantityError as error:
        namespace, name = key_of(pod)
        raise ValueError(f"pod {namespace}/{name}: {error}") from None
    return total


def _add(total: dict[str, int], more: Mapping[str, int]) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, 0) + amount


def pod_phase(pod: Mapping[str, Any]) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


def pod_node(pod: Mapping[str, Any]) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


def pod_deleting(pod: Mapping[str, Any]) -> bool:
    return bool(metadata(pod).get("deletionTimestamp"))


def is_placeholder(pod: Mapping[str, Any]) -> bool:
    return (metadata(pod).get("labels") or {}).get(PLACEHOLDER_LABEL) == "true"


def holds_node(pod: Mapping[str, Any]) -> bool:
    """Whether the pod uses its node's resources now (bound and not finished)."""
    return bool(pod_node(pod)) and pod_phase(pod) in ACTIVE_POD_PHASES


def pod_started_at(pod: Mapping[str, Any]) -> str | None:
    return (pod.get("status") or {}).get("startTime")


def pod_failure(pod: Mapping[str, Any]) -> str:
    """Why a Failed pod failed, in a line: the pod's reason and message, else a container's."""
    status = pod.get("status") or {}
    parts = [status.get("reason") or "", status.get("message") or ""]
    for container in status.get("containerStatuses") or []:
        terminated = (container.get("state") or {}).get("terminated") or {}
        if terminated.get("exitCode"):
            parts.append(f"container {container.get('name')} exited {terminated['exitCode']}")
            parts.append(terminated.get("reason") or "")
            break
    return ": ".join(part for part in parts if part) or "pod failed"


def declared_pod(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The pod as a manifest for ``manifests_apply``: what its owner declared, without status or
    server-set metadata (resourceVersion changes on every write; keeping it would make each
    watch event look like a changed declaration)."""
    meta = _kept_metadata(pod)
    owners = metadata(pod).get("ownerReferences")
    if owners:
        meta["ownerReferences"] = owners  # its controller recreates it; a bare pod has none
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(pod.get("spec") or {})}


def declared_object(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A custom object (PodGroup, Workload, Volcano Job) as a manifest: spec and kept metadata."""
    manifest = {key: value for key, value in obj.items() if key not in ("metadata", "status")}
    manifest["metadata"] = _kept_metadata(obj)
    return manifest


def _kept_metadata(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = metadata(obj)
    return {key: meta[key] for key in _KEPT_METADATA if meta.get(key) not in (None, {}, "")}


# ---------------------------------------------------------------- placeholders


def placeholder_name(namespace: str, name: str) -> str:
    """A stable pod name for the placeholder of member ``namespace/name`` (a DNS subdomain)."""
    digest = hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:10]
    return f"{name[:200]}-gs-hold-{digest}"


def placeholder_for(namespace: str, name: str) -> str:
    """A label value (≤ 63 characters) naming a member, for selecting its placeholder."""
    return hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:40]


def placeholder_manifest(
    *,
    namespace: str,
    member: str,
    node: str,
    requests: Mapping[str, str],
    tolerations: Iterable[Mapping[str, Any]],
    image: str,
    scheduler_name: str,
    owner: Mapping[str, Any] | None,
    task_group: TaskGroupPod | None = None,
) -> dict[str, Any]:
    """A pause pod that holds ``requests`` on ``node``: a reservation's, or a YuniKorn
    placeholder member's own pod (``task_group``).

    It is placed by setting ``spec.nodeName`` (no scheduler involved), so kube-scheduler counts
    the capacity as used and places nothing there. A reservation's is named after its member
    and labelled ``placeholder-for`` it; gangsched deletes it just before binding the real
    member in its place, or when the reservation is released. It is owned by the gang's
    PodGroup when there is one, so deleting the PodGroup cleans up its placeholders too.

    A YuniKorn placeholder member (``tg-<app>-<group>-<i>``) has no pod until it is placed:
    this is its pod, shaped as YuniKorn's k8shim makes its placeholders
    (``pkg/cache/placeholder.go``): named as the member, the task group's labels and
    annotations under the member's (``applicationId``, ``queue``,
    ``yunikorn.apache.org/placeholder``, ``task-group-name``), the task group's nodeSelector,
    tolerations and affinity as declared, a ``pause`` container whose limits equal its
    requests, ``restartPolicy: Never``, owned by the application's originator pod. Unlike
    k8shim's it is created bound: gangsched chose its node first. Both kinds carry the
    ``gangsched.io/placeholder`` label, which keeps the watch from mirroring them as users' pods.
    """
    meta: dict[str, Any] = {"name": placeholder_name(namespace, member), "namespace": namespace}
    spec: dict[str, Any] = {"restartPolicy": "Always", "tolerations": [dict(t) for t in tolerations]}
    container: dict[str, Any] = {
        "name": "hold",
        "image": image,
        "resources": {"requests": dict(requests), "limits": _limits(requests)},
    }
    if task_group is None:
        meta["labels"] = {PLACEHOLDER_LABEL: "true", PLACEHOLDER_FOR: placeholder_for(namespace, member)}
        meta["annotations"] = {PLACEHOLDER_FOR_ANNOTATION: f"{namespace}/{member}"}
    else:
        group = task_group.definition
        meta["name"] = member
        meta["labels"] = {**_strings(group.get("labels")), **task_group.labels, PLACEHOLDER_LABEL: "true"}
        meta["annotations"] = {**_strings(group.get("annotations")), **task_group.annotations}
        spec = {
            "restartPolicy": "Never",
            **{k: group[k] for k in ("nodeSelector", "tolerations", "affinity") if group.get(k)},
        }
        container.update(name="pause", imagePullPolicy="IfNotPresent")
        container["resources"] = {"requests": dict(requests), "limits": dict(requests)}
    if owner:
        meta["ownerReferences"] = [dict(owner)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "nodeName": node,
            "schedulerName": scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "automountServiceAccountToken": False,
            **spec,
            "containers": [container],
        },
    }


class TaskGroupPod(NamedTuple):
    """What a YuniKorn placeholder member's pod takes from it: its task group's ``definition``
    (as declared in ``task-groups``), its labels and its annotations."""

    definition: Mapping[str, Any]
    labels: Mapping[str, str]
    annotations: Mapping[str, str]


def is_task_group_placeholder(pod: Mapping[str, Any]) -> bool:
    """A YuniKorn placeholder member's pod, which gangsched created (``placeholder_manifest``)."""
    annotations = metadata(pod).get("annotations") or {}
    return is_placeholder(pod) and annotations.get(YUNIKORN_PLACEHOLDER) == "true"


def _strings(values: Any) -> dict[str, str]:
    """A task group's ``labels`` or ``annotations``: only string entries can be metadata."""
    if not isinstance(values, Mapping):
        return {}
    return {key: value for key, value in values.items() if isinstance(key, str) and isinstance(value, str)}


def _limits(requests: Mapping[str, str]) -> dict[str, str]:
    # Extended resources (GPUs) must have limits equal to requests; cpu/memory need none.
    return {name: amount for name, amount in requests.items() if "/" in name}
