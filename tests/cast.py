"""Builders the API and page tests share (their users are fixtures in tests/conftest.py)."""

import json

from scheduler_core.models import Gang
from scheduler_core.services.submit import gang_submit


def make_gang(namespace="ml", name="train", *, submitter="alice", pods=2, min_member=None, **fields) -> Gang:
    return gang_submit(
        namespace=namespace,
        name=name,
        min_member=min_member or pods,
        pods=[{"name": f"{name}-{i}", "requests": {"cpu": "1", "memory": "1Gi"}} for i in range(pods)],
        submitter=submitter,
        **fields,
    )


def pod_manifest(name, namespace="ns", labels=None, annotations=None, scheduler="gangsched", requests=None):
    """A Pod manifest as a user applies it (one container requesting ``requests``, 1 CPU by default)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels or {},
            "annotations": annotations or {},
        },
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "i", "resources": {"requests": requests or {"cpu": "1"}}}],
        },
    }


def yunikorn_pod(
    name: str,
    *,
    app: str,
    groups: list[dict] | None = None,
    group: str | None = None,
    policy: str = "",
    requests: dict | None = None,
) -> dict:
    """A Pod of YuniKorn application ``app``: carrying the task groups' definition (``groups``),
    in a task group (``group``), both, or neither; ``policy`` is its schedulingPolicyParameters."""
    annotations = {}
    if groups is not None:
        annotations["yunikorn.apache.org/task-groups"] = json.dumps(groups)
    if group is not None:
        annotations["yunikorn.apache.org/task-group-name"] = group
    if policy:
        annotations["yunikorn.apache.org/schedulingPolicyParameters"] = policy
    return pod_manifest(name, labels={"applicationId": app}, annotations=annotations, requests=requests)
