"""What a pod's own fields say in the formats that extend plain Kubernetes pods.

The pod reader (``workloads.pod_spec``) reads these on every pod, whatever format declared it,
and the format modules (``upstream.py``, ``volcano.py``) build their pods through that reader; the
pod-level keys live here so that both sides import them and neither imports the other:

- upstream Kubernetes gang scheduling: ``spec.schedulingGroup`` (v1alpha2) and
  ``spec.workloadRef`` (v1alpha1) name the pod's gang (``pod_spec_gang``);
- Volcano: ``volcano.sh/preemptable`` (annotation, else label) marks a pod, a PodGroup or a Job
  preemptible or not (``preemptable``).
"""

from __future__ import annotations

from typing import Any

from . import validate as v
from .spec import GangRef

GROUP = "scheduling.k8s.io"
V1ALPHA1, V1ALPHA2 = f"{GROUP}/v1alpha1", f"{GROUP}/v1alpha2"
SOURCE_V1ALPHA1, SOURCE_V1ALPHA2 = "workload-v1alpha1", "podgroup-v1alpha2"

PREEMPTABLE = "volcano.sh/preemptable"
#: Go's strconv.ParseBool, which Volcano reads the preemptable key with.
_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "true", "TRUE", "True"), True),
    **dict.fromkeys(("0", "f", "F", "false", "FALSE", "False"), False),
}


def preemptable(labels: dict[str, str], annotations: dict[str, str], field: str) -> bool | None:
    """``volcano.sh/preemptable`` (the annotation first, then the label, as Volcano reads it)."""
    for kind, values in (("annotations", annotations), ("labels", labels)):
        if PREEMPTABLE in values:
            value = values[PREEMPTABLE]
            if value not in _BOOLS:
                raise v.DeclarationError(v.join(field, kind, PREEMPTABLE), f"{value!r} is not true or false")
            return _BOOLS[value]
    return None


def pod_spec_gang(namespace: str, spec: dict[str, Any], field: str) -> GangRef | None:
    """The gang a pod's own spec names: ``schedulingGroup`` (v1alpha2) or ``workloadRef``
    (v1alpha1); None when it names neither."""
    if spec.get("schedulingGroup") is not None:
        where = v.join(field, "schedulingGroup")
        group = v.mapping(spec["schedulingGroup"], where)
        name = v.dns_subdomain(group.get("podGroupName"), v.join(where, "podGroupName"))
        ref = GangRef(namespace, name, SOURCE_V1ALPHA2, where)
        ref.waiting = f"waiting for PodGroup {ref.key} ({V1ALPHA2}) to be created"
        ref.wait_forever = True
        return ref
    if spec.get("workloadRef") is None:
        return None
    where = v.join(field, "workloadRef")
    ref_spec = v.mapping(spec["workloadRef"], where)
    workload = v.dns_subdomain(ref_spec.get("name"), v.join(where, "name"))
    group = v.dns_label(ref_spec.get("podGroup"), v.join(where, "podGroup"))
    base = f"{workload}-{group}"
    key = ref_spec.get("podGroupReplicaKey")
    name = base if key in (None, "") else f"{base}-{v.dns_label(key, v.join(where, 'podGroupReplicaKey'))}"
    ref = GangRef(namespace, v.dns_subdomain(name, where), SOURCE_V1ALPHA1, where)
    ref.waiting = f"waiting for Workload {namespace}/{workload} ({V1ALPHA1}) to be created"
    ref.wait_forever = True
    if name != base:
        ref.replica_of = f"{namespace}/{base}"
    return ref
