"""Kubeflow's MPIJob (``kubeflow.org/v2beta1``): the pods the mpi-operator makes, and its gang.

The mpi-operator (``pkg/controller/mpi_job_controller.go``) makes, from ``spec.mpiReplicaSpecs``:

- the launcher: a Job ``<job>-launcher`` of one pod, whose hostname is ``<job>-launcher``; upstream
  the pod's name takes the Job controller's random suffix, gangsched names it ``<job>-launcher``;
- ``Worker.replicas`` worker pods ``<job>-worker-<i>`` (``workerName``);
- each with the template's labels plus ``training.kubeflow.org/operator-name: mpi-operator``,
  ``training.kubeflow.org/job-name``, ``training.kubeflow.org/job-role`` (``launcher`` /
  ``worker``) and, on workers, ``training.kubeflow.org/replica-index`` (``i``; ``i + 1`` with
  ``runLauncherAsWorker``, when the launcher is index ``0``).

With gang scheduling on, the operator makes one PodGroup named as the job (``podgroup.go``) and
points every pod's ``schedulerName`` at the gang scheduler (``decoratePodTemplateSpec``: the
template's own is overwritten): here, one gang named as the job, ``source`` ``mpijob``:

- min_member: ``runPolicy.schedulingPolicy.minAvailable``, else workers + 1 (the launcher counts,
  with or without ``runLauncherAsWorker``: ``calculateMinAvailable``); total_number: all pods;
- min_resources: ``schedulingPolicy.minResources``, else the launcher's and the workers'
  containers (requests, limits standing in) for min_member pods, the lower-priority replica type
  (the workers, at equal priority) cut to min_member - 1 (``calPGMinResource``);
- queue: ``schedulingPolicy.queue``, else the job's annotation ``scheduling.volcano.sh/queue-name``
  (Volcano's integration), else ``default``; with Kueue's ``kueue.x-k8s.io/queue-name`` label the
  job is Kueue's (``kueue.managed_queue``): that LocalQueue, all its pods;
- priority: ``schedulingPolicy.priorityClass``, else the launcher template's, else the workers'
  ``priorityClassName`` (``calculatePriorityClassName``); each pod keeps its template's own;
  Kueue's MPIJob: the WorkloadPriorityClass its label names first (``kueue.workload_priority``);
- wait_seconds: ``schedulingPolicy.scheduleTimeoutSeconds``; unset or 0, scheduler-plugins'
  default Permit wait, 60 s (the key is the scheduler-plugins integration's), none for Kueue's;
- match policy waiting-and-running, as a scheduler-plugins PodGroup's (``podgroup.py``).

Checked as the operator's validation does (``pkg/apis/kubeflow/validation``): a Launcher of one
replica, Worker replicas of at least 1, restart policies ``Never`` or ``OnFailure``, the
``cleanPodPolicy`` and ``mpiImplementation`` it knows, ``<job>-worker-<n-1>`` a DNS-1035 label.
A replica type other than Launcher and Worker, a template naming another gang and
``runPolicy.suspend: true`` (gangsched holds no suspended job) are refused, naming the key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from scheduler_core.engine.model import MatchPolicy

from . import validate as v
from .cluster import priority_resolve
from .documents import Manifest
from .kueue import managed_queue, workload_priority
from .pod_fields import pod_spec_gang
from .podgroup import DEFAULT_WAIT_SECONDS
from .spec import GangRef, GangSpec, Loaded, PodSpec
from .workloads import (
    PodReader,
    container_requests,
    object_meta,
    owner_ask,
    pod_gang_read,
    pod_spec,
    scheduler_name,
)

API_VERSION = "kubeflow.org/v2beta1"
GROUP = "kubeflow.org"
SOURCE = "mpijob"
LAUNCHER, WORKER = "Launcher", "Worker"
OPERATOR_NAME = "training.kubeflow.org/operator-name"
JOB_NAME = "training.kubeflow.org/job-name"
JOB_ROLE = "training.kubeflow.org/job-role"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
RESTART_POLICIES = ["Never", "OnFailure"]
CLEAN_POD_POLICIES = ["None", "Running", "All"]
IMPLEMENTATIONS = ["OpenMPI", "Intel", "MPICH"]
_DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def load(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, metadata = object_meta(manifest)
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    _spec_check(spec, spec_field)
    run_policy = _run_policy(spec, spec_field)
    specs_field = v.join(spec_field, "mpiReplicaSpecs")
    replica_specs = v.mapping(spec.get("mpiReplicaSpecs"), specs_field, optional=False)
    for key in replica_specs:
        if key not in (LAUNCHER, WORKER):
            raise v.DeclarationError(
                v.join(specs_field, str(key)), "an MPIJob has replica types Launcher and Worker only"
            )
    if replica_specs.get(LAUNCHER) is None:
        raise v.DeclarationError(v.join(specs_field, LAUNCHER), "an MPIJob needs a Launcher replica spec")
    launcher = v.mapping(replica_specs[LAUNCHER], v.join(specs_field, LAUNCHER), optional=False)
    launcher_field = v.join(specs_field, LAUNCHER)
    if (
        v.integer(
            launcher.get("replicas", 1), v.join(launcher_field, "replicas"), minimum=0, maximum=2**31 - 1
        )
        != 1
    ):
        raise v.DeclarationError(v.join(launcher_field, "replicas"), "must be 1")
    worker, workers = None, 0
    worker_field = v.join(specs_field, WORKER)
    if replica_specs.get(WORKER) is not None:
        worker = v.mapping(replica_specs[WORKER], worker_field, optional=False)
        if worker.get("replicas") is None:
            raise v.DeclarationError(v.join(worker_field, "replicas"), "must define the number of workers")
        workers = v.member_count(worker["replicas"], v.join(worker_field, "replicas"))
    _hostname_check(name, workers, v.join(manifest.path, "metadata", "name"))
    as_worker = spec.get("runLauncherAsWorker", False)
    if not isinstance(as_worker, bool):
        raise v.DeclarationError(v.join(spec_field, "runLauncherAsWorker"), "must be true or false")

    policy_field = v.join(spec_field, "runPolicy", "schedulingPolicy")
    policy = v.mapping(run_policy.get("schedulingPolicy"), policy_field)
    meta_field = v.join(manifest.path, "metadata")
    kueue = managed_queue(metadata, meta_field, policy, policy_field, "MPIJob")
    queue, queue_field = kueue or _queue(policy, policy_field, metadata, meta_field)
    ref = GangRef(namespace, name, SOURCE, manifest.name_field, queue=queue, queue_field=queue_field)
    pods = [
        _pod(manifest, namespace, name, "launcher", launcher, launcher_field, None, as_worker, readers, ref)
    ]
    pods += [
        _pod(manifest, namespace, name, "worker", worker, worker_field, index, as_worker, readers, ref)
        for index in range(workers)
    ]
    owner_ask(manifest, pods)  # Kueue's / KAI's topology annotations on the MPIJob itself
    total = len(pods)
    min_member = v.min_available(policy.get("minAvailable"), v.join(policy_field, "minAvailable"), total)
    timeout = policy.get("scheduleTimeoutSeconds")
    priority = _priority(policy, policy_field, launcher, worker, specs_field)
    if kueue is not None:  # Kueue's workload: its WorkloadPriorityClass first
        priority = workload_priority(metadata, meta_field, priority)
    gang = GangSpec(
        namespace=namespace,
        name=name,
        min_member=min_member,
        total_number=total,
        min_resources=_min_resources(
            policy, policy_field, min_member, launcher, worker, workers, specs_field
        ),
        wait_seconds=_wait_seconds(
            timeout, v.join(policy_field, "scheduleTimeoutSeconds"), kueue is not None
        ),
        priority=priority,
        queue=queue or "default",
        queue_field=queue_field,
        match_policy=MatchPolicy.WAITING_AND_RUNNING.value,
        source_format=SOURCE,
        declaration=manifest.obj,
        field=manifest.name_field,
    )
    return Loaded(object_name=f"mpijob.{GROUP}/{name}", gangs=[gang], pods=pods)


def _spec_check(spec: dict[str, Any], field: str) -> None:
    """The job-level keys the operator's validation checks (after its defaults)."""
    v.integer(spec.get("slotsPerWorker", 1), v.join(field, "slotsPerWorker"), minimum=0, maximum=2**31 - 1)
    v.choice(spec.get("mpiImplementation", "OpenMPI"), v.join(field, "mpiImplementation"), IMPLEMENTATIONS)
    mount = spec.get("sshAuthMountPath", "/root/.ssh")
    v.text(mount, v.join(field, "sshAuthMountPath"), max_length=4096)


def _run_policy(spec: dict[str, Any], spec_field: str) -> dict[str, Any]:
    field = v.join(spec_field, "runPolicy")
    policy = v.mapping(spec.get("runPolicy"), field)
    clean = policy.get("cleanPodPolicy", "None")
    if clean not in CLEAN_POD_POLICIES:
        raise v.DeclarationError(
            v.join(field, "cleanPodPolicy"),
            f"{v.shown(clean)} is not a clean pod policy: Running, All, or the one that deletes no pods",
        )
    for key in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        if policy.get(key) is not None:
            v.integer(policy[key], v.join(field, key), minimum=0, maximum=2**63 - 1)
    if policy.get("suspend") is True:
        raise v.DeclarationError(
            v.join(field, "suspend"), "gangsched holds no suspended job: apply the MPIJob when it is to run"
        )
    return policy


def _hostname_check(name: str, workers: int, field: str) -> None:
    """The last worker's hostname is a DNS-1035 label, or the operator cannot make its pod."""
    last = f"{name}-worker-{max(workers, 1) - 1}"
    if len(last) > 63 or not _DNS_1035.fullmatch(last):
        raise v.DeclarationError(
            field,
            f"the worker hostname {last!r} would not be a DNS-1035 label (at most 63 lowercase "
            "letters, digits and '-', starting with a letter): shorten the name",
        )


def _wait_seconds(timeout, field: str, kueue: bool) -> float | None:
    """scheduler-plugins' Permit wait (its default for none or 0); Kueue times nothing out."""
    if timeout in (None, 0):
        return None if kueue else DEFAULT_WAIT_SECONDS
    return v.wait_seconds(timeout, field)


def _queue(policy: dict, policy_field: str, metadata: dict, meta_field: str) -> tuple[str | None, str]:
    if policy.get("queue"):
        return v.text(policy["queue"], v.join(policy_field, "queue"), max_length=63), v.join(
            policy_field, "queue"
        )
    annotations = v.string_map(metadata.get("annotations"), v.join(meta_field, "annotations"))
    if annotations.get(VOLCANO_QUEUE):
        where = v.join(meta_field, "annotations", VOLCANO_QUEUE)
        return v.text(annotations[VOLCANO_QUEUE], where, max_length=63), where
    return None, ""


def _template(replica: dict[str, Any], field: str) -> tuple[dict, dict, str]:
    template_field = v.join(field, "template")
    template = v.mapping(replica.get("template"), template_field, optional=False)
    metadata = v.mapping(template.get("metadata"), v.join(template_field, "metadata"))
    pod = v.mapping(template.get("spec"), v.join(template_field, "spec"), optional=False)
    return metadata, pod, template_field


def _pod(manifest, namespace, job, role, replica, field, index, as_worker, readers, ref) -> PodSpec:
    """One pod as ``newLauncherPodTemplate`` / ``newWorker`` make it."""
    v.choice(
        replica.get("restartPolicy", "OnFailure" if role == "launcher" else "Never"),
        v.join(field, "restartPolicy"),
        RESTART_POLICIES,
    )
    metadata, pod, template_field = _template(replica, field)
    template_gang_refuse(metadata, pod, template_field, namespace, ref.key, readers, "MPIJob")
    labels = v.string_map(metadata.get("labels"), v.join(template_field, "metadata", "labels"))
    labels = {**labels, OPERATOR_NAME: "mpi-operator", JOB_NAME: job, JOB_ROLE: role}
    if index is not None:
        labels[REPLICA_INDEX] = str(index + 1 if as_worker else index)
    elif as_worker:
        labels[REPLICA_INDEX] = "0"
    return pod_spec(
        namespace=namespace,
        name=f"{job}-{role}" if index is None else f"{job}-{role}-{index}",
        metadata={**metadata, "labels": labels},
        spec={**pod, "schedulerName": scheduler_name()},  # decoratePodTemplateSpec overwrites it
        field=template_field,
        readers=readers,
        name_field=v.join(manifest.path, "metadata", "name"),
        gang=ref,
    )


def template_gang_refuse(metadata, pod, field, namespace, gang_key, readers, kind) -> None:
    """An operator puts every pod it makes in its own gang (``gang_key``): a template naming another
    (a PodGroup label, Kueue's pod-group-name, upstream's schedulingGroup...) is refused."""
    meta_field = v.join(field, "metadata")
    labels = v.string_map(metadata.get("labels"), v.join(meta_field, "labels"))
    annotations = v.string_map(metadata.get("annotations"), v.join(meta_field, "annotations"))
    first = pod_spec_gang(namespace, pod, v.join(field, "spec"))
    own = pod_gang_read(readers, namespace, labels, annotations, meta_field, first=first)
    if own is not None and own.key != gang_key:
        raise v.DeclarationError(
            own.field, f"names gang {own.key} but the {kind}'s pods are its gang {gang_key}"
        )


def _priority(policy, policy_field, launcher, worker, specs_field) -> int | None:
    """``calculatePriorityClassName``: the policy's class, else the launcher's, else the workers'."""
    if policy.get("priorityClass"):
        return priority_resolve(policy["priorityClass"], v.join(policy_field, "priorityClass"))
    for role, replica in ((LAUNCHER, launcher), (WORKER, worker)):
        if replica is None:
            continue
        pod = (replica.get("template") or {}).get("spec") or {}
        if pod.get("priorityClassName"):
            where = v.join(specs_field, role, "template", "spec", "priorityClassName")
            return priority_resolve(pod["priorityClassName"], where)
    return None


def _min_resources(
    policy, policy_field, min_member, launcher, worker, workers, specs_field
) -> dict[str, int]:
    """``calculatePGMinResources``: the policy's, else min_member pods' containers, the
    lower-priority replica type cut to min_member - 1 (the workers when priorities are equal)."""
    if policy.get("minResources") is not None:
        return v.resources(policy["minResources"], v.join(policy_field, "minResources"))
    order = [(LAUNCHER, launcher, 1)] + ([(WORKER, worker, workers)] if worker is not None else [])
    if len(order) == 2 and 1 + workers > min_member:
        prio = {role: _class_value(replica) for role, replica, _ in order}
        cut = WORKER if prio[LAUNCHER] >= prio[WORKER] else LAUNCHER
        order = [(role, replica, min_member - 1 if role == cut else count) for role, replica, count in order]
    total: dict[str, int] = {}
    for role, replica, count in order:
        containers_field = v.join(specs_field, role, "template", "spec", "containers")
        containers = v.sequence(
            ((replica.get("template") or {}).get("spec") or {}).get("containers"), containers_field
        )
        for index, container in enumerate(containers):
            requests = container_requests(container, v.join(containers_field, index))
            v.resources_add(total, {k: amount * count for k, amount in requests.items()}, containers_field)
    return total


def _class_value(replica: dict[str, Any]) -> int:
    """The replica's PriorityClass value (0 without one), as ``calPGMinResource`` orders them."""
    name = ((replica.get("template") or {}).get("spec") or {}).get("priorityClassName")
    return priority_resolve(name, "priorityClassName") if name else 0
