"""KAI-Scheduler's own gang object: the ``PodGroup`` of ``scheduling.run.ai/v2alpha2``, and the
keys its pods join it with.

Fields as KAI defines and reads them (``pkg/apis/scheduling/v2alpha2/podgroup_types.go``; the
scheduler's ``pkg/scheduler/api/podgroup_info/job_info.go`` and ``subgroup_info/factory.go``):

- ``spec.minMember`` -> min_member (default 1, as KAI reads an unset one);
- ``spec.queue`` -> queue (a KAI ``Queue``, ``queues_kai.py``; default ``default``);
- ``spec.priorityClassName`` -> priority, resolved as a pod's (``workloads.priority_of``);
- ``spec.preemptibility`` (``preemptible`` / ``non-preemptible``) -> Gang.preemptible; unset,
  KAI's rule (``pkg/common/podgroup/preemptible.go``): a priority class of value 100 or more
  makes the gang non-preemptible; no class, preemptible;
- ``spec.topologyConstraint`` {``requiredTopologyLevel``, ``preferredTopologyLevel``,
  ``topology``} -> the gang's topology constraint (``topology_keys.py``): required, preferred,
  the Topology they belong to;
- ``spec.subGroups[]`` {name, minMember, parent, topologyConstraint}: see below;
- ``parallelism``, ``completions``, ``backoffLimit``, ``markUnschedulable``,
  ``schedulingBackoff``: KAI's podgrouper and status keys, kept in the declaration, not acted on.
  Any other key (``subgroups``, as KAI's multi-level topology page spells it, which its CRD
  does not have) is refused naming it.

SubGroups. KAI's scheduler makes each leaf subgroup (one no other subgroup names as ``parent``) a
pod set with its own minimum (its minMember, default 1) and starts the PodGroup only when every
pod set has its minimum; the PodGroup's own minMember, and a parent's, are then not read. So
here each leaf subgroup is a gang ``<podgroup>-<subgroup>`` with its minMember, and all of them
are one gang group ``<ns>/<podgroup>``, which binds only when every gang of it is satisfied.
Names are unique, parents exist and form no cycle (KAI's webhook, ``podgroup_webhook.go``).
A leaf's topology constraint is its own, else its nearest ancestor's (parent, ..., the
PodGroup's): gangsched keeps each gang in one domain and a gang group may span domains, so a
constraint above the leaf level holds each subgroup under it, not all of them together.

Pods: the annotation ``pod-group-name`` names the PodGroup, the label
``kai.scheduler/subgroup-name`` its leaf subgroup (``pkg/common/constants/constants.go``). A pod
naming a subgroup the PodGroup lacks, a subgroup that is not a leaf, or no subgroup of a PodGroup
that has them (KAI would never schedule it), is refused naming the key; a pod before its PodGroup
waits in a provisional gang that says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.db.models import Q

from . import validate as v
from .documents import Manifest
from .queue_objects import keys_check
from .spec import GangRef, GangSpec, Loaded, PodSpec
from .topologies import label_key
from .topology_keys import TopologyAsk, ask_apply
from .workloads import PodReader, object_meta, priority_of

GROUP = "scheduling.run.ai"
API_VERSION = f"{GROUP}/v2alpha2"
POD_GROUP_NAME = "pod-group-name"
SUBGROUP_NAME = "kai.scheduler/subgroup-name"
SOURCE = "kai-podgroup"
PREEMPTIBILITY = ("preemptible", "non-preemptible")
#: KAI: without a preemptibility, a priority of at least this much is non-preemptible.
NON_PREEMPTIBLE_PRIORITY = 100
_KEPT = ""  # read, or kept in the declaration
SPEC_KEYS = {
    "minMember": _KEPT,
    "queue": _KEPT,
    "priorityClassName": _KEPT,
    "preemptibility": _KEPT,
    "topologyConstraint": _KEPT,
    "subGroups": _KEPT,
    "parallelism": _KEPT,
    "completions": _KEPT,
    "backoffLimit": _KEPT,
    "markUnschedulable": _KEPT,
    "schedulingBackoff": _KEPT,
    "subgroups": "KAI's PodGroup has no subgroups key (kubectl refuses it as an unknown field): "
    "write subGroups",
}
SUBGROUP_KEYS = {"name": _KEPT, "minMember": _KEPT, "parent": _KEPT, "topologyConstraint": _KEPT}
CONSTRAINT_KEYS = {"requiredTopologyLevel": _KEPT, "preferredTopologyLevel": _KEPT, "topology": _KEPT}


def load(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, _ = object_meta(manifest)
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field)
    keys_check(spec, spec_field, SPEC_KEYS)
    base = GangSpec(
        namespace=namespace,
        name=name,
        min_member=v.member_count(spec.get("minMember", 1), v.join(spec_field, "minMember")),
        queue=v.text(spec.get("queue", "default"), v.join(spec_field, "queue"), max_length=63),
        queue_field=v.join(spec_field, "queue") if "queue" in spec else "",
        wait_seconds=None,  # KAI keeps a PodGroup pending until it fits
        source_format=SOURCE,
        declaration=manifest.obj,
        field=manifest.name_field,
    )
    if spec.get("priorityClassName"):
        base.priority = priority_of({"priorityClassName": spec["priorityClassName"]}, spec_field)
    base.preemptible = _preemptible(spec.get("preemptibility"), v.join(spec_field, "preemptibility"), base)
    root = constraint(spec.get("topologyConstraint"), v.join(spec_field, "topologyConstraint"))
    subgroups = _subgroups(spec.get("subGroups"), v.join(spec_field, "subGroups"))
    if not subgroups:
        ask_apply(base, root)
        return Loaded(object_name=f"podgroup.{GROUP}/{name}", gangs=[base])
    gangs = [_leaf_gang(base, manifest, subgroups, leaf, root) for leaf in leaves(subgroups)]
    keys = sorted(gang.key for gang in gangs)
    for gang in gangs:
        gang.group, gang.group_key = keys, group_key(namespace, name)
    return Loaded(object_name=f"podgroup.{GROUP}/{name}", gangs=gangs)


def group_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _preemptible(value: Any, field: str, gang: GangSpec) -> bool:
    """KAI's CalculatePreemptibility: the explicit value, else by the priority class's value."""
    if value not in (None, ""):
        return v.choice(value, field, list(PREEMPTIBILITY)) == "preemptible"
    return gang.priority is None or gang.priority < NON_PREEMPTIBLE_PRIORITY


def constraint(value: Any, field: str) -> TopologyAsk | None:
    """A ``topologyConstraint`` (of the PodGroup or of a subgroup); None when it asks nothing."""
    spec = v.mapping(value, field)
    keys_check(spec, field, CONSTRAINT_KEYS)
    ask = TopologyAsk(field=field)
    for key, attr in (("requiredTopologyLevel", "required"), ("preferredTopologyLevel", "preferred")):
        if spec.get(key) not in (None, ""):
            setattr(ask, attr, label_key(spec[key], v.join(field, key)))
    if spec.get("topology") not in (None, ""):
        ask.name = v.dns_subdomain(spec["topology"], v.join(field, "topology"))
        if not ask.required and not ask.preferred:
            raise v.DeclarationError(
                v.join(field, "topology"),
                "names a topology but no level: add requiredTopologyLevel or preferredTopologyLevel",
            )
    return ask if ask.required or ask.preferred else None


def _subgroups(value: Any, field: str) -> dict[str, dict[str, Any]]:
    """name -> {minMember, parent, ask, field}, checked as KAI's webhook checks them: unique
    names, known parents, no cycle."""
    found: dict[str, dict[str, Any]] = {}
    for index, item in enumerate(v.sequence(value, field)):
        where = v.join(field, index)
        item = v.mapping(item, where, optional=False)
        keys_check(item, where, SUBGROUP_KEYS)
        name = v.text(item.get("name"), v.join(where, "name"), max_length=63)
        if name in found:
            raise v.DeclarationError(v.join(where, "name"), f"subgroup {name!r} is declared twice")
        parent = item.get("parent")
        found[name] = {
            "minMember": v.member_count(item.get("minMember", 1), v.join(where, "minMember")),
            "parent": None if parent is None else v.text(parent, v.join(where, "parent"), max_length=63),
            "ask": constraint(item.get("topologyConstraint"), v.join(where, "topologyConstraint")),
            "field": where,
        }
    for item in found.values():
        if item["parent"] is not None and item["parent"] not in found:
            raise v.DeclarationError(
                v.join(item["field"], "parent"), f"no subgroup is named {item['parent']!r}"
            )
    for name in found:
        _ancestors(found, name)  # raises on a cycle
    return found


def _ancestors(subgroups: dict[str, dict[str, Any]], name: str) -> list[str]:
    """``name``'s parent, its parent... up to a top-level subgroup; a cycle is refused."""
    chain, current = [], subgroups[name]["parent"]
    while current is not None:
        if current == name or current in chain:
            raise v.DeclarationError(
                v.join(subgroups[name]["field"], "parent"),
                f"subgroups may not form a cycle: {' -> '.join([name, *chain, current])}",
            )
        chain.append(current)
        current = subgroups[current]["parent"]
    return chain


def leaves(subgroups: dict[str, dict[str, Any]]) -> list[str]:
    """The subgroups no other names as parent: those pods join (KAI's pod sets), in order."""
    parents = {item["parent"] for item in subgroups.values()}
    return [name for name in subgroups if name not in parents]


def _leaf_gang(base: GangSpec, manifest: Manifest, subgroups, leaf: str, root) -> GangSpec:
    item = subgroups[leaf]
    name = v.dns_subdomain(f"{base.name}-{leaf}", v.join(item["field"], "name"))
    declaration = {"podGroup": manifest.obj, "subGroup": leaf}
    gang = replace(base, name=name, min_member=item["minMember"], declaration=declaration)
    gang.field = item["field"]
    asks = [subgroups[n]["ask"] for n in [leaf, *_ancestors(subgroups, leaf)]] + [root]
    ask_apply(gang, next((ask for ask in asks if ask is not None), None))
    return gang


# ---------------------------------------------------------------- pods


def pod_gang(
    namespace: str, labels: dict[str, str], annotations: dict[str, str], field: str
) -> GangRef | None:
    if POD_GROUP_NAME not in annotations:
        return None
    where = v.join(field, "annotations", POD_GROUP_NAME)
    podgroup = v.dns_subdomain(annotations[POD_GROUP_NAME], where)
    name = podgroup
    if SUBGROUP_NAME in labels:
        where = v.join(field, "labels", SUBGROUP_NAME)
        subgroup = v.text(labels[SUBGROUP_NAME], where, max_length=63)
        name = v.dns_subdomain(f"{podgroup}-{subgroup}", where)
    ref = GangRef(namespace, name, SOURCE, where)
    ref.waiting = f"waiting for PodGroup {namespace}/{podgroup} ({GROUP}) to be created"
    return ref


def _named(pod: PodSpec) -> tuple[str, str | None]:
    """The PodGroup and the subgroup (None: no label) a pod of this format names."""
    return pod.annotations[POD_GROUP_NAME], pod.labels.get(SUBGROUP_NAME)


def _layout(gang_declaration: dict[str, Any]) -> tuple[str, dict[str, dict[str, Any]] | None]:
    """(PodGroup name, its subgroups or None) from a gang's declaration, as ``load`` wrote it."""
    obj = gang_declaration.get("podGroup", gang_declaration)
    spec = obj.get("spec") or {}
    subgroups = {item["name"]: item for item in spec.get("subGroups") or []}
    return obj["metadata"]["name"], subgroups or None


def refs_check(refs: dict[str, GangRef], pods_by_gang: dict[str, list[PodSpec]], gangs) -> None:
    """Pods naming a KAI PodGroup found in ``gangs`` (GangSpecs or Gang rows) but no gang of it:
    an unknown or non-leaf subgroup, or none where the PodGroup has subgroups. Refused naming
    the pod's key, since KAI would never schedule such a pod."""
    layouts = {}
    for gang in gangs:
        if gang.source_format == SOURCE:
            podgroup, subgroups = _layout(gang.declaration)
            layouts[(gang.namespace, podgroup)] = subgroups
    if not layouts:
        return
    for key, ref in refs.items():
        if ref.source_format != SOURCE or not pods_by_gang.get(key):
            continue
        pod = pods_by_gang[key][0]
        podgroup, subgroup = _named(pod)
        if (ref.namespace, podgroup) not in layouts:
            continue
        _refuse(ref, f"{ref.namespace}/{podgroup}", subgroup, layouts[(ref.namespace, podgroup)])


def _refuse(ref: GangRef, podgroup: str, subgroup: str | None, subgroups) -> None:
    if subgroups is None:
        raise v.DeclarationError(ref.field, f"PodGroup {podgroup} declares no subGroups")
    parents = {item.get("parent") for item in subgroups.values()}
    named_leaves = ", ".join(name for name in subgroups if name not in parents)
    if subgroup is None:
        reason = f"PodGroup {podgroup} has subGroups: label the pod {SUBGROUP_NAME}: one of {named_leaves}"
        raise v.DeclarationError(ref.field, reason)
    if subgroup in parents:
        reason = f"subgroup {subgroup!r} of PodGroup {podgroup} has subgroups: name one of {named_leaves}"
        raise v.DeclarationError(ref.field, reason)
    raise v.DeclarationError(
        ref.field, f"PodGroup {podgroup} has no subgroup {subgroup!r} (its leaf subgroups: {named_leaves})"
    )


def stored_refs_check(refs: dict[str, GangRef], pods_by_gang, existing: dict, submitter: str | None) -> None:
    """``refs_check`` against PodGroups applied earlier (``submitter``: only theirs, so another
    tenant's PodGroup says nothing about itself; None: all)."""
    wanted = {
        (ref.namespace, _named(pods_by_gang[key][0])[0])
        for key, ref in refs.items()
        if ref.source_format == SOURCE
        and pods_by_gang.get(key)
        and (existing.get(key) is None or existing[key].provisional)
    }
    if not wanted:
        return
    from scheduler_core.models import Gang  # the declarations' readers stay free of the ORM

    query = Q(pk__in=[])
    for namespace, podgroup in wanted:
        query |= Q(namespace=namespace, name=podgroup) | Q(
            namespace=namespace, group__key=group_key(namespace, podgroup)
        )
    rows = Gang.objects.filter(query, source_format=SOURCE, provisional=False)
    if submitter is not None:
        rows = rows.filter(submitter=submitter)
    pending = {key: refs[key] for key in refs if existing.get(key) is None or existing[key].provisional}
    refs_check(pending, pods_by_gang, rows)
