"""Kueue plain pod groups: pods that form a group with a label and an annotation.

- label ``kueue.x-k8s.io/pod-group-name`` -> the pod's gang (same namespace);
- annotation ``kueue.x-k8s.io/pod-group-total-count`` (required, as Kueue's webhook requires it)
  -> min_member = total_number = the count: Kueue admits the group whole;
- label ``kueue.x-k8s.io/queue-name`` -> queue (``default``).

Every pod of a group carries the declaration: pods disagreeing on it are refused (``apply.py``).
Kueue does not time a group out: wait_seconds is empty. Nor does it recreate a group's pods
(their creator does): a replacement joins the admitted group and binds at once (match_policy
once-satisfied).
"""

from __future__ import annotations

from . import validate as v
from .spec import GangRef, GangSpec

GROUP_NAME = "kueue.x-k8s.io/pod-group-name"
TOTAL_COUNT = "kueue.x-k8s.io/pod-group-total-count"
QUEUE_NAME = "kueue.x-k8s.io/queue-name"
SOURCE = "kueue"


def pod_gang(
    namespace: str, labels: dict[str, str], annotations: dict[str, str], field: str
) -> GangRef | None:
    if GROUP_NAME not in labels:
        return None
    where = v.join(field, "labels", GROUP_NAME)
    name = v.dns_subdomain(labels[GROUP_NAME], where)
    count_field = v.join(field, "annotations", TOTAL_COUNT)
    if TOTAL_COUNT not in annotations:
        raise v.DeclarationError(count_field, f"a pod of a Kueue pod group needs {TOTAL_COUNT}")
    total = v.member_count(annotations[TOTAL_COUNT], count_field, text_ok=True)
    queue, queue_field = None, ""
    if QUEUE_NAME in labels:
        queue_field = v.join(field, "labels", QUEUE_NAME)
        queue = v.text(labels[QUEUE_NAME], queue_field, max_length=63)
    ref = GangRef(namespace, name, SOURCE, where, queue=queue, queue_field=queue_field)
    ref.spec = GangSpec(
        namespace=namespace,
        name=name,
        min_member=total,
        total_number=total,
        wait_seconds=None,
        queue=queue or "default",
        queue_field=queue_field,
        source_format=SOURCE,
        declaration={
            "labels": {k: labels[k] for k in (GROUP_NAME, QUEUE_NAME) if k in labels},
            "annotations": {TOTAL_COUNT: annotations[TOTAL_COUNT]},
        },
        field=count_field,
    )
    return ref
