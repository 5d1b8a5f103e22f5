"""Kubeflow's training jobs (``kubeflow.org/v1``): PyTorchJob, TFJob, XGBoostJob, PaddleJob and
JAXJob, as the training-operator (release 1.9) plays them with gang scheduling on.

The five kinds share one shape: ``spec.<kind>ReplicaSpecs`` (``pytorchReplicaSpecs``,
``tfReplicaSpecs``, ``xgbReplicaSpecs``, ``paddleReplicaSpecs``, ``jaxReplicaSpecs``) maps a
replica type (Master, Worker, PS, Chief, Evaluator...) to ``replicas`` (default 1),
``restartPolicy`` and a pod ``template``; ``spec.runPolicy`` holds the job's policies.

Pods, as ``pkg/controller.v1/common/pod.go`` (``createNewPod``) makes them: one per replica,
named ``<job>-<replica type lowercase>-<index>`` (``GenGeneralName``), with the template's
labels plus ``training.kubeflow.org/operator-name`` (the kind's controller),
``training.kubeflow.org/job-name``, ``training.kubeflow.org/replica-type`` (lowercase),
``training.kubeflow.org/replica-index`` and, on the master (``IsMasterRole``: PyTorch the
Master, else worker 0; TF a Chief or Master, else worker 0; XGBoost and Paddle the Master; JAX
index 0), ``training.kubeflow.org/job-role: master``; and, as scheduler-plugins' control
decorates them (``DecoratePodTemplateSpec``), the label ``scheduling.x-k8s.io/pod-group``
naming the job. Replica type keys are matched whatever their case, as upstream's defaulting
does (``worker`` is Worker). The webhooks' checks are kept (``kubeflow_checks.py``): each
kind's replica types (TFJob takes any), a container named as the kind wants it (``pytorch``,
``tensorflow``...), an image on each container, PyTorch and XGBoost's Master with exactly 1
replica, XGBoost's Master present, at most one TF Chief or Master.

The gang, as ``pkg/controller.v1/common/job.go`` (``ReconcileJobs``) fills its PodGroup: named
as the job, min_member ``runPolicy.schedulingPolicy.minAvailable`` (default: every replica),
total_number every replica, queue ``schedulingPolicy.queue`` (``default``), priority from
``schedulingPolicy.priorityClass``, wait_seconds ``schedulingPolicy.scheduleTimeoutSeconds``
(default none: Volcano's PodGroup has no timeout), min_resources ``schedulingPolicy.minResources``
(default as ``CalcPGMinResources``: the containers' requests, or their limits where a container
has no requests, of the first min_member pods, replica types of higher priority first).

Restart: a replica type restarted ``OnFailure``, ``Always`` or ``ExitCode`` has its failed pod
replaced (RestartFailedOnly: gangsched has no exit codes, each failure counts as retryable);
``Never`` on any replica type fails the job when a pod fails (restart policy Never). The default
is the kind's (PyTorch and Paddle OnFailure, the others Never).

Not played, refused naming the key: ``runPolicy.suspend: true`` (no pods until resumed),
``runPolicy.managedBy`` other than the training-operator, an ``elasticPolicy.metrics`` (an HPA
resizing the workers). Kueue's ``kueue.x-k8s.io/queue-name`` label makes the job Kueue's
(``kueue.managed_queue``): all its pods in that LocalQueue, at the priority of the
WorkloadPriorityClass its ``kueue.x-k8s.io/priority-class`` label names, if any (before
``schedulingPolicy.priorityClass``, as Kueue orders them). ``elasticPolicy`` min/maxReplicas
are checked (min <= max, a Worker present) and change nothing here: upstream's PodGroup does not
read them either. Kept in the declaration, not acted on: ``cleanPodPolicy``,
``ttlSecondsAfterFinished``, ``activeDeadlineSeconds``, ``backoffLimit``, ``nprocPerNode``, TF's
``successPolicy``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler_core.models import RestartPolicy

from . import kubeflow_checks as checks
from . import validate as v
from .cluster import priority_resolve
from .documents import Manifest
from .kueue import managed_queue, workload_priority
from .spec import GangRef, GangSpec, Loaded, PodSpec
from .workloads import PodReader, object_meta, owner_ask, pod_spec

API_VERSION = "kubeflow.org/v1"
LABEL = "training.kubeflow.org/"
OPERATOR_NAME, JOB_NAME = f"{LABEL}operator-name", f"{LABEL}job-name"
REPLICA_TYPE, REPLICA_INDEX, JOB_ROLE = f"{LABEL}replica-type", f"{LABEL}replica-index", f"{LABEL}job-role"
POD_GROUP = "scheduling.x-k8s.io/pod-group"
RESTART_POLICIES = ("Always", "OnFailure", "Never", "ExitCode")


@dataclass(frozen=True)
class Kind:
    """What differs between the five kinds (``pkg/apis/kubeflow.org/v1/*_types.go``)."""

    kind: str
    specs_key: str
    types: tuple[str, ...]
    any_type: bool  # TFJob's webhook accepts any replica type
    container: str  # the container upstream's webhook requires by name
    restart: str  # the default restartPolicy
    controller: str  # operator-name label
    single_master: bool = False  # Master must have exactly 1 replica
    master_required: bool = False
    elastic: bool = False

    @property
    def source(self) -> str:
        return self.kind.lower()


KINDS = {
    kind.kind: kind
    for kind in (
        Kind(
            "PyTorchJob", "pytorchReplicaSpecs", ("Master", "Worker"), False, "pytorch", "OnFailure",
            "pytorchjob-controller", single_master=True, elastic=True,
        ),
        Kind(
            "TFJob", "tfReplicaSpecs", ("Chief", "Master", "PS", "Worker", "Evaluator"), True,
            "tensorflow", "Never", "tfjob-controller",
        ),
        Kind(
            "XGBoostJob", "xgbReplicaSpecs", ("Master", "Worker"), False, "xgboost", "Never",
            "xgboostjob-controller", single_master=True, master_required=True,
        ),
        Kind(
            "PaddleJob", "paddleReplicaSpecs", ("Master", "Worker"), False, "paddle", "OnFailure",
            "paddlejob-controller", elastic=True,
        ),
        Kind("JAXJob", "jaxReplicaSpecs", ("Worker",), False, "jax", "Never", "jaxjob-controller"),
    )
}  # fmt: skip


@dataclass
class Replica:
    """One replica type, validated: its canonical name, count, restart policy and template."""

    name: str
    field: str
    replicas: int
    restart: str
    metadata: dict[str, Any]
    spec: dict[str, Any]
    template_field: str


def load(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    kind = KINDS[manifest.kind]
    namespace, name, metadata = object_meta(manifest)
    checks.job_name_check(name, manifest.name_field)
    meta_field, spec_field = v.join(manifest.path, "metadata"), v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    run_field = v.join(spec_field, "runPolicy")
    run = v.mapping(spec.get("runPolicy"), run_field)
    checks.run_policy_check(run, run_field)
    replicas = _replicas(kind, spec, v.join(spec_field, kind.specs_key))
    if kind.elastic:
        checks.elastic_check(spec.get("elasticPolicy"), v.join(spec_field, "elasticPolicy"), replicas, kind)
    total = sum(replica.replicas for replica in replicas)
    if total > v.limit("GANGSCHED_MAX_GANG_MEMBERS", v.MAX_GANG_MEMBERS):
        raise v.DeclarationError(v.join(spec_field, kind.specs_key), f"too many pods in one {kind.kind}")
    if not total:
        raise v.DeclarationError(
            v.join(spec_field, kind.specs_key), f"a {kind.kind} needs at least one replica"
        )
    gang = _gang(kind, namespace, name, total, run, run_field, manifest, metadata, meta_field)
    ref = GangRef(
        namespace, name, kind.source, manifest.name_field, queue=gang.queue, queue_field=gang.queue_field
    )
    pods, by_replica = [], []
    for replica in replicas:
        made = _replica_pods(kind, name, namespace, replica, replicas, ref, readers, manifest)
        pods.extend(made)
        by_replica.append((replica, made))
    if "minResources" not in v.mapping(run.get("schedulingPolicy"), v.join(run_field, "schedulingPolicy")):
        gang.min_resources = _min_resources(gang.min_member, by_replica)
    owner_ask(manifest, pods)  # KAI's topology annotations on the job, its pods' top owner
    gang.restart_policy = _restart_policy(replicas)
    return Loaded(object_name=f"{kind.source}.kubeflow.org/{name}", gangs=[gang], pods=pods)


def _replicas(kind: Kind, spec: dict[str, Any], field: str) -> list[Replica]:
    """The replica types in the kind's order (then any other TF type as written), keys matched
    whatever their case as upstream's defaulting renames them."""
    given = v.mapping(spec.get(kind.specs_key), field)
    if not given:
        raise v.DeclarationError(
            field, f"a {kind.kind} needs at least one replica type ({', '.join(kind.types)})"
        )
    canonical = {t.lower(): t for t in kind.types}
    named: dict[str, tuple[str, Any]] = {}
    for key, value in given.items():
        where = v.join(field, str(key))
        if not isinstance(key, str) or not key:
            raise v.DeclarationError(where, "a replica type must be a non-empty string")
        name = canonical.get(key.lower(), key)
        if name not in kind.types and not kind.any_type:
            raise v.DeclarationError(
                where, f"{key!r} is not a replica type of {kind.kind}: use {', '.join(kind.types)}"
            )
        if name in named:
            raise v.DeclarationError(
                where, f"replica type {name} is declared twice ({named[name][0]!r} and {key!r})"
            )
        named[name] = (key, value)
    order = [t for t in kind.types if t in named] + [t for t in named if t not in kind.types]
    replicas = [_replica(kind, t, v.join(field, named[t][0]), named[t][1]) for t in order]
    if kind.master_required and "Master" not in named:
        raise v.DeclarationError(v.join(field, "Master"), f"a {kind.kind} needs a Master")
    if kind.kind == "TFJob" and "Chief" in named and "Master" in named:
        raise v.DeclarationError(field, "must not have more than 1 Chief or Master role")
    return replicas


def _replica(kind: Kind, name: str, field: str, value: Any) -> Replica:
    replica = v.mapping(value, field, optional=False)
    count_field = v.join(field, "replicas")
    count = v.member_count(replica.get("replicas", 1), count_field, minimum=0)
    if kind.single_master and name == "Master" and count != 1:
        raise v.DeclarationError(count_field, "must be 1: a job has one Master")
    if kind.kind == "PyTorchJob" and name != "Master" and count < 1:
        raise v.DeclarationError(count_field, "must be at least 1")
    restart = replica.get("restartPolicy", kind.restart)
    if restart not in RESTART_POLICIES:
        raise v.DeclarationError(
            v.join(field, "restartPolicy"), f"{v.shown(restart)} is not one of {', '.join(RESTART_POLICIES)}"
        )
    template_field = v.join(field, "template")
    template = v.mapping(replica.get("template"), template_field, optional=False)
    metadata = v.mapping(template.get("metadata"), v.join(template_field, "metadata"))
    pod = v.mapping(template.get("spec"), v.join(template_field, "spec"), optional=False)
    checks.containers_check(kind, pod, v.join(template_field, "spec", "containers"))
    return Replica(name, field, count, restart, metadata, pod, template_field)


def _gang(kind, namespace, name, total, run, run_field, manifest, metadata, meta_field) -> GangSpec:
    field = v.join(run_field, "schedulingPolicy")
    policy = v.mapping(run.get("schedulingPolicy"), field)
    kueue = managed_queue(metadata, meta_field, policy, field, kind.kind)
    min_member = v.min_available(policy.get("minAvailable"), v.join(field, "minAvailable"), total)
    queue, queue_field = (
        policy.get("queue") or "default",
        v.join(field, "queue") if policy.get("queue") else "",
    )
    priority = (
        priority_resolve(policy["priorityClass"], v.join(field, "priorityClass"))
        if policy.get("priorityClass")
        else None
    )
    if kueue is not None:  # Kueue's workload: its WorkloadPriorityClass first
        queue, queue_field = kueue
        priority = workload_priority(metadata, meta_field, priority)
    timeout = policy.get("scheduleTimeoutSeconds")
    return GangSpec(
        namespace=namespace,
        name=name,
        min_member=min_member,
        total_number=total,
        min_resources=v.resources(policy.get("minResources"), v.join(field, "minResources")),
        queue=v.text(queue, queue_field or v.join(field, "queue"), max_length=63),
        queue_field=queue_field,
        priority=priority,
        wait_seconds=None
        if timeout is None
        else v.wait_seconds(timeout, v.join(field, "scheduleTimeoutSeconds")),
        source_format=kind.source,
        declaration=manifest.obj,
        field=manifest.name_field,
    )


def _replica_pods(kind, job, namespace, replica, replicas, ref, readers, manifest) -> list[PodSpec]:
    labels = v.string_map(
        replica.metadata.get("labels"), v.join(replica.template_field, "metadata", "labels")
    )
    pods = []
    for index in range(replica.replicas):
        own = {
            OPERATOR_NAME: kind.controller,
            JOB_NAME: job,
            REPLICA_TYPE: replica.name.lower(),
            REPLICA_INDEX: str(index),
            POD_GROUP: job,
        }
        if _is_master(kind, replicas, replica.name, index):
            own[JOB_ROLE] = "master"
        pods.append(
            pod_spec(
                namespace=namespace,
                name=f"{job}-{replica.name.lower()}-{index}",
                metadata={**replica.metadata, "labels": {**labels, **own}},
                spec=replica.spec,
                field=replica.template_field,
                readers=readers,
                name_field=manifest.name_field,
                gang=ref,
            )
        )
    return pods


def _is_master(kind: Kind, replicas: list[Replica], name: str, index: int) -> bool:
    """Each controller's ``IsMasterRole``."""
    types = {replica.name for replica in replicas}
    if kind.kind == "PyTorchJob":
        return name == "Master" if "Master" in types else (name == "Worker" and index == 0)
    if kind.kind == "TFJob":
        if types & {"Chief", "Master"}:
            return name in ("Chief", "Master")
        return name == "Worker" and index == 0
    if kind.kind == "JAXJob":
        return index == 0
    return name == "Master"


def _min_resources(min_member: int, by_replica: list[tuple[Replica, list[PodSpec]]]) -> dict[str, int]:
    """``CalcPGMinResources``: the first min_member pods, replica types by priority (highest
    first), each container's requests (its limits when it has no requests at all)."""
    ordered = sorted(by_replica, key=lambda item: -(item[1][0].priority if item[1] else 0))
    total: dict[str, int] = {}
    counted = 0
    for replica, pods in ordered:
        containers = v.sequence(
            replica.spec.get("containers"), v.join(replica.template_field, "spec", "containers")
        )
        for _ in pods:
            if counted >= min_member:
                return total
            counted += 1
            for container in containers:
                resources = container.get("resources") or {}
                if not isinstance(resources, dict):
                    continue
                amounts = (
                    resources.get("requests")
                    if resources.get("requests") is not None
                    else resources.get("limits")
                )
                for resource, amount in v.resources(amounts, replica.template_field).items():
                    total[resource] = total.get(resource, 0) + amount
    return total


def _restart_policy(replicas: list[Replica]) -> str:
    if any(replica.restart == "Never" for replica in replicas):
        return RestartPolicy.NEVER.value
    return RestartPolicy.RESTART_FAILED_ONLY.value
