"""KubeRay (``ray.io/v1``): RayCluster and RayJob, their pods, and the gang KubeRay's batch
scheduler integrations make (``ray-operator/controllers/ray/batchscheduler/`` in
ray-project/kuberay).

gangsched plays the KubeRay operator configured with gangsched as its batch scheduler. A
RayCluster becomes:

- a head pod ``<cluster>-head-0`` from ``headGroupSpec.template``, and per worker group
  ``<cluster>-<group>-worker-<i>`` pods: ``replicas`` bounded by ``minReplicas`` /
  ``maxReplicas`` (``GetWorkerGroupDesiredReplicas``), times ``numOfHosts``; none for a group (or
  a cluster) with ``suspend: true``. Upstream names pods by ``generateName`` (five random
  characters); gangsched numbers them so that applying again finds the same pods;
- on each pod the labels KubeRay sets: ``ray.io/cluster``, ``ray.io/node-type`` (head /
  worker), ``ray.io/group`` (``headgroup`` or the group's name), ``ray.io/is-ray-node``; and
  ``schedulerName`` gangsched's, as ``AddMetadataToChildResource`` names the batch scheduler on
  every pod it makes;
- a gang only when the RayCluster asks for one, as KubeRay's integrations do: the label
  ``ray.io/gang-scheduling-enabled`` (scheduler-plugins, YuniKorn; any value) or Volcano's
  ``volcano.sh/queue-name``. The gang is named as the cluster (scheduler-plugins' PodGroup;
  Volcano's is ``ray-<name>-pg``), min_member = 1 + the workers (with
  ``enableInTreeAutoscaling: true``, 1 + the groups' ``minReplicas`` x ``numOfHosts``, as
  Volcano's ``calculatePodGroupParams``), min_resources the head's and those workers' requests,
  queue ``volcano.sh/queue-name`` (else ``default``), priority the label
  ``ray.io/priority-class-name`` (else the head template's). Without either label the pods are
  plain pods of gangsched, each scheduled on its own.

A RayJob becomes its RayCluster (``spec.rayClusterSpec``, named as the RayJob: upstream adds five
random characters) with the RayJob's labels, and its gang is named as the RayJob; with
``submissionMode: K8sJobMode`` (the default) also the submitter Job's pod ``<rayjob>-0`` from
``submitterPodTemplate`` (else KubeRay's default submitter: 500m CPU, 200Mi), outside the gang,
as upstream creates it once the cluster is ready; ``SidecarMode`` adds the submitter container
to the head pod. ``suspend: true`` makes nothing. A RayJob on an existing cluster
(``clusterSelector``, no ``rayClusterSpec``) is refused: gangsched has no cluster to attach it to.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from . import validate as v
from .cluster import priority_resolve
from .documents import Manifest
from .spec import GangRef, GangSpec, Loaded, PodSpec
from .workloads import (
    PodReader,
    object_meta,
    owner_ask,
    pod_spec,
    priority_of,
    scheduler_name,
    template_gang_refuse,
)

GROUP = "ray.io"
API_VERSION = f"{GROUP}/v1"
GANG_ENABLED = "ray.io/gang-scheduling-enabled"
VOLCANO_QUEUE = "volcano.sh/queue-name"
PRIORITY_CLASS = "ray.io/priority-class-name"
CLUSTER, NODE_TYPE, NODE_GROUP, IS_RAY_NODE = (
    "ray.io/cluster",
    "ray.io/node-type",
    "ray.io/group",
    "ray.io/is-ray-node",
)
HEAD_GROUP = "headgroup"
MAX_INT32 = 2**31 - 1
SUBMISSION_MODES = ["K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode"]
#: KubeRay's default submitter container (``GetDefaultSubmitterContainer``).
SUBMITTER = {
    "name": "ray-job-submitter",
    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "200Mi"}},
}
CLUSTER_SOURCE, JOB_SOURCE = "raycluster", "rayjob"


def load_cluster(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, metadata = object_meta(manifest)
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    labels = _labels(metadata, manifest)
    gangs, pods = _cluster(manifest, namespace, name, name, labels, spec, spec_field, readers, CLUSTER_SOURCE)
    return Loaded(object_name=f"raycluster.{GROUP}/{name}", gangs=gangs, pods=pods)


def load_job(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, metadata = object_meta(manifest)
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    labels = _labels(metadata, manifest)
    mode_field = v.join(spec_field, "submissionMode")
    mode = v.choice(spec.get("submissionMode", "K8sJobMode"), mode_field, SUBMISSION_MODES)
    cluster_field = v.join(spec_field, "rayClusterSpec")
    if spec.get("rayClusterSpec") is None:
        reason = "a RayJob needs its rayClusterSpec: gangsched creates the cluster it runs on"
        if spec.get("clusterSelector") is not None:
            reason += " (a RayJob on an existing cluster, clusterSelector, is not read)"
        raise v.DeclarationError(cluster_field, reason)
    cluster = v.mapping(spec.get("rayClusterSpec"), cluster_field, optional=False)
    if _flag(spec.get("suspend"), v.join(spec_field, "suspend")):
        return Loaded(object_name=f"rayjob.{GROUP}/{name}")
    if mode == "SidecarMode":
        cluster = _with_sidecar(cluster, cluster_field)
    gangs, pods = _cluster(
        manifest, namespace, name, name, labels, cluster, cluster_field, readers, JOB_SOURCE
    )
    if mode == "K8sJobMode":
        pods.append(_submitter(manifest, namespace, name, spec, spec_field, readers))
    return Loaded(object_name=f"rayjob.{GROUP}/{name}", gangs=gangs, pods=pods)


def _labels(metadata: dict[str, Any], manifest: Manifest) -> dict[str, str]:
    return v.string_map(metadata.get("labels"), v.join(manifest.path, "metadata", "labels"))


def _flag(value: Any, field: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise v.DeclarationError(field, f"must be true or false, not {v.kind_of(value)}")
    return value


def _cluster(manifest, namespace, name, gang_name, labels, spec, spec_field, readers, source):
    """The gangs (none or one) and pods of one RayCluster spec."""
    if _flag(spec.get("suspend"), v.join(spec_field, "suspend")):
        return [], []
    autoscaling = _flag(spec.get("enableInTreeAutoscaling"), v.join(spec_field, "enableInTreeAutoscaling"))
    labels_field = v.join(manifest.path, "metadata", "labels")
    ref = _gang_ref(namespace, gang_name, labels, labels_field, manifest, source)
    head_field = v.join(spec_field, "headGroupSpec")
    head = v.mapping(spec.get("headGroupSpec"), head_field, optional=False)
    head_template = _template(head, head_field, namespace, readers)
    pods = [
        _pod(manifest, namespace, f"{name}-head-0", name, "head", HEAD_GROUP, head_template, readers, ref)
    ]
    # The head, then each group's workers up to the gang's minimum (its minReplicas when autoscaling).
    counted = list(pods)
    groups_field = v.join(spec_field, "workerGroupSpecs")
    seen: set[str] = set()
    for index, group in enumerate(v.sequence(spec.get("workerGroupSpecs"), groups_field)):
        where = v.join(groups_field, index)
        group = v.mapping(group, where, optional=False)
        group_name = v.dns_label(group.get("groupName"), v.join(where, "groupName"))
        if group_name in seen:
            raise v.DeclarationError(
                v.join(where, "groupName"), f"worker group {group_name!r} is declared twice"
            )
        seen.add(group_name)
        desired, least = _replicas(group, where)
        template = _template(group, where, namespace, readers)
        if len(pods) + desired > v.limit("GANGSCHED_MAX_GANG_MEMBERS", v.MAX_GANG_MEMBERS):
            raise v.DeclarationError(where, f"{len(pods) + desired} pods are too many for one RayCluster")
        workers = [
            _pod(
                manifest,
                namespace,
                f"{name}-{group_name}-worker-{i}",
                name,
                "worker",
                group_name,
                template,
                readers,
                ref,
            )
            for i in range(desired)
        ]
        pods += workers
        counted += workers[:least] if autoscaling else workers
    owner_ask(manifest, pods)  # KAI's topology annotations on the RayCluster / RayJob
    if ref is None:
        return [], pods
    reserved: dict[str, int] = {}
    for pod in counted:
        v.resources_add(reserved, pod.requests, spec_field)
    priority = _label_priority(labels, labels_field)
    gang = GangSpec(
        namespace=namespace,
        name=gang_name,
        min_member=len(counted),
        total_number=len(pods),
        min_resources=reserved,
        wait_seconds=None,
        priority=priority_of(head_template[1], head_template[2]) if priority is None else priority,
        queue=ref.queue or "default",
        queue_field=ref.queue_field,
        source_format=source,
        declaration=manifest.obj,
        field=manifest.name_field,
    )
    return [gang], pods


def _gang_ref(namespace, gang_name, labels, field, manifest, source) -> GangRef | None:
    """The gang the labels ask for (None: plain pods), with its queue."""
    if GANG_ENABLED not in labels and VOLCANO_QUEUE not in labels:
        return None
    ref = GangRef(namespace, gang_name, source, manifest.name_field)
    if VOLCANO_QUEUE in labels:
        ref.queue_field = v.join(field, VOLCANO_QUEUE)
        ref.queue = v.text(labels[VOLCANO_QUEUE], ref.queue_field, max_length=63)
    return ref


def _label_priority(labels: dict[str, str], field: str) -> int | None:
    """``ray.io/priority-class-name``: the PodGroup's priorityClassName (Volcano's plugin)."""
    if PRIORITY_CLASS not in labels:
        return None
    return priority_resolve(labels[PRIORITY_CLASS], v.join(field, PRIORITY_CLASS))


def _replicas(group: dict[str, Any], where: str) -> tuple[int, int]:
    """(pods made, pods counted at the minimum) of a worker group, as
    ``GetWorkerGroupDesiredReplicas`` and ``CalculateMinReplicas`` count them."""
    least = v.member_count(group.get("minReplicas", 0), v.join(where, "minReplicas"), minimum=0)
    most = v.integer(
        group.get("maxReplicas", MAX_INT32), v.join(where, "maxReplicas"), minimum=0, maximum=MAX_INT32
    )
    if least > most:
        raise v.DeclarationError(v.join(where, "minReplicas"), f"{least} is more than maxReplicas {most}")
    replicas = v.integer(group.get("replicas", 0), v.join(where, "replicas"), minimum=0, maximum=MAX_INT32)
    hosts = v.member_count(group.get("numOfHosts", 1), v.join(where, "numOfHosts"))
    if _flag(group.get("suspend"), v.join(where, "suspend")):
        return 0, 0
    return min(max(replicas, least), most) * hosts, least * hosts


def _template(group: dict[str, Any], where: str, namespace: str, readers):
    field = v.join(where, "template")
    template = v.mapping(group.get("template"), field, optional=False)
    metadata = v.mapping(template.get("metadata"), v.join(field, "metadata"))
    pod = v.mapping(template.get("spec"), v.join(field, "spec"), optional=False)
    template_gang_refuse(template, pod, field, namespace, readers, "KubeRay makes the cluster's gang")
    return metadata, pod, v.join(field, "spec"), field


def _pod(manifest, namespace, pod_name, cluster, node_type, group, template, readers, ref) -> PodSpec:
    metadata, pod, _, field = template
    labels = v.string_map(metadata.get("labels"), v.join(field, "metadata", "labels"))
    labels = {**labels, CLUSTER: cluster, NODE_TYPE: node_type, NODE_GROUP: group, IS_RAY_NODE: "yes"}
    return pod_spec(
        namespace=namespace,
        name=pod_name,
        metadata={**metadata, "labels": labels},
        spec={**pod, "schedulerName": scheduler_name()},
        field=field,
        readers=readers,
        name_field=v.join(manifest.path, "metadata", "name"),
        gang=ref,
    )


def _with_sidecar(cluster: dict[str, Any], field: str) -> dict[str, Any]:
    """SidecarMode: KubeRay adds the submitter container to the head pod."""
    cluster = copy.deepcopy(cluster)
    head = v.mapping(cluster.get("headGroupSpec"), v.join(field, "headGroupSpec"), optional=False)
    template = v.mapping(head.get("template"), v.join(field, "headGroupSpec", "template"), optional=False)
    spec_field = v.join(field, "headGroupSpec", "template", "spec")
    pod = v.mapping(template.get("spec"), spec_field, optional=False)
    pod["containers"] = [*v.sequence(pod.get("containers"), v.join(spec_field, "containers")), SUBMITTER]
    return cluster


def _submitter(manifest, namespace, name, spec, spec_field, readers) -> PodSpec:
    """K8sJobMode's submitter Job pod: ``submitterPodTemplate``, else KubeRay's default."""
    field = v.join(spec_field, "submitterPodTemplate")
    template = v.mapping(spec.get("submitterPodTemplate"), field) or {
        "spec": {"containers": [SUBMITTER], "restartPolicy": "Never"}
    }
    metadata = v.mapping(template.get("metadata"), v.join(field, "metadata"))
    pod = v.mapping(template.get("spec"), v.join(field, "spec"), optional=False)
    template_gang_refuse(
        template, pod, field, namespace, readers, "the submitter is outside the cluster's gang"
    )
    submitter = pod_spec(
        namespace=namespace,
        name=f"{name}-0",
        metadata=metadata,
        spec={**pod, "schedulerName": scheduler_name()},
        field=field,
        readers=(),
        name_field=v.join(manifest.path, "metadata", "name"),
    )
    submitter.owner = f"job.batch/{name}"
    return submitter
