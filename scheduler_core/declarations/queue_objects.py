"""Queue manifests as cluster objects on ``Loaded.objects``, and the checks their readers share.

Each format module (``queues_volcano.py``, ``queues_kueue.py``, ``queues_kai.py``,
``queues_yunikorn.py``) reads its manifests into the specs of ``specs/queues.py`` and wraps each in
one of the objects below: ``object_name`` (kubectl's ``queue.scheduling.volcano.sh/ml``),
``write()`` and ``delete()``, which call ``services/queues.py``. Nothing is written when a
manifest is loaded, so a refused apply writes nothing; ``apply.py`` checks every queue spec of one
apply together (``queues_check``: unknown parent, cycle, max below guarantee) before the first
write.

The readers' rule: a key gangsched cannot honour is refused naming it, never dropped. A value that
equals the format's own default is accepted as if it were absent (docs/queue-manifests.md says what
gangsched does then).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler_core.specs.queues import FlavorSpec, LocalQueueSpec, QueueSpec

from . import validate as v
from .documents import Manifest


def keys_check(value: dict, field: str, known: dict[str, str]) -> None:
    """Refuse a key of ``value`` that is not in ``known`` (key -> why it is refused, or "" when it
    is read), naming it: a field gangsched cannot honour must not be silently dropped."""
    for key in value:
        where = v.join(field, str(key))
        if key not in known:
            readable = ", ".join(sorted(k for k, why in known.items() if not why))
            raise v.DeclarationError(where, f"gangsched does not read this key (it reads: {readable})")
        if known[key] and value[key] not in (None, {}, [], ""):
            raise v.DeclarationError(where, known[key])


def cluster_meta(manifest: Manifest, *, namespaced: bool = False) -> tuple[str, str | None, dict]:
    """name, namespace (for a namespaced kind: default ``default``) and metadata of an object."""
    meta_field = v.join(manifest.path, "metadata")
    metadata = v.mapping(manifest.obj.get("metadata"), meta_field)
    name = v.dns_subdomain(metadata.get("name"), v.join(meta_field, "name"))
    namespace = None
    if namespaced:
        namespace = v.dns_label(metadata.get("namespace", "default"), v.join(meta_field, "namespace"))
    return name, namespace, metadata


def spec_of(manifest: Manifest, known: dict[str, str], *, optional: bool = True) -> tuple[dict, str]:
    """The object's ``spec`` with its keys checked against ``known``, and its path."""
    field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), field, optional=optional)
    keys_check(spec, field, known)
    return spec, field


def positive_weight(value: Any, field: str) -> float:
    """A weight: a positive finite number (int, float or a quantity string such as ``"0.75"``)."""
    from scheduler_core.engine.quantity import QuantityError, parse_quantity

    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise v.DeclarationError(field, f"must be a positive number, not {v.kind_of(value)}")
    try:
        weight = float(parse_quantity(value))
    except (QuantityError, OverflowError):
        raise v.DeclarationError(field, f"{v.shown(value)} is not a number") from None
    if not 0 < weight <= 1e9:
        raise v.DeclarationError(
            field, f"{v.shown(value)} must be positive (and at most 1e9): gangsched divides by weight"
        )
    return weight


def boolean(value: Any, field: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise v.DeclarationError(field, f"must be true or false, not {v.shown(value)}")
    return value


# ---------------------------------------------------------------- the objects


@dataclass
class QueueObject:
    """A queue of the tree (Volcano/KAI Queue, Kueue Cohort or ClusterQueue, a YuniKorn queue)."""

    spec: QueueSpec
    kind: str  # kubectl's resource.group, e.g. "queue.scheduling.volcano.sh"
    status: str | None = None  # set by ``queues_write``

    @property
    def object_name(self) -> str:
        return f"{self.kind}/{self.spec.name}"

    def write(self) -> str:
        return self.status or "unchanged"  # written by ``queues_write``, parents first

    def delete(self) -> str:
        from scheduler_core.services.queues import queue_remove

        queue_remove(self.spec.name)
        return ""  # kubectl says "deleted"; nothing to add


@dataclass
class LocalQueueObject:
    spec: LocalQueueSpec
    kind: str = "localqueue.kueue.x-k8s.io"

    @property
    def object_name(self) -> str:
        return f"{self.kind}/{self.spec.name}"

    def write(self) -> str:
        from scheduler_core.services.queues import local_queue_put

        return local_queue_put(self.spec)

    def delete(self) -> str:
        from scheduler_core.services.queues import local_queue_remove

        local_queue_remove(self.spec.namespace, self.spec.name)
        return ""


@dataclass
class FlavorObject:
    spec: FlavorSpec
    kind: str = "resourceflavor.kueue.x-k8s.io"

    @property
    def object_name(self) -> str:
        return f"{self.kind}/{self.spec.name}"

    def write(self) -> str:
        from scheduler_core.services.queues import flavor_put

        return flavor_put(self.spec)

    def delete(self) -> str:
        from scheduler_core.services.queues import flavor_remove

        flavor_remove(self.spec.name)
        return ""


@dataclass
class QueueTreeObject:
    """Several queues declared by one object (YuniKorn's ConfigMap), parents before children:
    written in that order, deleted children first."""

    specs: list[QueueSpec]
    name: str  # e.g. "configmap/yunikorn-configs"
    statuses: list[str] | None = None  # set by ``queues_write``
    retired: dict[str, str] | None = None  # queues it no longer lists: deleted or closed

    @property
    def object_name(self) -> str:
        return self.name

    def write(self) -> str:
        statuses = self.statuses or ["unchanged"]  # written by ``queues_write``, parents first
        if self.retired:
            return "configured"
        if all(status == statuses[0] for status in statuses):
            return statuses[0]
        return "configured"

    def delete(self) -> str:
        from scheduler_core.services.queues import queue_remove

        for spec in reversed(self.specs):
            queue_remove(spec.name)
        return f"{len(self.specs)} queues"


#: The objects that are queues (``delete -f`` removes them after the rest, children first).
QUEUE_OBJECTS = (QueueObject, QueueTreeObject)


def queues_write(loaded: list[Any]) -> None:
    """Write every queue of one apply at once: the tree is checked as a whole and written parents
    first whatever the order of the objects (``services.queues.queues_put``). A Kueue cohort that
    ClusterQueues or Cohorts name without declaring it exists implicitly, as in Kueue: it is
    created as an empty cohort. Each object's ``write`` then reports its own status."""
    from scheduler_core.models import Queue
    from scheduler_core.services.queues import queues_put, queues_retire

    specs = queue_specs(loaded)
    if not specs:
        return
    declared = {spec.name for spec in specs}
    missing = {
        spec.parent: spec
        for spec in specs
        if spec.extra.get("implicit_parent") and spec.parent and spec.parent not in declared
    }
    existing = set(Queue.objects.filter(name__in=list(missing)).values_list("name", flat=True))
    implicit = [
        QueueSpec(name=name, source_format=child.source_format, field=child.field, cohort=True)
        for name, child in missing.items()
        if name not in existing
    ]
    statuses = dict(zip([spec.name for spec in implicit + specs], queues_put(implicit + specs), strict=True))
    for item in loaded:
        for obj in item.objects:
            if isinstance(obj, QueueObject):
                obj.status = statuses[obj.spec.name]
            elif isinstance(obj, QueueTreeObject):
                obj.statuses = [statuses[spec.name] for spec in obj.specs]
                # The whole tree is declared here: a queue it no longer lists is retired.
                source = obj.specs[0].source_format if obj.specs else None
                if source is not None:
                    obj.retired = queues_retire(source, {spec.name for spec in obj.specs})


def queue_specs(loaded: list[Any]) -> list[QueueSpec]:
    """Every queue spec of one apply's loaded objects (``Loaded``), in order."""
    specs: list[QueueSpec] = []
    for item in loaded:
        for obj in item.objects:
            if isinstance(obj, QueueObject):
                specs.append(obj.spec)
            elif isinstance(obj, QueueTreeObject):
                specs.extend(obj.specs)
    return specs


def quantity(resource: str, value: Any, field: str) -> int:
    """One Kubernetes quantity of ``resource`` as the engine's integer; errors name ``field``."""
    try:
        return v.resources({resource: value}, "")[resource]
    except v.DeclarationError as error:
        raise v.DeclarationError(field, error.reason) from None
