"""scheduler-plugins coscheduling: the ``PodGroup`` CRD and the labels pods join it with.

| key | gangsched field | default |
|---|---|---|
| PodGroup ``spec.minMember`` | min_member | required |
| PodGroup ``spec.minResources`` | min_resources | none |
| PodGroup ``spec.scheduleTimeoutSeconds`` | wait_seconds | 60 s (permitWaitingTimeSeconds); also for 0 |
| PodGroup Koordinator annotations | override the fields above | - |
| PodGroup KAI / Kueue topology annotations (``topology_keys.py``) | topology constraint | none |
| pod label ``scheduling.x-k8s.io/pod-group`` | the pod's gang (a PodGroup) | - |
| pod label ``pod-group.scheduling.sigs.k8s.io`` (or ``.../name``) | the pod's gang (older form) | - |
| PodGroup of ``scheduling.sigs.k8s.io/v1alpha1`` | read as the PodGroup above | - |
| label or annotation ``.../min-available`` | min_member | none: the pods name a PodGroup |
| (a satisfied PodGroup's new pods) | match_policy | waiting-and-running |

A PodGroup's new pod (a replacement) binds when the group's bound pods and it reach minMember:
scheduler-plugins' Permit counts the pods already assigned (``pkg/coscheduling/core/core.go``,
TestPermit "pod belongs to a pg that have quorum satisfied"), which is Koordinator's
``waiting-and-running``; a Koordinator ``match-policy`` annotation on the PodGroup wins.

A pod naming a PodGroup that does not exist yet waits in a provisional gang (``apply.py``).
The older group ``scheduling.sigs.k8s.io`` is the one scheduler-plugins served before it moved to
``scheduling.x-k8s.io`` (and the one Koordinator's coscheduling still reads), with the same spec;
its pods carry the older label.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler_core.engine.model import MatchPolicy

from . import koordinator
from . import validate as v
from .documents import Manifest
from .spec import GangRef, GangSpec, Loaded
from .topology_keys import annotations_ask, ask_apply
from .workloads import PodReader, object_meta

GROUP, LEGACY_GROUP = "scheduling.x-k8s.io", "scheduling.sigs.k8s.io"
LABEL = "scheduling.x-k8s.io/pod-group"
LEGACY = "pod-group.scheduling.sigs.k8s.io"
LEGACY_NAME = LEGACY + "/name"
LEGACY_MIN_AVAILABLE = LEGACY + "/min-available"
#: scheduler-plugins' default Permit wait (permitWaitingTimeSeconds) when a PodGroup sets none.
DEFAULT_WAIT_SECONDS = 60.0
SOURCE, LEGACY_SOURCE = "podgroup", "podgroup-legacy"


def load(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, metadata = object_meta(manifest)
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    timeout = spec.get("scheduleTimeoutSeconds")
    gang = GangSpec(
        namespace=namespace,
        name=name,
        min_member=v.member_count(spec.get("minMember"), v.join(spec_field, "minMember")),
        min_resources=v.resources(spec.get("minResources"), v.join(spec_field, "minResources")),
        # 0 is what mpi-operator writes on the PodGroup it makes for an MPIJob that sets none.
        wait_seconds=DEFAULT_WAIT_SECONDS
        if timeout is None or (type(timeout) is int and timeout == 0)
        else v.wait_seconds(timeout, v.join(spec_field, "scheduleTimeoutSeconds")),
        source_format=SOURCE,
        declaration=manifest.obj,
        field=manifest.name_field,
        match_policy=MatchPolicy.WAITING_AND_RUNNING.value,
    )
    annotations_field = v.join(manifest.path, "metadata", "annotations")
    annotations = v.string_map(metadata.get("annotations"), annotations_field)
    koordinator.overlay(gang, annotations, annotations_field)
    ask_apply(gang, annotations_ask(annotations, annotations_field))  # KAI's and Kueue's keys
    return Loaded(object_name=f"podgroup.{manifest.group}/{name}", gangs=[gang])


def pod_gang(
    namespace: str, labels: dict[str, str], annotations: dict[str, str], field: str
) -> GangRef | None:
    if LABEL in labels:
        where = v.join(field, "labels", LABEL)
        return GangRef(namespace, v.dns_subdomain(labels[LABEL], where), SOURCE, where)
    legacy_key = LEGACY_NAME if LEGACY_NAME in labels else LEGACY if LEGACY in labels else None
    if legacy_key is None:
        return None
    where = v.join(field, "labels", legacy_key)
    ref = GangRef(namespace, v.dns_subdomain(labels[legacy_key], where), LEGACY_SOURCE, where)
    # The quorum is a label in the old docs and an annotation in many manifests: read both.
    for kind, values in (("labels", labels), ("annotations", annotations)):
        if LEGACY_MIN_AVAILABLE in values:
            min_field = v.join(field, kind, LEGACY_MIN_AVAILABLE)
            ref.spec = GangSpec(
                namespace=namespace,
                name=ref.name,
                min_member=v.member_count(values[LEGACY_MIN_AVAILABLE], min_field, text_ok=True),
                wait_seconds=DEFAULT_WAIT_SECONDS,
                source_format=LEGACY_SOURCE,
                match_policy=MatchPolicy.WAITING_AND_RUNNING.value,
                declaration={
                    kind: {LEGACY_MIN_AVAILABLE: values[LEGACY_MIN_AVAILABLE], legacy_key: ref.name}
                },
                field=min_field,
            )
            break
    return ref
