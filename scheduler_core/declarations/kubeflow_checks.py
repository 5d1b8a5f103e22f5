"""The training-operator's admission checks (its webhooks, ``pkg/webhooks/``), as ``kubeflow.py``
applies them to the five kinds, and what gangsched refuses because it does not play it: a
suspended job, another manager, an autoscaler resizing the workers. Each refusal names the key.
``kind`` is a ``kubeflow.Kind`` and ``replicas`` its ``Replica``s (not imported: no circle)."""

from __future__ import annotations

from typing import Any

from scheduler_core.validators import INT64_MAX

from . import validate as v

MANAGERS = ("kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue")


def job_name_check(name: str, field: str) -> None:
    """Upstream's webhooks want a DNS-1035 label: the pods' names and services derive from it."""
    if len(name) > 63 or not name[0].isalpha() or "." in name:
        raise v.DeclarationError(
            field,
            f"{name!r} is not a DNS-1035 label (at most 63 characters, starting with a letter, no dots)",
        )


def run_policy_check(run: dict[str, Any], field: str) -> None:
    suspend = run.get("suspend")
    if suspend is not None and not isinstance(suspend, bool):
        raise v.DeclarationError(v.join(field, "suspend"), f"must be true or false, not {v.kind_of(suspend)}")
    if suspend:
        raise v.DeclarationError(
            v.join(field, "suspend"),
            "a suspended job makes no pods and gangsched does not resume it: apply it without suspend",
        )
    manager = run.get("managedBy")
    if manager is not None and v.text(manager, v.join(field, "managedBy")) != MANAGERS[0]:
        raise v.DeclarationError(
            v.join(field, "managedBy"),
            f"{manager!r} is not played here: only {MANAGERS[0]} (the training-operator) is "
            f"(upstream accepts {' or '.join(MANAGERS)})",
        )
    for key in ("activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        if run.get(key) is not None:
            v.integer(run[key], v.join(field, key), minimum=0, maximum=INT64_MAX)


def containers_check(kind: Any, pod: dict[str, Any], field: str) -> None:
    """Upstream's webhook: an image on every container, one of them named as the kind wants."""
    containers = v.sequence(pod.get("containers"), field)
    names = []
    for index, container in enumerate(containers):
        container = v.mapping(container, v.join(field, index), optional=False)
        if not container.get("image"):
            raise v.DeclarationError(v.join(field, index, "image"), "must be given")
        names.append(container.get("name"))
    if containers and kind.container not in names:
        raise v.DeclarationError(
            field,
            f"a {kind.kind} needs a container named {kind.container!r} (the one the operator configures)",
        )


def elastic_check(value: Any, field: str, replicas: list[Any], kind: Any) -> None:
    """min/maxReplicas bound an HPA upstream; the PodGroup ignores them, so do we."""
    if value is None:
        return
    policy = v.mapping(value, field)
    if policy.get("metrics"):
        raise v.DeclarationError(
            v.join(field, "metrics"),
            "gangsched does not resize the workers (upstream's HorizontalPodAutoscaler): remove metrics",
        )
    if kind.kind == "PyTorchJob" and not any(r.name == "Worker" for r in replicas):
        raise v.DeclarationError(
            v.join(field.rpartition(".")[0], kind.specs_key, "Worker"),
            "must be configured if elastic policy is used",
        )
    bounds = {
        key: v.member_count(policy[key], v.join(field, key))
        for key in ("minReplicas", "maxReplicas")
        if policy.get(key) is not None
    }
    if bounds.get("minReplicas", 0) > bounds.get("maxReplicas", bounds.get("minReplicas", 0)):
        raise v.DeclarationError(
            v.join(field, "minReplicas"),
            f"{bounds['minReplicas']} is more than maxReplicas {bounds['maxReplicas']}",
        )
