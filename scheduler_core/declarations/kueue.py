"""Kueue's workloads: plain pod groups, and the ``batch/v1`` Jobs Kueue manages.

Plain pod groups, pods that form a group with a label and an annotation:

- label ``kueue.x-k8s.io/pod-group-name`` -> the pod's gang (same namespace);
- annotation ``kueue.x-k8s.io/pod-group-total-count`` (required, as Kueue's webhook requires it)
  -> min_member = total_number = the count: Kueue admits the group whole;
- label ``kueue.x-k8s.io/queue-name`` -> queue (``default``);
- label ``kueue.x-k8s.io/priority-class`` -> priority: the WorkloadPriorityClass's value
  (``kueue_priority.py``), as Kueue gives the group's workload; without it, the highest of the
  pods' priorities.

Every pod of a group carries the declaration: pods disagreeing on it are refused (``apply.py``).
Kueue does not time a group out: wait_seconds is empty. Nor does it recreate a group's pods
(their creator does): a replacement joins the admitted group and binds at once (match_policy
once-satisfied).

A ``batch/v1`` Job is Kueue's when it carries the label ``kueue.x-k8s.io/queue-name`` (Kueue 0.14
and earlier also read the annotation of that name when the label is absent; both, disagreeing:
refused). Kueue admits it as one workload of one pod set (``pkg/controller/jobs/job``,
``PodSets``), so it is one gang named as the Job, in ``job_gang``:

- its pods: ``min(parallelism, completions)`` (``podsCount``; parallelism defaults to 1);
- min_member = that count, or the annotation ``kueue.x-k8s.io/job-min-parallelism`` (partial
  admission: Kueue's webhook wants an integer from 1 to the count - 1); total_number = the count;
- queue: the LocalQueue the label names (resolved to its ClusterQueue like any queue name);
- priority: the value of the WorkloadPriorityClass the Job's label ``kueue.x-k8s.io/priority-class``
  names (``kueue_priority.py``), else the template's ``priority`` / ``priorityClassName``
  (``workloads.load_job``), as Kueue's ``ExtractPriority`` orders them; the pods keep their own;
- topology: the template's ``podset-*-topology`` annotations (``topology_keys.py``);
- no timeout; once admitted, the Job controller replaces a failed pod and the workload stays
  admitted: restart policy RestartFailedOnly, match policy once-satisfied.

A Job without the label is the plain Job it was (``workloads.load_job``).

A Kubeflow training job or an MPIJob with the label is Kueue's too (``managed_queue``): Kueue
admits it whole, every replica's pods (its kubeflow and mpijob integrations, ``PodSets``), in the
LocalQueue the label names, at the priority of the WorkloadPriorityClass its label names, if any
(``workload_priority``). The ``runPolicy.schedulingPolicy`` keys that Kueue's admission replaces,
``minAvailable`` and ``queue`` (what Volcano and scheduler-plugins read), contradict it and are
refused naming them.
"""

from __future__ import annotations

from typing import Any

from scheduler_core.models import RestartPolicy

from . import validate as v
from .documents import Manifest
from .kueue_priority import LABEL as WORKLOAD_PRIORITY_CLASS
from .kueue_priority import label_priority
from .spec import GangRef, GangSpec

GROUP_NAME = "kueue.x-k8s.io/pod-group-name"
TOTAL_COUNT = "kueue.x-k8s.io/pod-group-total-count"
QUEUE_NAME = "kueue.x-k8s.io/queue-name"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
SOURCE, JOB_SOURCE = "kueue", "kueue-job"
#: The labels of a pod group's declaration, which every pod of the group must agree on.
DECLARING_LABELS = (GROUP_NAME, QUEUE_NAME, WORKLOAD_PRIORITY_CLASS)


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
        priority=label_priority(labels, v.join(field, "labels"), None),
        queue=queue or "default",
        queue_field=queue_field,
        source_format=SOURCE,
        declaration={
            "labels": {k: labels[k] for k in DECLARING_LABELS if k in labels},
            "annotations": {TOTAL_COUNT: annotations[TOTAL_COUNT]},
        },
        field=count_field,
    )
    return ref


# ---------------------------------------------------------------- batch/v1 Job


def job_queue(metadata: dict[str, Any], field: str) -> tuple[str, str] | None:
    """The LocalQueue a Job's own metadata names and the key naming it; None: not Kueue's."""
    found = []
    for kind in ("labels", "annotations"):  # the label; the annotation in Kueue 0.14 and earlier
        values = v.string_map(metadata.get(kind), v.join(field, kind))
        if QUEUE_NAME in values:
            where = v.join(field, kind, QUEUE_NAME)
            found.append((v.text(values[QUEUE_NAME], where, max_length=63), where))
    if len(found) == 2 and found[0][0] != found[1][0]:
        raise v.DeclarationError(
            found[1][1], f"names queue {found[1][0]!r} but {found[0][1]} names {found[0][0]!r}"
        )
    return found[0] if found else None


def workload_priority(metadata: dict[str, Any], meta_field: str, otherwise: int | None) -> int | None:
    """The gang's priority as Kueue gives its workload one: the WorkloadPriorityClass the
    workload's label names, else ``otherwise`` (its pods' PriorityClass); ``kueue_priority.py``."""
    labels_field = v.join(meta_field, "labels")
    return label_priority(v.string_map(metadata.get("labels"), labels_field), labels_field, otherwise)


def managed_queue(
    metadata: dict[str, Any], meta_field: str, policy: dict[str, Any], policy_field: str, kind: str
) -> tuple[str, str] | None:
    """The LocalQueue of a Kubeflow job or MPIJob Kueue manages and the key naming it (its
    ``queue-name`` label); None: not Kueue's. See the module docstring."""
    queue = job_queue(metadata, meta_field)
    if queue is None:
        return None
    for key in ("minAvailable", "queue"):
        if policy.get(key) is not None:
            raise v.DeclarationError(
                v.join(policy_field, key),
                f"the {kind} is Kueue's ({queue[1]}), which admits all its pods in that LocalQueue: "
                f"remove {key}, or the label for Volcano's or scheduler-plugins' gang",
            )
    return queue


def job_gang(manifest: Manifest, namespace: str, name: str, metadata: dict[str, Any]) -> GangSpec | None:
    """The gang of a Job Kueue manages, None for a plain Job."""
    meta_field, spec_field = v.join(manifest.path, "metadata"), v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    queue = job_queue(metadata, meta_field)
    if queue is None:
        return None
    parallelism = v.member_count(spec.get("parallelism", 1), v.join(spec_field, "parallelism"), minimum=0)
    count = parallelism
    if spec.get("completions") is not None:
        count = min(count, v.member_count(spec["completions"], v.join(spec_field, "completions"), minimum=0))
    if count == 0:
        raise v.DeclarationError(
            v.join(spec_field, "parallelism"),
            "a Job Kueue manages is admitted as one gang, which needs at least one pod: "
            "parallelism and completions must be at least 1",
        )
    minimum = count
    annotations = v.string_map(metadata.get("annotations"), v.join(meta_field, "annotations"))
    if MIN_PARALLELISM in annotations:
        where = v.join(meta_field, "annotations", MIN_PARALLELISM)
        minimum = v.integer(annotations[MIN_PARALLELISM], where, minimum=0, maximum=2**31 - 1, text_ok=True)
        if not 0 < minimum < count:
            raise v.DeclarationError(
                where,
                f"{minimum} must be at least 1 and less than the Job's {count} pods (partial admission)",
            )
    return GangSpec(
        namespace=namespace,
        name=name,
        min_member=minimum,
        total_number=count,
        wait_seconds=None,
        queue=queue[0],
        queue_field=queue[1],
        restart_policy=RestartPolicy.RESTART_FAILED_ONLY.value,
        source_format=JOB_SOURCE,
        declaration=manifest.obj,
        field=manifest.name_field,
    )
