"""Kueue's WorkloadPriorityClass, and the label that gives a workload its value.

A ``WorkloadPriorityClass`` (``kueue.x-k8s.io/v1beta1`` and ``v1beta2``, cluster-scoped):
``metadata.name``, ``value`` (int32, required), ``description`` -> a WorkloadPriorityClass row,
created, configured or unchanged on apply and removed by ``delete -f``. Its names are Kueue's
own, apart from PriorityClass's: a label naming ``high`` means this kind's ``high`` only, and a
PriorityClass of the same name is another class. Through the API only operators apply one
(``cluster.OPERATOR_KINDS``): it reorders everyone's gangs.

The label ``kueue.x-k8s.io/priority-class`` on a workload Kueue manages names one, and the
workload's priority is its value: Kueue's job framework looks for that label before anything
else (``jobframework.ExtractPriority``, ``pkg/util/priority``), the pods' PriorityClass deciding
only without it. The pods keep their own pod priority. An empty label names no class, as Kueue
reads it. An unknown class is refused naming the label and the class, where Kueue would leave
the job without a workload until the class appears.

Names resolve against the stored rows plus the classes of the same apply, read once
(``workload_priority_classes``), so a file may hold a class and the workloads naming it, as
``cluster.priority_classes`` does for PriorityClass.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from . import validate as v
from .cluster import cluster_meta, description_read, named_row_delete, named_row_put
from .documents import Manifest
from .spec import Loaded

GROUP = "kueue.x-k8s.io"
VERSIONS = (f"{GROUP}/v1beta1", f"{GROUP}/v1beta2")
KIND = "WorkloadPriorityClass"
LABEL = f"{GROUP}/priority-class"


@dataclass
class WorkloadPriorityClassObject:
    name: str
    value: int
    description: str = ""

    @property
    def object_name(self) -> str:
        return f"workloadpriorityclass.{GROUP}/{self.name}"

    def write(self) -> str:
        from scheduler_core.models import WorkloadPriorityClass

        fields = {"value": self.value, "description": self.description}
        return named_row_put(WorkloadPriorityClass, self.name, fields)

    def delete(self) -> str:
        from scheduler_core.models import WorkloadPriorityClass

        return named_row_delete(WorkloadPriorityClass, self.name, "workloadpriorityclass")


def read(manifest: Manifest) -> WorkloadPriorityClassObject:
    name, _ = cluster_meta(manifest)
    value = v.integer(
        manifest.obj.get("value"), v.join(manifest.path, "value"), minimum=-(2**31), maximum=2**31 - 1
    )
    return WorkloadPriorityClassObject(name, value, description_read(manifest))


def load(manifest: Manifest, readers=()) -> Loaded:
    wpc = read(manifest)
    return Loaded(object_name=wpc.object_name, objects=[wpc])


# ---------------------------------------------------------------- the label


_resolving: ContextVar[dict[str, int] | None] = ContextVar("workload_priority_classes", default=None)


def _stored() -> dict[str, int]:
    from scheduler_core.models import WorkloadPriorityClass

    return dict(WorkloadPriorityClass.objects.values_list("name", "value"))


@contextmanager
def workload_priority_classes(manifests: Iterable[Manifest]) -> Iterator[None]:
    """Resolve labels against the classes stored plus those among ``manifests``."""
    known = _stored()
    for manifest in manifests:
        if manifest.kind == KIND and manifest.api_version in VERSIONS:  # others: refused later
            wpc = read(manifest)
            known[wpc.name] = wpc.value
    token = _resolving.set(known)
    try:
        yield
    finally:
        _resolving.reset(token)


def label_priority(labels: dict[str, str], labels_field: str, otherwise: int | None) -> int | None:
    """The value of the class the label names; ``otherwise`` (what the pods' PriorityClass
    gives) without the label."""
    name = labels.get(LABEL)
    if not name:
        return otherwise
    known = _resolving.get()
    if known is None:
        known = _stored()
    if name not in known:
        listed = ", ".join(sorted(known)) or "none"
        raise v.DeclarationError(
            v.join(labels_field, LABEL),
            f"unknown WorkloadPriorityClass {name!r}: apply a {KIND} ({GROUP}) of that name first "
            f"(known: {listed})",
        )
    return known[name]
