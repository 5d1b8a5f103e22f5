"""Volcano: the ``PodGroup`` of ``scheduling.volcano.sh/v1beta1``, the ``Job`` (vcjob) of
``batch.volcano.sh/v1alpha1``, and the annotations pods join a PodGroup with.

PodGroup:

- ``spec.minMember`` -> min_member (default 1); ``spec.minResources`` -> min_resources;
  ``spec.queue`` -> queue (``default``); ``spec.priorityClassName`` -> priority;
- ``spec.networkTopology`` -> topology constraint (``topology_keys.py``);
- ``spec.minTaskMember`` (task -> minimum): checked (each >= 1, sum <= minMember) and kept in the
  declaration; the engine enforces minMember (a Job's per-task minAvailable is enforced).

Pods: the annotation ``scheduling.k8s.io/group-name`` names the PodGroup (missing: the pod waits
in a provisional gang, which says so); ``scheduling.volcano.sh/queue-name`` must agree with the
gang's queue. ``volcano.sh/preemptable`` (annotation, else label; Go's ParseBool): on a pod,
Member.preemptible; on a PodGroup or Job, Gang.preemptible; absent: true.

Job (vcjob):

- ``spec.tasks[]`` name / replicas / template -> pods ``<job>-<task>-<i>`` (replicas 1);
- ``spec.minAvailable`` -> min_member (default: all pods);
- ``tasks[].minAvailable`` on any task: one gang ``<job>-<task>`` per task (min = its
  minAvailable, default its replicas), all in the gang group ``<ns>/<job>``; the job's
  minAvailable must then not exceed the tasks' sum;
- ``spec.queue``, ``spec.priorityClassName`` -> queue, priority (of the gang and pods);
- ``spec.networkTopology`` -> each gang's topology constraint (``topology_keys.py``);
- ``spec.maxRetry`` (default 3) -> max_retry: whole-gang restarts before the gang is Failed;
- ``spec.policies`` / ``tasks[].policies`` for ``PodFailed``, ``PodEvicted`` or ``*`` ->
  failure_policy / eviction_policy (RestartJob, AbortJob, TerminateJob; RestartPod and
  RestartTask make the restart policy RestartFailedOnly); other events are not acted on.

On a real cluster Volcano's job controller turns a Job into a PodGroup (owned by the Job) and
pods; gangsched watches those, and carries the Job's ``maxRetry`` and ``policies`` to its PodGroup's
gang through the annotation ``gangsched.io/volcano-job-lifecycle`` (JSON ``{"maxRetry", "policies"}``,
set by the Kubernetes backend's mirror from the owning Job; ``job_lifecycle``), read here with the
same rules as a Job's own.

Volcano's default wait is unbounded (its gang plugin never times a job out): wait_seconds empty.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from scheduler_core.models import RestartPolicy
from scheduler_core.models.gangs import FailureAction

from . import validate as v
from .documents import Manifest
from .pod_fields import preemptable
from .spec import GangRef, GangSpec, Loaded
from .topology_keys import annotations_ask, ask_apply, network_topology_ask, partition_check
from .workloads import PodReader, object_meta, owner_ask, pod_spec, priority_of

GROUP, JOB_GROUP = "scheduling.volcano.sh", "batch.volcano.sh"
GROUP_NAME = "scheduling.k8s.io/group-name"
QUEUE_NAME = "scheduling.volcano.sh/queue-name"
JOB_NAME, TASK_SPEC = "volcano.sh/job-name", "volcano.sh/task-spec"
DEFAULT_MAX_RETRY = 3
JOB_LIFECYCLE = "gangsched.io/volcano-job-lifecycle"
SOURCE, JOB_SOURCE = "volcano-podgroup", "volcano-job"
#: Events that are pod failures in gangsched's lifecycle, and what each action becomes there.
FAILURE_EVENTS = ("PodFailed", "PodEvicted", "*")
_ACTIONS = {action.value for action in FailureAction}
_POD_RESTARTS = ("RestartPod", "RestartTask")


def queue_name(value: Any, field: str) -> str:
    return v.text(value, field, max_length=63)


# ---------------------------------------------------------------- PodGroup


def load_podgroup(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, metadata = object_meta(manifest)
    meta_field = v.join(manifest.path, "metadata")
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field)
    min_member = v.member_count(spec.get("minMember", 1), v.join(spec_field, "minMember"))
    _min_task_member(spec.get("minTaskMember"), v.join(spec_field, "minTaskMember"), min_member)
    labels = v.string_map(metadata.get("labels"), v.join(meta_field, "labels"))
    annotations = v.string_map(metadata.get("annotations"), v.join(meta_field, "annotations"))
    gang = GangSpec(
        namespace=namespace,
        name=name,
        min_member=min_member,
        min_resources=v.resources(spec.get("minResources"), v.join(spec_field, "minResources")),
        queue=queue_name(spec.get("queue", "default"), v.join(spec_field, "queue")),
        queue_field=v.join(spec_field, "queue"),
        priority=priority_of({"priorityClassName": spec["priorityClassName"]}, spec_field)
        if spec.get("priorityClassName")
        else None,
        preemptible=preemptable(labels, annotations, meta_field) is not False,
        source_format=SOURCE,
        declaration=manifest.obj,
        field=manifest.name_field,
        **_job_lifecycle_fields(
            annotations.get(JOB_LIFECYCLE), v.join(meta_field, "annotations", JOB_LIFECYCLE)
        ),
    )
    ask = network_topology_ask(spec.get("networkTopology"), v.join(spec_field, "networkTopology"))
    annotated = annotations_ask(annotations, v.join(meta_field, "annotations"))  # KAI's keys, if any
    if ask is not None and annotated is not None and not ask.same(annotated):
        raise v.DeclarationError(
            annotated.field, f"asks for {annotated.shown()} but {ask.field} asks for {ask.shown()}"
        )
    ask_apply(gang, ask or annotated)
    for index, policy in enumerate(
        v.sequence(spec.get("subGroupPolicy"), v.join(spec_field, "subGroupPolicy"))
    ):
        partition_check(policy, v.join(spec_field, "subGroupPolicy", index))
    return Loaded(object_name=f"podgroup.{GROUP}/{name}", gangs=[gang])


def job_lifecycle(job: dict[str, Any]) -> str:
    """The annotation value that carries a Job's restart behaviour to its PodGroup's gang."""
    spec = job.get("spec") or {}
    return json.dumps(
        {"maxRetry": spec.get("maxRetry", DEFAULT_MAX_RETRY), "policies": spec.get("policies") or []},
        sort_keys=True,
    )


def _job_lifecycle_fields(value: str | None, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    try:
        lifecycle = json.loads(value)
    except ValueError:
        raise v.DeclarationError(field, "is not JSON") from None
    lifecycle = v.mapping(lifecycle, field, optional=False)
    max_retry = v.integer(
        lifecycle.get("maxRetry", DEFAULT_MAX_RETRY), v.join(field, "maxRetry"), minimum=0, maximum=1000
    )
    return {
        "max_retry": max_retry,
        **_lifecycle(_policies(lifecycle.get("policies"), v.join(field, "policies"))),
    }


def _min_task_member(value: Any, field: str, min_member: int) -> None:
    total = 0
    for task, minimum in v.mapping(value, field).items():
        total += v.member_count(minimum, v.join(field, str(task)))
    if total > min_member:
        raise v.DeclarationError(
            field, f"the tasks' minimums add up to {total}, more than minMember {min_member}"
        )


def pod_gang(
    namespace: str, labels: dict[str, str], annotations: dict[str, str], field: str
) -> GangRef | None:
    if GROUP_NAME not in annotations:
        return None
    where = v.join(field, "annotations", GROUP_NAME)
    ref = GangRef(namespace, v.dns_subdomain(annotations[GROUP_NAME], where), SOURCE, where)
    if QUEUE_NAME in annotations:
        ref.queue_field = v.join(field, "annotations", QUEUE_NAME)
        ref.queue = queue_name(annotations[QUEUE_NAME], ref.queue_field)
    ref.waiting = f"waiting for PodGroup {ref.key} ({GROUP}) to be created"
    return ref


# ---------------------------------------------------------------- Job


def load_job(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, metadata = object_meta(manifest)
    meta_field = v.join(manifest.path, "metadata")
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    priority = (
        priority_of({"priorityClassName": spec["priorityClassName"]}, spec_field)
        if spec.get("priorityClassName")
        else None
    )
    queue = queue_name(spec.get("queue", "default"), v.join(spec_field, "queue"))
    max_retry = v.integer(
        spec.get("maxRetry", DEFAULT_MAX_RETRY), v.join(spec_field, "maxRetry"), minimum=0, maximum=1000
    )
    job_policies = _policies(spec.get("policies"), v.join(spec_field, "policies"))
    labels = v.string_map(metadata.get("labels"), v.join(meta_field, "labels"))
    annotations = v.string_map(metadata.get("annotations"), v.join(meta_field, "annotations"))
    preemptible = preemptable(labels, annotations, meta_field) is not False
    tasks_field = v.join(spec_field, "tasks")
    tasks = v.sequence(spec.get("tasks"), tasks_field)
    if not tasks:
        raise v.DeclarationError(tasks_field, "a Volcano Job needs at least one task")
    per_task = any(isinstance(t, dict) and t.get("minAvailable") is not None for t in tasks)
    pods, gangs, seen, task_minimums = [], [], set(), 0
    for index, task in enumerate(tasks):
        where = v.join(tasks_field, index)
        task = v.mapping(task, where, optional=False)
        partition_check(task.get("partitionPolicy"), v.join(where, "partitionPolicy"))
        task_name = v.dns_label(task.get("name"), v.join(where, "name"))
        if task_name in seen:
            raise v.DeclarationError(v.join(where, "name"), f"task {task_name!r} is declared twice")
        seen.add(task_name)
        replicas = v.member_count(task.get("replicas", 1), v.join(where, "replicas"), minimum=0)
        minimum = replicas
        if task.get("minAvailable") is not None:
            minimum = v.member_count(task["minAvailable"], v.join(where, "minAvailable"), minimum=0)
            if minimum > replicas:
                raise v.DeclarationError(
                    v.join(where, "minAvailable"), f"{minimum} is more than the task's {replicas} replicas"
                )
        task_minimums += minimum
        policies = {**job_policies, **_policies(task.get("policies"), v.join(where, "policies"))}
        if not per_task and policies != job_policies:
            raise v.DeclarationError(
                v.join(where, "policies"),
                "task policies differ from the job's: gangsched applies policies per gang; "
                "give the task a minAvailable to make it a gang of its own",
            )
        gang_name = f"{name}-{task_name}" if per_task else name
        ref = GangRef(namespace, v.dns_subdomain(gang_name, v.join(where, "name")), JOB_SOURCE, where)
        pods.extend(
            _task_pods(namespace, name, task_name, task, where, replicas, priority, readers, ref, manifest)
        )
        if len(pods) > v.limit("GANGSCHED_MAX_GANG_MEMBERS", v.MAX_GANG_MEMBERS):
            raise v.DeclarationError(tasks_field, "too many pods in one Volcano Job")
        if per_task and replicas:
            gangs.append(
                _job_gang(namespace, gang_name, max(minimum, 1), replicas, policies, manifest, where)
            )
    total = len(pods)
    if not total:
        raise v.DeclarationError(tasks_field, "a Volcano Job needs at least one replica")
    min_field = v.join(spec_field, "minAvailable")
    min_available = spec.get("minAvailable")
    if not per_task:
        min_member = v.min_available(min_available, min_field, total)
        gangs.append(
            _job_gang(namespace, name, min_member, total, job_policies, manifest, manifest.name_field)
        )
    elif min_available is not None and v.member_count(min_available, min_field) > task_minimums:
        raise v.DeclarationError(
            min_field,
            f"{min_available} is more than the tasks' minAvailable add up to ({task_minimums}): "
            "with per-task minimums each task is a gang of its own, and the job's quorum is their sum",
        )
    owner_ask(manifest, pods)  # KAI's topology annotations on the vcjob, its pods' top owner
    keys = sorted(gang.key for gang in gangs)
    ask = network_topology_ask(spec.get("networkTopology"), v.join(spec_field, "networkTopology"))
    for gang in gangs:
        ask_apply(gang, ask)  # per-task gangs: each kept in one domain (a group may span domains)
        gang.queue, gang.priority, gang.max_retry, gang.preemptible = queue, priority, max_retry, preemptible
        gang.queue_field = v.join(spec_field, "queue")
        if per_task:
            gang.group, gang.group_key = keys, f"{namespace}/{name}"
    return Loaded(object_name=f"job.{JOB_GROUP}/{name}", gangs=gangs, pods=pods)


def _task_pods(namespace, job, task_name, task, where, replicas, priority, readers, ref, manifest):
    template_field = v.join(where, "template")
    template = v.mapping(task.get("template"), template_field, optional=False)
    metadata = dict(v.mapping(template.get("metadata"), v.join(template_field, "metadata")))
    # What Volcano's job controller adds to each pod it creates.
    annotations = v.string_map(metadata.get("annotations"), v.join(template_field, "metadata", "annotations"))
    metadata["annotations"] = {**annotations, JOB_NAME: job, TASK_SPEC: task_name, GROUP_NAME: ref.name}
    pod = dict(v.mapping(template.get("spec"), v.join(template_field, "spec"), optional=False))
    if priority is not None and "priority" not in pod and "priorityClassName" not in pod:
        pod["priority"] = priority
    return [
        pod_spec(
            namespace=namespace,
            name=f"{job}-{task_name}-{replica}",
            metadata=metadata,
            spec=pod,
            field=template_field,
            readers=readers,
            name_field=v.join(manifest.path, "metadata", "name"),
            gang=ref,
        )
        for replica in range(replicas)
    ]


def _lifecycle(policies: dict[str, str]) -> dict[str, str]:
    """Gang fields from {event: action}: RestartPod/RestartTask replace only the failed pods."""
    failed, evicted = policies.get("PodFailed", ""), policies.get("PodEvicted", "")
    restart = RestartPolicy.RESTART_GANG_WHEN_BELOW_MIN.value
    if failed in _POD_RESTARTS or evicted in _POD_RESTARTS:
        restart = RestartPolicy.RESTART_FAILED_ONLY.value
    return {
        "restart_policy": restart,
        "failure_policy": failed if failed in _ACTIONS else "",
        "eviction_policy": evicted if evicted in _ACTIONS else "",
    }


def _job_gang(namespace, name, min_member, total, policies, manifest, field) -> GangSpec:
    return GangSpec(
        namespace=namespace,
        name=name,
        min_member=min_member,
        total_number=total,
        wait_seconds=None,
        source_format=JOB_SOURCE,
        declaration=manifest.obj,
        field=field,
        **_lifecycle(policies),
    )


def _policies(value: Any, field: str) -> dict[str, str]:
    """{event: action} for the failure events; other events (TaskCompleted -> CompleteJob...) are
    kept in the declaration but not acted on. ``*`` applies to both, unless an event is named."""
    named: dict[str, str] = {}
    star = ""
    for index, policy in enumerate(v.sequence(value, field)):
        where = v.join(field, index)
        policy = v.mapping(policy, where, optional=False)
        events = v.sequence(policy.get("events"), v.join(where, "events"))
        if policy.get("event") is not None:
            events = [policy["event"], *events]
        if not events:
            if policy.get("exitCode") is not None:
                raise v.DeclarationError(v.join(where, "exitCode"), "exit-code policies are not supported")
            raise v.DeclarationError(where, "a policy needs an event (or events)")
        action = v.text(policy.get("action"), v.join(where, "action"), max_length=32)
        for event in events:
            if event not in FAILURE_EVENTS:
                continue
            if action not in _ACTIONS and action not in _POD_RESTARTS:
                allowed = ", ".join(sorted([*_ACTIONS, *_POD_RESTARTS]))
                raise v.DeclarationError(
                    v.join(where, "action"), f"{action!r} on {event} is not supported (supported: {allowed})"
                )
            if event == "*":
                star = action
            elif named.setdefault(event, action) != action:
                raise v.DeclarationError(
                    v.join(where, "action"), f"{event} is given two actions: {named[event]} and {action}"
                )
    return {event: named.get(event, star) for event in ("PodFailed", "PodEvicted") if named.get(event, star)}
