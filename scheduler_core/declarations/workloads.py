"""Plain Kubernetes workloads: Pod, Job, Deployment, StatefulSet, and the pod template reader.

In the simulated cluster gangsched plays the workload controllers, so each workload becomes the
pods Kubernetes would create: a Job ``parallelism`` pods (default 1), a Deployment or
StatefulSet ``replicas`` pods (default 1), named ``<name>-<i>``, each with the template's
labels, annotations and spec. The gang a pod belongs to is read from its labels and annotations
by the pod readers of the other formats (``registry.POD_READERS``), passed in as ``readers``;
a Job Kueue manages (its ``kueue.x-k8s.io/queue-name`` label) is their gang itself (``kueue.py``).

A pod's requests are the sum of its containers' requests, a container's limit standing in for a
request it does not set (as Kubernetes defaults it); an init container runs alone, so the pod
needs at least the largest init container's request, resource by resource.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings

from . import kueue, node_constraints
from . import validate as v
from .cluster import priority_default, priority_resolve
from .deadlines import pod_deadline
from .documents import Manifest
from .pod_fields import pod_spec_gang, preemptable
from .pod_queues import pod_queue
from .spec import GangRef, Loaded, PodSpec
from .topology_keys import annotations_ask

PodReader = Callable[[str, dict[str, str], dict[str, str], str], GangRef | None]

DURATION_ANNOTATION = "gangsched.io/duration-seconds"
#: Kubernetes caps user-defined priorities at one billion; higher values are the system's.
MAX_USER_PRIORITY = 1_000_000_000


def scheduler_name() -> str:
    return getattr(settings, "GANGSCHED_SCHEDULER_NAME", "gangsched")


def is_ours(chosen: str) -> bool:
    """A pod's schedulerName names gangsched: its name or one of ``GANGSCHED_SCHEDULER_ALIASES``."""
    return chosen == scheduler_name() or chosen in getattr(settings, "GANGSCHED_SCHEDULER_ALIASES", ())


def priority_of(spec: dict[str, Any], field: str) -> int | None:
    """``priority`` or ``priorityClassName`` (both: they must agree, as Kubernetes' admission
    requires); None when neither is given. Classes resolve as ``cluster.priority_resolve`` says:
    applied PriorityClass objects, then ``GANGSCHED_PRIORITY_CLASSES`` and the system classes."""
    explicit = spec.get("priority")
    if explicit is not None:
        explicit = v.integer(explicit, v.join(field, "priority"), minimum=-(2**31), maximum=MAX_USER_PRIORITY)
    class_name = spec.get("priorityClassName")
    if class_name is None:
        return explicit
    value = priority_resolve(class_name, v.join(field, "priorityClassName"))
    if explicit is not None and explicit != value:
        raise v.DeclarationError(
            v.join(field, "priority"),
            f"{explicit} disagrees with priority class {class_name!r}, which is {value}",
        )
    return value


def pod_requests(spec: dict[str, Any], field: str) -> dict[str, int]:
    total: dict[str, int] = {}
    containers = v.sequence(spec.get("containers"), v.join(field, "containers"))
    if not containers:
        raise v.DeclarationError(v.join(field, "containers"), "a pod needs at least one container")
    for index, container in enumerate(containers):
        v.resources_add(total, container_requests(container, v.join(field, "containers", index)), field)
    for index, container in enumerate(
        v.sequence(spec.get("initContainers"), v.join(field, "initContainers"))
    ):
        for resource, amount in container_requests(container, v.join(field, "initContainers", index)).items():
            total[resource] = max(total.get(resource, 0), amount)
    return total


def container_requests(container: Any, field: str) -> dict[str, int]:
    """One container's requests, its limits standing in for those it does not set."""
    resources = v.mapping(v.mapping(container, field).get("resources"), v.join(field, "resources"))
    limits = v.resources(resources.get("limits"), v.join(field, "resources", "limits"))
    requests = v.resources(resources.get("requests"), v.join(field, "resources", "requests"))
    return {**limits, **requests}


def pod_spec(
    *,
    namespace: str,
    name: str,
    metadata: dict[str, Any],
    spec: dict[str, Any],
    field: str,
    readers: Sequence[PodReader],
    name_field: str,
    gang: GangRef | None = None,
) -> PodSpec:
    """One pod from its metadata and spec (a Pod's, or a template's); ``field`` is the path of
    the object holding ``metadata`` and ``spec``; ``gang`` overrides what the readers find."""
    v.dns_subdomain(name, name_field)
    meta_field, spec_field = v.join(field, "metadata"), v.join(field, "spec")
    labels = v.string_map(metadata.get("labels"), v.join(meta_field, "labels"))
    annotations = v.string_map(metadata.get("annotations"), v.join(meta_field, "annotations"))
    if gang is None:
        own = pod_spec_gang(namespace, spec, spec_field)
        gang = pod_gang_read(readers, namespace, labels, annotations, meta_field, first=own)
    chosen = spec.get("schedulerName") or "default-scheduler"
    if not isinstance(chosen, str):
        raise v.DeclarationError(
            v.join(spec_field, "schedulerName"), f"must be a string, not {v.kind_of(chosen)}"
        )
    if not is_ours(chosen) and gang is None:
        raise v.DeclarationError(
            v.join(spec_field, "schedulerName"),
            f"pod {namespace}/{name} belongs to scheduler {chosen!r}: set schedulerName: {scheduler_name()} "
            "or declare its gang (a PodGroup label, Koordinator or YuniKorn annotations)",
        )
    ask = annotations_ask(annotations, v.join(meta_field, "annotations"))
    if ask is not None:
        if gang is None:
            raise v.DeclarationError(
                ask.field,
                f"pod {namespace}/{name} belongs to no gang: a topology constraint keeps a gang together",
            )
        gang.topology = ask
    duration = annotations.get(DURATION_ANNOTATION)
    priority = priority_of(spec, spec_field)
    queue, queue_field = _queue_of(gang, labels, annotations, meta_field)
    return PodSpec(
        namespace=namespace,
        name=name,
        field=name_field,
        gang=gang,
        requests=pod_requests(spec, spec_field),
        priority=priority_default() if priority is None else priority,
        node_selector=v.string_map(spec.get("nodeSelector"), v.join(spec_field, "nodeSelector")),
        tolerations=node_constraints.tolerations(spec.get("tolerations"), v.join(spec_field, "tolerations")),
        affinity=node_constraints.node_affinity_terms(spec.get("affinity"), v.join(spec_field, "affinity")),
        duration_seconds=None
        if duration is None
        else v.non_negative_seconds(duration, v.join(meta_field, "annotations", DURATION_ANNOTATION)),
        deadline_seconds=pod_deadline(spec, spec_field),
        labels=labels,
        annotations=annotations,
        scheduler_name=chosen,
        preemptible=_preemptible(labels, annotations, meta_field),
        queue=queue,
        queue_field=queue_field,
    )


def _queue_of(gang: GangRef | None, labels: dict, annotations: dict, field: str) -> tuple[str | None, str]:
    """The queue the pod's own keys name (``pod_queues.py``) and the key naming it; its gang
    reference asks for it too."""
    asked = pod_queue(labels, annotations, field)
    if asked is None:
        return (gang.queue, gang.queue_field) if gang is not None else (None, "")
    queue, where = asked
    if gang is not None:
        if gang.queue and gang.queue != queue:
            raise v.DeclarationError(where, f"names queue {queue!r} but {gang.field} asks for {gang.queue!r}")
        if not gang.queue:
            gang.queue, gang.queue_field = queue, where
    return queue, where


def pod_gang_read(
    readers: Sequence[PodReader],
    namespace: str,
    labels: dict,
    annotations: dict,
    field: str,
    *,
    first: GangRef | None = None,
) -> GangRef | None:
    """The pod's gang: ``first`` (what the pod's spec names: upstream's schedulingGroup or
    workloadRef), else the first reader (``registry.POD_READERS`` order) that recognises it;
    two readers naming different gangs, or declaring one gang differently, is an error."""
    found = [ref for ref in (reader(namespace, labels, annotations, field) for reader in readers) if ref]
    found = [first, *found] if first is not None else found
    if not found:
        return None
    first = found[0]
    for other in found[1:]:
        if other.key != first.key:
            raise v.DeclarationError(
                other.field,
                f"names gang {other.key} but {first.field} names gang {first.key}: a pod belongs to one gang",
            )
        if other.queue and first.queue and other.queue != first.queue:
            raise v.DeclarationError(
                other.field, f"asks for queue {other.queue!r} but {first.field} asks for {first.queue!r}"
            )
        if not first.queue:
            first.queue, first.queue_field = other.queue, other.queue_field
        if other.spec is not None:
            if first.spec is None:
                first.spec, first.siblings = other.spec, other.siblings
            elif _comparable(first.spec) != _comparable(other.spec):
                raise v.DeclarationError(
                    other.field, f"declares gang {first.key} differently from {first.field}"
                )
    return first


def _comparable(gang) -> dict:
    return gang.settings() | {"declaration": None}


def _preemptible(labels: dict[str, str], annotations: dict[str, str], field: str) -> bool:
    return preemptable(labels, annotations, field) is not False


def object_meta(manifest: Manifest) -> tuple[str, str, dict[str, Any]]:
    """namespace (default ``default``), validated name and metadata of a manifest object.
    ``generateName`` without a name is refused as ``kubectl apply`` refuses it: applying again
    must find the same object (Kueue's samples use it with ``kubectl create``)."""
    metadata = v.mapping(manifest.obj.get("metadata"), v.join(manifest.path, "metadata"))
    if metadata.get("name") is None and metadata.get("generateName") is not None:
        raise v.DeclarationError(
            v.join(manifest.path, "metadata", "generateName"),
            "apply needs metadata.name, as kubectl apply does (it cannot use generateName): name the object",
        )
    name = v.dns_subdomain(metadata.get("name"), v.join(manifest.path, "metadata", "name"))
    namespace = v.dns_label(
        metadata.get("namespace", "default"), v.join(manifest.path, "metadata", "namespace")
    )
    return namespace, name, metadata


def template_pods(
    manifest: Manifest,
    count_key: str,
    readers: Sequence[PodReader],
    *,
    default: int = 1,
    count: int | None = None,
    gang: GangRef | None = None,
) -> tuple[str, list[PodSpec]]:
    """The pods of a workload with ``spec.template``: ``spec.<count_key>`` copies (``count``,
    when the caller counted them), each in ``gang`` when given, else the gang its keys name."""
    namespace, name, _ = object_meta(manifest)
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    if count is None:
        count = v.member_count(spec.get(count_key, default), v.join(spec_field, count_key), minimum=0)
    template_field = v.join(spec_field, "template")
    template = v.mapping(spec.get("template"), template_field, optional=False)
    metadata = v.mapping(template.get("metadata"), v.join(template_field, "metadata"))
    pod = v.mapping(template.get("spec"), v.join(template_field, "spec"), optional=False)
    pods = [
        pod_spec(
            namespace=namespace,
            name=f"{name}-{index}",
            metadata=metadata,
            spec=pod,
            field=template_field,
            readers=readers,
            name_field=v.join(manifest.path, "metadata", "name"),
            gang=gang,
        )
        for index in range(count)
    ]
    owner_ask(manifest, pods)
    return name, pods


def owner_ask(manifest: Manifest, pods: list[PodSpec]) -> None:
    """KAI-Scheduler reads its topology annotations on the pods' top owner (a Job, a vcjob...):
    they apply to each pod's gang, and a pod's own annotations may not say otherwise."""
    meta_field = v.join(manifest.path, "metadata", "annotations")
    annotations = v.string_map((manifest.obj.get("metadata") or {}).get("annotations"), meta_field)
    ask = annotations_ask(annotations, meta_field)
    if ask is None:
        return
    for pod in pods:
        if pod.gang is None:
            raise v.DeclarationError(
                ask.field, f"pod {pod.key} belongs to no gang: a topology constraint keeps a gang together"
            )
        own = pod.gang.topology
        if own is not None and own is not ask and not own.same(ask):
            raise v.DeclarationError(
                own.field, f"asks for {own.shown()} but {ask.field} asks for {ask.shown()}"
            )
        pod.gang.topology = ask


def load_pod(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, metadata = object_meta(manifest)
    spec = v.mapping(manifest.obj.get("spec"), v.join(manifest.path, "spec"), optional=False)
    pod = pod_spec(
        namespace=namespace,
        name=name,
        metadata=metadata,
        spec=spec,
        field=manifest.path,
        readers=readers,
        name_field=v.join(manifest.path, "metadata", "name"),
    )
    pod.owner = controller_of(metadata, v.join(manifest.path, "metadata", "ownerReferences"))
    return Loaded(object_name=f"pod/{name}", pods=[pod])


def controller_of(metadata: dict[str, Any], field: str) -> str:
    """The pod's controller from its ``ownerReferences`` (the one with ``controller: true``) as
    ``kind.group/name``; empty for a bare pod, which no controller recreates."""
    for index, ref in enumerate(v.sequence(metadata.get("ownerReferences"), field)):
        ref = v.mapping(ref, v.join(field, index))
        if ref.get("controller") is True:
            kind = v.text(ref.get("kind"), v.join(field, index, "kind"), max_length=63)
            name = v.text(ref.get("name"), v.join(field, index, "name"))
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            return f"{kind.lower()}{'.' + group if group else ''}/{name}"
    return ""


def load_job(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    """``parallelism`` pods; a Job Kueue manages (its queue-name label) is also their gang."""
    namespace, name, metadata = object_meta(manifest)
    gang = kueue.job_gang(manifest, namespace, name, metadata)
    if gang is None:
        name, pods = template_pods(manifest, "parallelism", readers)
        return Loaded(object_name=f"job.batch/{name}", pods=pods)
    template_field = v.join(manifest.path, "spec", "template")
    template = v.mapping(manifest.obj["spec"].get("template"), template_field, optional=False)
    pod = v.mapping(template.get("spec"), v.join(template_field, "spec"), optional=False)
    template_gang_refuse(
        template, pod, template_field, namespace, readers, f"the Job is Kueue's ({gang.queue_field})"
    )
    ref = GangRef(
        namespace, name, gang.source_format, gang.field, queue=gang.queue, queue_field=gang.queue_field
    )
    name, pods = template_pods(manifest, "parallelism", readers, count=gang.total_number, gang=ref)
    template_priority = priority_of(pod, v.join(template_field, "spec"))
    gang.priority = kueue.workload_priority(metadata, v.join(manifest.path, "metadata"), template_priority)
    return Loaded(object_name=f"job.batch/{name}", gangs=[gang], pods=pods)


def template_gang_refuse(template: dict, pod: dict, field: str, namespace: str, readers, owner: str) -> None:
    """A workload whose controller makes its pods' gang (Kueue's Job, a LeaderWorkerSet...;
    ``owner`` says whose, e.g. "the Job is Kueue's (<its queue-name key>)"): a template naming a
    gang of its own (a PodGroup label, Kueue's pod-group-name, upstream's schedulingGroup...)
    would put its pods in two gangs."""
    meta_field, spec_field = v.join(field, "metadata"), v.join(field, "spec")
    metadata = v.mapping(template.get("metadata"), meta_field)
    labels = v.string_map(metadata.get("labels"), v.join(meta_field, "labels"))
    annotations = v.string_map(metadata.get("annotations"), v.join(meta_field, "annotations"))
    first = pod_spec_gang(namespace, pod, spec_field)
    own = pod_gang_read(readers, namespace, labels, annotations, meta_field, first=first)
    if own is not None:
        raise v.DeclarationError(
            own.field,
            f"names gang {own.key} but {owner}: its pods are that workload's gang; remove one of the two",
        )


def load_deployment(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    name, pods = template_pods(manifest, "replicas", readers)
    return Loaded(object_name=f"deployment.apps/{name}", pods=pods)


def load_statefulset(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    name, pods = template_pods(manifest, "replicas", readers)
    return Loaded(object_name=f"statefulset.apps/{name}", pods=pods)
