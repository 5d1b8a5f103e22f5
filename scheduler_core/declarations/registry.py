"""Which module reads what: the one table of accepted objects, and the pod readers.

- ``OBJECTS``: (apiVersion, kind) -> the function that turns one manifest object into gangs and
  pods (``Loaded``). It is the whole list of what ``apply`` (CLI and API) and ``delete`` accept:
  an apiVersion is listed only where the project that owns the kind serves it, so
  ``scheduling.x-k8s.io/v9`` or ``apps/v1beta9`` is refused naming ``apiVersion`` and the versions
  the kind has, instead of being read as if it were the version gangsched knows. A new format (or
  a new version of one) is a line here; docs/declaring-gangs.md's table of accepted apiVersions is
  checked against this one by ``tests/declarations/test_api_versions.py``.
- ``POD_READERS``: functions that read a pod's labels and annotations and say which gang it
  belongs to (``GangRef``), in order: the first that recognises the pod wins. A new pod-level
  format (Kueue's pod-group label) is a module with a ``pod_gang`` function, added here.

Versions, as served upstream: Kubernetes' own kinds in their GA versions (the beta versions of
Deployment, StatefulSet and PriorityClass were removed in 1.16 and 1.22); scheduler-plugins'
PodGroup in ``v1alpha1`` (its only version, in ``scheduling.x-k8s.io`` and, before that,
``scheduling.sigs.k8s.io``); Volcano's PodGroup in ``v1beta1`` and vcjob in
``v1alpha1`` (the versions its CRDs serve); KAI-Scheduler's PodGroup in ``scheduling.run.ai/v2alpha2``
(its only served version); the upstream Workload API in ``v1alpha1`` (1.35) and
``v1alpha2`` (1.36, with its PodGroup); gangsched's own GangJob in ``v1``; Kubeflow's MPIJob in
``kubeflow.org/v2beta1`` (the mpi-operator's v2 API); JobSet in ``jobset.x-k8s.io/v1alpha2`` (its
only served version). Queues: Volcano's in
``v1alpha2`` (1.36, with its PodGroup); gangsched's own GangJob in ``v1``. Workload operators:
LeaderWorkerSet in ``leaderworkerset.x-k8s.io/v1``, KubeRay's RayCluster and RayJob in
``ray.io/v1`` (their served versions). Queues: Volcano's in
``v1beta1``, KAI's in ``v2``, Kueue's ClusterQueue, LocalQueue and ResourceFlavor in ``v1beta1``
and ``v1beta2`` and its Cohort also in ``v1alpha1`` (Kueue 0.12 and earlier); Kueue's
WorkloadPriorityClass in ``v1beta1`` and ``v1beta2``; a ``v1 ConfigMap``
only when it is YuniKorn's ``yunikorn-configs``. Topology: Kueue's in ``v1alpha1`` (before TAS went
beta), ``v1beta1`` and ``v1beta2``, KAI-Scheduler's in ``kai.scheduler/v1alpha1``, Volcano's
HyperNode in ``topology.volcano.sh/v1alpha1``. Kubeflow's training jobs (PyTorchJob, TFJob,
XGBoostJob, PaddleJob, JAXJob) in ``kubeflow.org/v1``, the version the training-operator serves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from . import (
    cluster,
    gangjob,
    jobset,
    kai_podgroup,
    koordinator,
    kubeflow,
    kuberay,
    kueue,
    kueue_priority,
    lws,
    mpijob,
    pod_fields,
    podgroup,
    queues_kai,
    queues_kueue,
    queues_volcano,
    queues_yunikorn,
    topologies,
    upstream,
    volcano,
    workloads,
    yunikorn,
)
from . import validate as v
from .documents import Manifest, group_of
from .spec import Loaded

Load = Callable[[Manifest, Sequence[workloads.PodReader]], Loaded]

OBJECTS: dict[tuple[str, str], Load] = {
    ("v1", "Pod"): workloads.load_pod,
    ("v1", "Node"): cluster.load_node,
    ("v1", "Namespace"): cluster.load_namespace,
    ("batch/v1", "Job"): workloads.load_job,
    ("apps/v1", "Deployment"): workloads.load_deployment,
    ("apps/v1", "StatefulSet"): workloads.load_statefulset,
    (cluster.PRIORITY_API_VERSION, "PriorityClass"): cluster.load_priority_class,
    **{(version, kueue_priority.KIND): kueue_priority.load for version in kueue_priority.VERSIONS},
    (f"{podgroup.GROUP}/v1alpha1", "PodGroup"): podgroup.load,
    (f"{podgroup.LEGACY_GROUP}/v1alpha1", "PodGroup"): podgroup.load,
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): volcano.load_podgroup,
    (kai_podgroup.API_VERSION, "PodGroup"): kai_podgroup.load,
    ("batch.volcano.sh/v1alpha1", "Job"): volcano.load_job,
    (pod_fields.V1ALPHA1, "Workload"): upstream.load_workload,
    (pod_fields.V1ALPHA2, "Workload"): upstream.load_workload,
    (pod_fields.V1ALPHA2, "PodGroup"): upstream.load_podgroup,
    ("gangsched.io/v1", "GangJob"): gangjob.load,
    **{(kubeflow.API_VERSION, kind): kubeflow.load for kind in kubeflow.KINDS},
    (mpijob.API_VERSION, "MPIJob"): mpijob.load,
    (jobset.API_VERSION, "JobSet"): jobset.load,
    (lws.API_VERSION, "LeaderWorkerSet"): lws.load,
    (kuberay.API_VERSION, "RayCluster"): kuberay.load_cluster,
    (kuberay.API_VERSION, "RayJob"): kuberay.load_job,
    # Queues: operators' objects (cluster.OPERATOR_KINDS), read into specs/queues.py.
    (queues_volcano.API_VERSION, "Queue"): queues_volcano.load_queue,
    (queues_kai.API_VERSION, "Queue"): queues_kai.load_queue,
    **{(version, "ClusterQueue"): queues_kueue.load_cluster_queue for version in queues_kueue.VERSIONS},
    **{(version, "Cohort"): queues_kueue.load_cohort for version in queues_kueue.COHORT_VERSIONS},
    **{(version, "LocalQueue"): queues_kueue.load_local_queue for version in queues_kueue.VERSIONS},
    **{(version, "ResourceFlavor"): queues_kueue.load_flavor for version in queues_kueue.VERSIONS},
    ("v1", "ConfigMap"): queues_yunikorn.load_config_map,  # only yunikorn-configs
    # Topology: operators' objects too, read into topology_objects.py.
    **{(version, "Topology"): topologies.load_kueue_topology for version in topologies.KUEUE_VERSIONS},
    (topologies.KAI_VERSION, "Topology"): topologies.load_kai_topology,
    (topologies.VOLCANO_VERSION, "HyperNode"): topologies.load_hypernode,
}
POD_READERS = (
    koordinator.pod_gang,
    podgroup.pod_gang,
    volcano.pod_gang,
    yunikorn.pod_gang,
    kueue.pod_gang,
    kai_podgroup.pod_gang,
)


def api_versions(kind: str) -> list[str]:
    """The apiVersions ``kind`` is read in, in the table's order (empty for an unknown kind)."""
    return [api_version for api_version, known in OBJECTS if known == kind]


def manifest_load(manifest: Manifest) -> Loaded:
    load = OBJECTS.get((manifest.api_version, manifest.kind))
    if load is None:
        raise _unknown(manifest)
    return load(manifest, POD_READERS)


def _unknown(manifest: Manifest) -> v.DeclarationError:
    """A known kind in another group or version is the apiVersion's fault; an unknown kind, the
    kind's (with the list of what gangsched reads)."""
    accepted = api_versions(manifest.kind)
    if not accepted:
        known = ", ".join(sorted({f"{kind} ({api_version})" for api_version, kind in OBJECTS}))
        return v.DeclarationError(
            v.join(manifest.path, "kind"),
            f"gangsched does not read {manifest.kind} of {manifest.api_version} (it reads: {known})",
        )
    same_group = [a for a in accepted if group_of(a) == manifest.group]
    versions = " or ".join(same_group or accepted)
    return v.DeclarationError(
        v.join(manifest.path, "apiVersion"),
        f"{manifest.api_version!r} is not a version of {manifest.kind} that gangsched reads: use {versions}",
    )
