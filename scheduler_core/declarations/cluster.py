"""Cluster objects, as KWOK users ``kubectl apply`` them: ``v1 Node``, ``v1 Namespace`` and
``scheduling.k8s.io/v1 PriorityClass``.

- ``Node`` (simulated backend only): ``metadata.name``, ``metadata.labels``, ``spec.taints``,
  ``spec.unschedulable``, ``status.allocatable`` (else ``status.capacity``) -> a Node row,
  created or updated (``services/nodes.node_apply``);
- ``Namespace``: ``metadata.name`` -> nothing stored: every namespace exists implicitly; it is
  accepted so that an incident's manifests apply as they are (``created`` when no gang or pod
  uses it yet, else ``unchanged``);
- ``PriorityClass``: ``metadata.name``, ``value``, ``globalDefault``, ``description`` -> a
  PriorityClass row. Kueue's WorkloadPriorityClass, a class of other names, is
  ``kueue_priority.py``'s, written with the functions here.

Each object is a ``ClusterObject`` on ``Loaded.objects``: validated when loaded (so a refused
manifest writes nothing), written by ``apply.py`` in the apply's transaction, removed by
``manage.py delete -f``.

Priority resolution (``priority_resolve`` / ``priority_default``), as Kubernetes' priority
admission: a ``priorityClassName`` names a PriorityClass row (or one applied earlier in the same
apply), else an entry of ``settings.GANGSCHED_PRIORITY_CLASSES`` (the built-in defaults, with
``system-cluster-critical`` and ``system-node-critical``); a pod naming no class gets the
``globalDefault`` class's value, else 0. An unknown class is an error naming it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from scheduler_core.services.named_rows import CREATED, UNCHANGED, named_row_put

from . import node_constraints
from . import validate as v
from .documents import Manifest
from .spec import Loaded

#: Kubernetes' built-in priority classes.
BUILTIN_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
DEFAULT_PRIORITY_CLASSES = {"high": 1000, "default": 0, "low": -100}
#: Kubernetes caps user-defined priorities at one billion; higher values are the system's.
MAX_USER_PRIORITY = 1_000_000_000
PRIORITY_GROUP = "scheduling.k8s.io"
PRIORITY_API_VERSION = f"{PRIORITY_GROUP}/v1"
#: The permission to create, change and delete queues (the operators group has it).
QUEUE_PERMISSION = "scheduler_core.change_queue"
#: The permission to create, change and delete topologies and HyperNodes.
TOPOLOGY_PERMISSION = "scheduler_core.change_topology"


def cluster_meta(manifest: Manifest) -> tuple[str, dict[str, Any]]:
    """The name and metadata of a cluster-scoped object."""
    metadata = v.mapping(manifest.obj.get("metadata"), v.join(manifest.path, "metadata"))
    return v.dns_subdomain(metadata.get("name"), v.join(manifest.path, "metadata", "name")), metadata


# ---------------------------------------------------------------- Node


@dataclass
class NodeObject:
    name: str
    allocatable: dict[str, Any]  # Kubernetes quantities, as written (validated)
    labels: dict[str, str]
    taints: list[dict[str, str]]
    unschedulable: bool

    @property
    def object_name(self) -> str:
        return f"node/{self.name}"

    def write(self) -> str:
        from scheduler_core.services.nodes import node_apply

        return node_apply(
            name=self.name,
            allocatable=self.allocatable,
            labels=self.labels,
            taints=self.taints,
            unschedulable=self.unschedulable,
        )[1]

    def delete(self) -> str:
        from scheduler_core.services.delete import node_delete

        failed = node_delete(name=self.name)
        return f"{failed} pods failed" if failed else ""


def load_node(manifest: Manifest, readers=()) -> Loaded:
    if getattr(settings, "CLUSTER_BACKEND", "simulated") != "simulated":
        raise v.DeclarationError(
            v.join(manifest.path, "kind"),
            "Node objects can be applied only to the simulated cluster (CLUSTER_BACKEND=simulated)",
        )
    name, metadata = cluster_meta(manifest)
    labels = v.string_map(metadata.get("labels"), v.join(manifest.path, "metadata", "labels"))
    spec_field, status_field = v.join(manifest.path, "spec"), v.join(manifest.path, "status")
    spec = v.mapping(manifest.obj.get("spec"), spec_field)
    status = v.mapping(manifest.obj.get("status"), status_field)
    key = "allocatable" if status.get("allocatable") else "capacity"
    resources_field = v.join(status_field, key)
    allocatable = dict(v.mapping(status.get(key), resources_field))
    if not allocatable:
        raise v.DeclarationError(
            v.join(status_field, "allocatable"), f"node {name} needs status.allocatable (or status.capacity)"
        )
    v.resources(allocatable, resources_field)
    taints = node_constraints.taints(spec.get("taints"), v.join(spec_field, "taints"))
    unschedulable = spec.get("unschedulable", False)
    if not isinstance(unschedulable, bool):
        raise v.DeclarationError(v.join(spec_field, "unschedulable"), "must be true or false")
    node = NodeObject(name, allocatable, labels, taints, unschedulable)
    return Loaded(object_name=node.object_name, objects=[node])


# ---------------------------------------------------------------- Namespace


@dataclass
class NamespaceObject:
    name: str

    @property
    def object_name(self) -> str:
        return f"namespace/{self.name}"

    def write(self) -> str:
        from scheduler_core.models import Gang, Member

        used = (
            Gang.objects.filter(namespace=self.name).exists()
            or Member.objects.filter(namespace=self.name).exists()
        )
        return UNCHANGED if used else CREATED

    def delete(self) -> str:
        from scheduler_core.services.delete import namespace_delete

        return f"{namespace_delete(namespace=self.name)} pods deleted"


def load_namespace(manifest: Manifest, readers=()) -> Loaded:
    metadata = v.mapping(manifest.obj.get("metadata"), v.join(manifest.path, "metadata"))
    name = v.dns_label(metadata.get("name"), v.join(manifest.path, "metadata", "name"))
    namespace = NamespaceObject(name)
    return Loaded(object_name=namespace.object_name, objects=[namespace])


# ---------------------------------------------------------------- PriorityClass


@dataclass
class PriorityClassObject:
    name: str
    value: int
    global_default: bool = False
    description: str = ""
    field: str = ""

    @property
    def object_name(self) -> str:
        return f"priorityclass.{PRIORITY_GROUP}/{self.name}"

    def write(self) -> str:
        from scheduler_core.models import PriorityClass

        fields = {"value": self.value, "global_default": self.global_default, "description": self.description}
        if self.global_default:
            other = PriorityClass.objects.filter(global_default=True).exclude(name=self.name).first()
            if other is not None:
                raise v.DeclarationError(
                    v.join(self.field, "globalDefault"),
                    f"priority class {other.name!r} is already the global default (only one may be)",
                )
        return named_row_put(PriorityClass, self.name, fields)

    def delete(self) -> str:
        from scheduler_core.models import PriorityClass

        return named_row_delete(PriorityClass, self.name, "priorityclass")


def named_row_delete(model: Any, name: str, kind: str) -> str:
    from scheduler_core.services.delete import NotFound

    deleted, _ = model.objects.filter(name=name).delete()
    if not deleted:
        raise NotFound(f'{kind} "{name}" not found')
    return ""


def description_read(manifest: Manifest) -> str:
    description = manifest.obj.get("description") or ""
    if not isinstance(description, str):
        raise v.DeclarationError(v.join(manifest.path, "description"), "must be a string")
    return description


def priority_class_read(manifest: Manifest) -> PriorityClassObject:
    name, _ = cluster_meta(manifest)
    value = v.integer(
        manifest.obj.get("value"), v.join(manifest.path, "value"), minimum=-(2**31), maximum=MAX_USER_PRIORITY
    )
    default = manifest.obj.get("globalDefault", False)
    if not isinstance(default, bool):
        raise v.DeclarationError(v.join(manifest.path, "globalDefault"), "must be true or false")
    return PriorityClassObject(name, value, default, description_read(manifest), manifest.path)


def load_priority_class(manifest: Manifest, readers=()) -> Loaded:
    priority_class = priority_class_read(manifest)
    return Loaded(object_name=priority_class.object_name, objects=[priority_class])


#: Kinds that change the cluster for everyone, and the permission applying one through the API
#: takes (the operators group has both; a Namespace changes nothing). Seeing every gang is not
#: enough: a read-only viewer must not add nodes or reorder everyone's priorities.
OPERATOR_KINDS = {
    ("", "Node"): "scheduler_core.change_node",
    (PRIORITY_GROUP, "PriorityClass"): "scheduler_core.change_priorityclass",
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): "scheduler_core.change_workloadpriorityclass",
    # Queues in every format gangsched reads: only operators create them. YuniKorn's
    # are in the yunikorn-configs ConfigMap, the only ConfigMap gangsched reads.
    ("scheduling.volcano.sh", "Queue"): QUEUE_PERMISSION,
    ("scheduling.run.ai", "Queue"): QUEUE_PERMISSION,
    ("kueue.x-k8s.io", "ClusterQueue"): QUEUE_PERMISSION,
    ("kueue.x-k8s.io", "Cohort"): QUEUE_PERMISSION,
    ("kueue.x-k8s.io", "LocalQueue"): QUEUE_PERMISSION,
    ("kueue.x-k8s.io", "ResourceFlavor"): QUEUE_PERMISSION,
    ("", "ConfigMap"): QUEUE_PERMISSION,
    # Topology: the cluster's network, the operators' to declare.
    ("kueue.x-k8s.io", "Topology"): TOPOLOGY_PERMISSION,
    ("kai.scheduler", "Topology"): TOPOLOGY_PERMISSION,
    ("topology.volcano.sh", "HyperNode"): TOPOLOGY_PERMISSION,
}


# ---------------------------------------------------------------- priority resolution


@dataclass
class _Classes:
    values: dict[str, int] = field(default_factory=dict)
    default: int | None = None  # the globalDefault class's value


_resolving: ContextVar[_Classes | None] = ContextVar("priority_classes", default=None)


def _classes(applied: Iterable[PriorityClassObject] = ()) -> _Classes:
    from scheduler_core.models import PriorityClass

    classes = _Classes(dict(BUILTIN_PRIORITY_CLASSES))
    classes.values.update(getattr(settings, "GANGSCHED_PRIORITY_CLASSES", DEFAULT_PRIORITY_CLASSES))
    for name, value, default in PriorityClass.objects.values_list("name", "value", "global_default"):
        classes.values[name] = value
        if default:
            classes.default = value
    for pc in applied:  # classes in the same apply, as kubectl would have created them first
        classes.values[pc.name] = pc.value
        if pc.global_default:
            classes.default = pc.value
    return classes


@contextmanager
def priority_classes(manifests: Iterable[Manifest]) -> Iterator[None]:
    """Resolve priorities against the classes stored plus those among ``manifests``, read once."""
    applied = [
        priority_class_read(m)
        for m in manifests
        if (m.api_version, m.kind) == (PRIORITY_API_VERSION, "PriorityClass")  # others: refused later
    ]
    token = _resolving.set(_classes(applied))
    try:
        yield
    finally:
        _resolving.reset(token)


def _current() -> _Classes:
    return _resolving.get() or _classes()


def priority_resolve(class_name: Any, field: str) -> int:
    classes = _current().values
    if not isinstance(class_name, str) or class_name not in classes:
        raise v.DeclarationError(
            field,
            f"unknown priority class {v.shown(class_name)}: apply a PriorityClass of that name first "
            f"(known: {', '.join(sorted(classes))})",
        )
    return classes[class_name]


def priority_default() -> int:
    """A pod naming no priority class: the globalDefault class's value, else 0."""
    default = _current().default
    return 0 if default is None else default
