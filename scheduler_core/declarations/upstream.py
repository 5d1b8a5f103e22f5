"""Upstream Kubernetes gang scheduling (alpha since v1.35, feature gate GenericWorkload).

v1alpha2 (``scheduling.k8s.io/v1alpha2``, v1.36):

- ``PodGroup`` (the runtime object): ``spec.schedulingPolicy.gang.minCount`` -> a gang named
  after the PodGroup, min_member = minCount; ``spec.schedulingPolicy.basic`` -> a gang of one
  (NonStrict, minCount 1): its pods are placed pod by pod, each on its own;
- ``Workload``: ``spec.podGroupTemplates[]`` are templates for the controllers that create the
  PodGroups; they are checked and kept, no gang is made from them;
- pods: ``spec.schedulingGroup.podGroupName``. A pod naming a PodGroup that does not exist yet
  waits (upstream's PreEnqueue) in a provisional gang that is never promoted and says
  "waiting for PodGroup ns/x to be created".

v1alpha1 (v1.35):

- ``Workload``: ``spec.podGroups[]`` {name, policy: {gang: {minCount}} | {basic: {}}} -> a gang
  ``<workload>-<podGroup>`` each (basic: a gang of one, as above);
- pods: ``spec.workloadRef`` {name, podGroup, podGroupReplicaKey}; a replica key makes its pods a
  gang of their own, ``<workload>-<podGroup>-<key>``, with the pod group's policy (the Workload
  must be in the same apply, or applied before); without the Workload the pods wait.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from scheduler_core.engine.model import GangMode

from . import validate as v
from .documents import Manifest
from .pod_fields import GROUP, SOURCE_V1ALPHA1, SOURCE_V1ALPHA2, V1ALPHA2
from .spec import GangRef, GangSpec, Loaded
from .workloads import PodReader, object_meta


def _policy(value: Any, field: str) -> int | None:
    """minCount of ``{gang: {minCount}}``, or None for ``{basic: {}}``."""
    policy = v.mapping(value, field, optional=False)
    if ("gang" in policy) == ("basic" in policy):
        raise v.DeclarationError(field, "needs exactly one of gang and basic")
    if "basic" in policy:
        v.mapping(policy["basic"], v.join(field, "basic"))
        return None
    gang = v.mapping(policy["gang"], v.join(field, "gang"), optional=False)
    return v.member_count(gang.get("minCount"), v.join(field, "gang", "minCount"))


def _gang(namespace: str, name: str, min_count: int | None, source: str, declaration, field: str) -> GangSpec:
    basic = min_count is None
    return GangSpec(
        namespace=namespace,
        name=name,
        min_member=1 if basic else min_count,
        mode=GangMode.NON_STRICT.value if basic else GangMode.STRICT.value,
        wait_seconds=None,
        source_format=source,
        declaration=declaration,
        field=field,
    )


def load_podgroup(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, _ = object_meta(manifest)
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    min_count = _policy(spec.get("schedulingPolicy"), v.join(spec_field, "schedulingPolicy"))
    gang = _gang(namespace, name, min_count, SOURCE_V1ALPHA2, manifest.obj, manifest.name_field)
    return Loaded(object_name=f"podgroup.{GROUP}/{name}", gangs=[gang])


def load_workload(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, _ = object_meta(manifest)
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    if manifest.api_version == V1ALPHA2:
        where = v.join(spec_field, "podGroupTemplates")
        for index, template in enumerate(v.sequence(spec.get("podGroupTemplates"), where)):
            template = v.mapping(template, v.join(where, index), optional=False)
            v.dns_label(template.get("name"), v.join(where, index, "name"))
            _policy(template.get("schedulingPolicy"), v.join(where, index, "schedulingPolicy"))
        return Loaded(object_name=f"workload.{GROUP}/{name}")
    # V1ALPHA1: the registry reads a Workload in no other version.
    where = v.join(spec_field, "podGroups")
    groups = v.sequence(spec.get("podGroups"), where)
    if not groups:
        raise v.DeclarationError(where, "a Workload needs at least one pod group")
    gangs, seen = [], set()
    for index, group in enumerate(groups):
        at = v.join(where, index)
        group = v.mapping(group, at, optional=False)
        group_name = v.dns_label(group.get("name"), v.join(at, "name"))
        if group_name in seen:
            raise v.DeclarationError(v.join(at, "name"), f"pod group {group_name!r} is declared twice")
        seen.add(group_name)
        min_count = _policy(group.get("policy"), v.join(at, "policy"))
        gang_name = v.dns_subdomain(f"{name}-{group_name}", v.join(at, "name"))
        declaration = {"workload": manifest.obj, "podGroup": group_name}
        gangs.append(_gang(namespace, gang_name, min_count, SOURCE_V1ALPHA1, declaration, at))
    return Loaded(object_name=f"workload.{GROUP}/{name}", gangs=gangs)


def replica_gang(base: GangSpec, ref: GangRef) -> GangSpec:
    """The gang of one replica key: the pod group's policy, under the replica's name."""
    declaration = {**base.declaration, "replicaOf": base.key}
    return replace(base, name=ref.name, declaration=declaration, field=ref.field)
