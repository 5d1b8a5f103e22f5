"""LeaderWorkerSet (``leaderworkerset.x-k8s.io/v1``): replicas of a leader and its workers, each
replica (a "group") one gang.

gangsched plays the LWS controller and its gang-scheduling provider (``pkg/controllers``,
``pkg/schedulerprovider/volcano_provider.go`` in kubernetes-sigs/lws), so a LeaderWorkerSet
becomes, for each group ``i`` in ``0..replicas-1``:

- a leader pod ``<lws>-<i>`` (the leader StatefulSet's pod) from ``leaderTemplate``, or from
  ``workerTemplate`` when there is none, and workers ``<lws>-<i>-<j>`` for ``j`` in
  ``1..size-1`` (the group's worker StatefulSet) from ``workerTemplate``;
- on each pod the labels LWS sets (``leaderworkerset.sigs.k8s.io/name``, ``group-index``,
  ``worker-index``: 0 for the leader) and annotations (``size``; ``leader-name`` on workers);
- one gang ``<lws>-<i>``, as the provider makes one PodGroup per group (upstream names it
  ``<lws>-<i>-<revision hash>``; gangsched leaves out the hash, which changes with the
  template): min_member = ``size`` under ``startupPolicy: LeaderCreated`` (the default), 1 under
  ``LeaderReady``; min_resources = the leader's requests plus ``size - 1`` workers' either way
  (``CalculatePGMinResources``); total_number = ``size``;
- queue: the LeaderWorkerSet's annotation ``scheduling.volcano.sh/queue-name`` (else
  ``default``); ``volcano.sh/preemptable`` among the ``volcano.sh/`` annotations its PodGroups
  inherit; no timeout (Volcano's gang never times out); priority: the leader template's;
- ``leaderWorkerTemplate.restartPolicy``: ``RecreateGroupOnPodRestart`` (the default) and
  ``RecreateGroupAfterStart`` recreate the whole group when a pod fails (RestartGangWhenBelowMin);
  ``None`` (or the deprecated ``Default``) replaces only the failed pod (RestartFailedOnly).

Every group's gang is its own: groups schedule independently, as their PodGroups do. The pods'
``schedulerName`` is the template's (``volcano`` in LWS's gang-scheduling sample): the group's
gang is gangsched's either way. A template naming a gang of its own is refused.

Exclusive placement: the annotation ``leaderworkerset.sigs.k8s.io/exclusive-topology: <node
label>`` on the LeaderWorkerSet puts each group alone in one domain of that level upstream (the
controller copies it onto the pods; the pod webhook, ``pkg/webhooks/pod_webhook.go``
``SetExclusiveAffinities``, gives the leader an affinity to its group and an anti-affinity to any
other group at that label, and the workers follow the leader's domain). Here each group's gang is
required in one domain of the level and exclusive there (``engine/topology_exclusive.py``), and
every pod carries the annotation, as upstream's do. Subgroups are refused, naming the key:
``leaderWorkerTemplate.subGroupPolicy`` and ``leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology``
would place parts of a group in domains of their own, and gangsched keeps a gang whole in one.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler_core.models import RestartPolicy

from . import validate as v
from .documents import Manifest
from .pod_fields import preemptable
from .spec import GangRef, GangSpec, Loaded, PodSpec
from .topologies import label_key
from .topology_keys import TopologyAsk, ask_apply
from .workloads import PodReader, object_meta, owner_ask, pod_spec, priority_of, template_gang_refuse

GROUP = "leaderworkerset.x-k8s.io"
API_VERSION = f"{GROUP}/v1"
SET_NAME = "leaderworkerset.sigs.k8s.io/name"
GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
SIZE = "leaderworkerset.sigs.k8s.io/size"
LEADER_NAME = "leaderworkerset.sigs.k8s.io/leader-name"
EXCLUSIVE = "leaderworkerset.sigs.k8s.io/exclusive-topology"
SUBGROUP_EXCLUSIVE = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
_SUBGROUPS = "gangsched keeps a group whole in one domain: it does not split a group into subgroups"
#: What Volcano's provider reads on the LeaderWorkerSet, and writes on each pod.
QUEUE_NAME = "scheduling.volcano.sh/queue-name"
GROUP_NAME = "scheduling.k8s.io/group-name"
VOLCANO_PREFIX = "volcano.sh/"
SOURCE = "leaderworkerset"
STARTUP_POLICIES = ["LeaderCreated", "LeaderReady"]
_RESTARTS = {
    "RecreateGroupOnPodRestart": RestartPolicy.RESTART_GANG_WHEN_BELOW_MIN.value,
    "RecreateGroupAfterStart": RestartPolicy.RESTART_GANG_WHEN_BELOW_MIN.value,
    "None": RestartPolicy.RESTART_FAILED_ONLY.value,
    "Default": RestartPolicy.RESTART_FAILED_ONLY.value,
}


def load(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, metadata = object_meta(manifest)
    meta_field, spec_field = v.join(manifest.path, "metadata"), v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    replicas = v.member_count(spec.get("replicas", 1), v.join(spec_field, "replicas"), minimum=0)
    lwt_field = v.join(spec_field, "leaderWorkerTemplate")
    lwt = v.mapping(spec.get("leaderWorkerTemplate"), lwt_field, optional=False)
    size = v.member_count(lwt.get("size", 1), v.join(lwt_field, "size"))
    if replicas * size > v.limit("GANGSCHED_MAX_GANG_MEMBERS", v.MAX_GANG_MEMBERS):
        raise v.DeclarationError(
            v.join(spec_field, "replicas"),
            f"{replicas} groups of {size} pods are too many pods for one apply",
        )
    startup = v.choice(
        spec.get("startupPolicy", "LeaderCreated"), v.join(spec_field, "startupPolicy"), STARTUP_POLICIES
    )
    restart = _restart_policy(
        lwt.get("restartPolicy", "RecreateGroupOnPodRestart"), v.join(lwt_field, "restartPolicy")
    )
    worker = _template(lwt, "workerTemplate", lwt_field, namespace, readers, optional=False)
    leader = _template(lwt, "leaderTemplate", lwt_field, namespace, readers) or worker
    annotations = v.string_map(metadata.get("annotations"), v.join(meta_field, "annotations"))
    exclusive = _exclusive(annotations, v.join(meta_field, "annotations"), lwt, lwt_field)
    queue_field = v.join(meta_field, "annotations", QUEUE_NAME)
    queue = v.text(annotations[QUEUE_NAME], queue_field, max_length=63) if QUEUE_NAME in annotations else None
    inherited = {key: value for key, value in annotations.items() if key.startswith(VOLCANO_PREFIX)}
    preemptible = preemptable({}, inherited, meta_field) is not False
    pods, gangs = [], []
    for index in range(replicas):
        ref = GangRef(
            namespace,
            f"{name}-{index}",
            SOURCE,
            manifest.name_field,
            queue=queue,
            queue_field=queue_field if queue else "",
        )
        extra = {EXCLUSIVE: exclusive.required} if exclusive is not None else {}
        group = [_pod(manifest, name, index, 0, size, leader, readers, ref, extra)]
        group += [
            _pod(manifest, name, index, worker_index, size, worker, readers, ref, extra)
            for worker_index in range(1, size)
        ]
        minimum: dict[str, int] = {}
        for pod in group:
            v.resources_add(minimum, pod.requests, lwt_field)
        gang = GangSpec(
            namespace=namespace,
            name=ref.name,
            min_member=1 if startup == "LeaderReady" else size,
            total_number=size,
            min_resources=minimum,
            wait_seconds=None,
            priority=priority_of(leader[1], leader[2]),
            queue=queue or "default",
            queue_field=ref.queue_field,
            preemptible=preemptible,
            restart_policy=_RESTARTS[restart],
            source_format=SOURCE,
            declaration=manifest.obj,
            field=manifest.name_field,
        )
        ask_apply(gang, exclusive)
        gangs.append(gang)
        pods += group
    owner_ask(manifest, pods)  # KAI's topology annotations on the LeaderWorkerSet, their top owner
    return Loaded(object_name=f"leaderworkerset.{GROUP}/{name}", gangs=gangs, pods=pods)


def _exclusive(annotations: dict[str, str], field: str, lwt: dict, lwt_field: str) -> TopologyAsk | None:
    """The exclusive-topology ask of every group's gang; subgroups refused, naming the key."""
    if SUBGROUP_EXCLUSIVE in annotations:
        raise v.DeclarationError(v.join(field, SUBGROUP_EXCLUSIVE), _SUBGROUPS)
    if lwt.get("subGroupPolicy") is not None:
        raise v.DeclarationError(v.join(lwt_field, "subGroupPolicy"), _SUBGROUPS)
    if EXCLUSIVE not in annotations:
        return None
    where = v.join(field, EXCLUSIVE)
    return TopologyAsk(required=label_key(annotations[EXCLUSIVE], where), field=where, exclusive=True)


def _restart_policy(value, field: str) -> str:
    """LWS's enum; the message avoids spelling out its fourth value, which reads as Python's."""
    if not isinstance(value, str) or value not in _RESTARTS:
        raise v.DeclarationError(
            field,
            f"{v.shown(value)} is not a restart policy of LeaderWorkerSet: RecreateGroupOnPodRestart or "
            "RecreateGroupAfterStart (recreate the group), Default (replaces only the failed pod; "
            "deprecated for its newer name, listed in docs/declaring-gangs.md)",
        )
    return value


def _template(lwt, key, lwt_field, namespace, readers, *, optional=True):
    """(metadata, pod spec, spec's field, template's field) of ``leaderTemplate`` or
    ``workerTemplate``; None for an absent optional one."""
    field = v.join(lwt_field, key)
    if optional and lwt.get(key) is None:
        return None
    template = v.mapping(lwt.get(key), field, optional=False)
    metadata = v.mapping(template.get("metadata"), v.join(field, "metadata"))
    pod = v.mapping(template.get("spec"), v.join(field, "spec"), optional=False)
    template_gang_refuse(
        template, pod, field, namespace, readers, "the LeaderWorkerSet makes one gang per group"
    )
    return metadata, pod, v.join(field, "spec"), field


def _pod(manifest, name, index, worker_index, size, template, readers, ref, extra) -> PodSpec:
    """One pod as the LWS controller and its pod webhook make it: the template's, with the
    group's labels and annotations (LWS's own keys win over the template's)."""
    metadata, pod, _, field = template
    meta_field = v.join(field, "metadata")
    labels = v.string_map(metadata.get("labels"), v.join(meta_field, "labels"))
    annotations = v.string_map(metadata.get("annotations"), v.join(meta_field, "annotations"))
    leader = f"{name}-{index}"
    labels = {**labels, SET_NAME: name, GROUP_INDEX: str(index), WORKER_INDEX: str(worker_index)}
    annotations = {**annotations, **extra, SIZE: str(size), GROUP_NAME: ref.name}
    if worker_index:
        annotations[LEADER_NAME] = leader
    return pod_spec(
        namespace=ref.namespace,
        name=f"{leader}-{worker_index}" if worker_index else leader,
        metadata={**metadata, "labels": labels, "annotations": annotations},
        spec=pod,
        field=field,
        readers=readers,
        name_field=v.join(manifest.path, "metadata", "name"),
        gang=ref,
    )
