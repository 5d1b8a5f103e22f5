"""Kueue's queue objects: ``ClusterQueue``, ``Cohort``, ``LocalQueue`` and ``ResourceFlavor``.

Versions as Kueue serves them (``apis/kueue/v1beta1`` and ``v1beta2``; the Cohort was
``v1alpha1`` until Kueue 0.12, with ``spec.parent``, and ``v1beta1`` from 0.13, with
``spec.parentName``). A ClusterQueue's cohort is ``spec.cohort`` in v1beta1 and
``spec.cohortName`` in v1beta2.

- ``resourceGroups[].coveredResources`` / ``flavors[].resources[]``: ``nominalQuota`` ->
  guarantee; ``nominalQuota + borrowingLimit`` -> max (no borrowingLimit: unlimited);
  ``lendingLimit`` -> lending_limit. A Cohort's ``nominalQuota`` is a pool added to its
  subtree's quotas, and its ``borrowingLimit`` caps the subtree above that (kept in
  ``extra["borrowing_limit"]``, applied by ``snapshot/queues.py``). One flavor per resource
  group: gangsched places by resource, not by flavor, so a second flavor (Kueue's flavor
  fungibility) is refused naming it;
- ``fairSharing.weight`` -> weight (> 0); ``stopPolicy``: None -> open, Hold -> closed;
- ``preemption.reclaimWithinCohort``: Never (Kueue's default) -> not reclaimable, Any ->
  reclaimable (gangsched's reclaim is symmetric: a queue that takes back its quota may have its
  own borrowing taken back); ``withinClusterQueue``: Never (Kueue's default) -> no priority
  preemption inside the ClusterQueue (a higher-priority gang waits for room, as in Kueue),
  LowerPriority -> strictly lower-priority gangs of the queue may be preempted (mark a gang
  non-preemptible to protect it);
- ``namespaceSelector``: ``{}`` (every namespace) only; none is Kueue's "no namespace": the
  queue admits nothing (closed) and still lends; ``queueingStrategy``: BestEffortFIFO.

Everything else gangsched cannot honour is refused naming it (docs/queue-manifests.md lists the keys).
"""

from __future__ import annotations

from typing import Any

from scheduler_core.specs.queues import FlavorSpec, LocalQueueSpec, QueueSpec

from . import validate as v
from .documents import Manifest
from .queue_objects import (
    FlavorObject,
    LocalQueueObject,
    QueueObject,
    cluster_meta,
    keys_check,
    positive_weight,
    quantity,
    spec_of,
)
from .spec import Loaded

GROUP = "kueue.x-k8s.io"
VERSIONS = (f"{GROUP}/v1beta1", f"{GROUP}/v1beta2")
COHORT_VERSIONS = (f"{GROUP}/v1alpha1", *VERSIONS)
SOURCE = "kueue"

_ADMISSION = "gangsched has no admission checks: a queue admits a gang when it fits"
CLUSTER_QUEUE_KEYS = {
    "resourceGroups": "",
    "cohort": "",
    "cohortName": "",
    "fairSharing": "",
    "stopPolicy": "",
    "preemption": "",
    "namespaceSelector": "",
    "queueingStrategy": "",
    "flavorFungibility": "",
    "admissionChecks": _ADMISSION,
    "admissionChecksStrategy": _ADMISSION,
    "admissionScope": "gangsched does not scope admission by namespace usage",
    "concurrentAdmissionPolicy": "gangsched admits one gang at a time per queue: no concurrent admission",
}
COHORT_KEYS = {"parent": "", "parentName": "", "resourceGroups": "", "fairSharing": ""}
LOCAL_QUEUE_KEYS = {
    "clusterQueue": "",
    "stopPolicy": "",
    "fairSharing": "gangsched shares a ClusterQueue among its LocalQueues in order: no LocalQueue weight",
}
FLAVOR_KEYS = {
    "nodeLabels": "",
    "nodeTaints": "gangsched does not taint nodes per flavor: taint the Node objects",
    "tolerations": "gangsched does not add flavor tolerations to pods: give the pods their tolerations",
    "topologyName": "",
}


# ---------------------------------------------------------------- ClusterQueue and Cohort


def load_cluster_queue(manifest: Manifest, readers=()) -> Loaded:
    name, _, _ = cluster_meta(manifest)
    spec, field = spec_of(manifest, CLUSTER_QUEUE_KEYS)
    cohort_key = "cohortName" if manifest.api_version.endswith("/v1beta2") else "cohort"
    other = "cohort" if cohort_key == "cohortName" else "cohortName"
    if spec.get(other) is not None:
        raise v.DeclarationError(v.join(field, other), f"{manifest.api_version} calls it spec.{cohort_key}")
    queue, limits = _queue(manifest, name, spec, field, cohort_key, cohort=False)
    if queue.parent is not None:  # Kueue creates a cohort a ClusterQueue names, if none exists
        queue.extra["implicit_parent"] = True
    if limits["lendingLimit"] and queue.parent is None:  # Kueue's webhook: nothing to lend to
        raise v.DeclarationError(
            limits["lendingLimit"][0], f"a lendingLimit needs a cohort (spec.{cohort_key})"
        )
    queue.reclaimable, queue.preempt_within = _preemption(spec.get("preemption"), v.join(field, "preemption"))
    queue.open = _stop_policy(spec.get("stopPolicy"), v.join(field, "stopPolicy"))
    selector = spec.get("namespaceSelector")
    if selector is not None and v.mapping(selector, v.join(field, "namespaceSelector")):
        raise v.DeclarationError(
            v.join(field, "namespaceSelector"),
            "gangsched admits from every namespace's LocalQueues: only {} (all namespaces) is read",
        )
    if selector is None:  # Kueue: no selector is "no namespace": nothing is admitted (it still lends)
        queue.open = False
        queue.extra["namespaceSelector"] = None
    strategy = spec.get("queueingStrategy", "BestEffortFIFO")
    if (
        v.choice(strategy, v.join(field, "queueingStrategy"), ["BestEffortFIFO", "StrictFIFO"])
        != "BestEffortFIFO"
    ):
        raise v.DeclarationError(
            v.join(field, "queueingStrategy"),
            "gangsched lets a gang that fits pass one that does not (BestEffortFIFO): "
            "StrictFIFO cannot be honoured",
        )
    if spec.get("flavorFungibility") is not None:  # one flavor per resource: nothing to choose
        queue.extra["flavorFungibility"] = v.mapping(
            spec["flavorFungibility"], v.join(field, "flavorFungibility")
        )
    obj = QueueObject(queue, f"clusterqueue.{GROUP}")
    return Loaded(object_name=obj.object_name, objects=[obj])


def load_cohort(manifest: Manifest, readers=()) -> Loaded:
    name, _, _ = cluster_meta(manifest)
    spec, field = spec_of(manifest, COHORT_KEYS)
    parent_key = "parent" if manifest.api_version.endswith("/v1alpha1") else "parentName"
    other = "parentName" if parent_key == "parent" else "parent"
    if spec.get(other) is not None:
        raise v.DeclarationError(v.join(field, other), f"{manifest.api_version} calls it spec.{parent_key}")
    queue, limits = _queue(manifest, name, spec, field, parent_key, cohort=True)
    if limits["borrowingLimit"]:
        # A Cohort's borrowingLimit caps what its whole subtree borrows beyond the subtree's
        # quotas, which change as ClusterQueues come and go: kept apart and added to the
        # subtree's guarantee when the engine reads the tree (snapshot/queues.py).
        queue.extra["borrowing_limit"] = {
            r: queue.max.pop(r) - queue.guarantee.get(r, 0) for r in list(queue.max)
        }
    # Kueue: a Cohort's nominalQuota is a pool shared on top of its ClusterQueues' own quotas.
    queue.extra["guarantee_is_pool"] = True
    if queue.parent is not None:
        queue.extra["implicit_parent"] = True
    obj = QueueObject(queue, f"cohort.{GROUP}")
    return Loaded(object_name=obj.object_name, objects=[obj])


def _queue(
    manifest, name, spec, field, parent_key, *, cohort: bool
) -> tuple[QueueSpec, dict[str, list[str]]]:
    """The queue, and the paths of the borrowingLimits and lendingLimits it declares."""
    parent = spec.get(parent_key)
    if parent is not None:
        parent = v.dns_subdomain(parent, v.join(field, parent_key))
    fair = v.mapping(spec.get("fairSharing"), v.join(field, "fairSharing"))
    keys_check(fair, v.join(field, "fairSharing"), {"weight": ""})
    weight = 1.0
    if fair.get("weight") is not None:
        weight = positive_weight(fair["weight"], v.join(field, "fairSharing", "weight"))
    queue = QueueSpec(
        name=name,
        source_format=SOURCE,
        field=manifest.name_field,
        declaration=manifest.obj,
        parent=parent,
        weight=weight,
        cohort=cohort,
    )
    limits = _resource_groups(queue, spec.get("resourceGroups"), v.join(field, "resourceGroups"))
    return queue, limits


def _resource_groups(queue: QueueSpec, value: Any, field: str) -> dict[str, list[str]]:
    """Quotas per resource; the flavor of each resource is kept in ``extra["flavors"]``."""
    flavors: dict[str, str] = {}
    limits: dict[str, list[str]] = {"borrowingLimit": [], "lendingLimit": []}
    for index, group in enumerate(v.sequence(value, field)):
        where = v.join(field, index)
        group = v.mapping(group, where, optional=False)
        keys_check(group, where, {"coveredResources": "", "flavors": ""})
        covered_field = v.join(where, "coveredResources")
        covered = [
            v.text(r, v.join(covered_field, i))
            for i, r in enumerate(v.sequence(group.get("coveredResources"), covered_field))
        ]
        if not covered:
            raise v.DeclarationError(covered_field, "a resource group covers at least one resource")
        group_flavors = v.sequence(group.get("flavors"), v.join(where, "flavors"))
        if not group_flavors:
            raise v.DeclarationError(v.join(where, "flavors"), "a resource group needs a flavor")
        if len(group_flavors) > 1:
            raise v.DeclarationError(
                v.join(where, "flavors", 1),
                "gangsched honours one flavor per resource: it cannot choose between flavors "
                "(flavor fungibility) yet; give each resource group one flavor",
            )
        flavor_field = v.join(where, "flavors", 0)
        flavor = v.mapping(group_flavors[0], flavor_field, optional=False)
        keys_check(flavor, flavor_field, {"name": "", "resources": ""})
        flavor_name = v.dns_subdomain(flavor.get("name"), v.join(flavor_field, "name"))
        quotas_field = v.join(flavor_field, "resources")
        seen = []
        for position, quota in enumerate(v.sequence(flavor.get("resources"), quotas_field)):
            quota_field = v.join(quotas_field, position)
            quota = v.mapping(quota, quota_field, optional=False)
            keys_check(
                quota, quota_field, {"name": "", "nominalQuota": "", "borrowingLimit": "", "lendingLimit": ""}
            )
            resource = v.text(quota.get("name"), v.join(quota_field, "name"))
            if resource in flavors:
                raise v.DeclarationError(
                    v.join(quota_field, "name"),
                    f"{resource} is already covered by flavor {flavors[resource]!r}",
                )
            if resource not in covered:
                raise v.DeclarationError(
                    v.join(quota_field, "name"), f"{resource} is not in coveredResources"
                )
            seen.append(resource)
            flavors[resource] = flavor_name
            _quota(queue, resource, quota, quota_field, limits)
        missing = [r for r in covered if r not in seen]
        if missing:
            raise v.DeclarationError(
                quotas_field, f"flavor {flavor_name!r} gives no quota for {', '.join(missing)}"
            )
    queue.extra["flavors"] = flavors
    return limits


def _quota(queue: QueueSpec, resource: str, quota: dict, field: str, limits: dict[str, list[str]]) -> None:
    def amount(key: str) -> int | None:
        return None if quota.get(key) is None else quantity(resource, quota[key], v.join(field, key))

    nominal = amount("nominalQuota")
    if nominal is None:
        raise v.DeclarationError(v.join(field, "nominalQuota"), "is required (it may be 0)")
    queue.guarantee[resource] = nominal
    borrowing = amount("borrowingLimit")
    if borrowing is not None:
        queue.max[resource] = nominal + borrowing
        limits["borrowingLimit"].append(v.join(field, "borrowingLimit"))
    lending = amount("lendingLimit")
    if lending is not None:
        if lending > nominal:
            raise v.DeclarationError(v.join(field, "lendingLimit"), "must not be more than nominalQuota")
        queue.lending_limit[resource] = lending
        limits["lendingLimit"].append(v.join(field, "lendingLimit"))


def _preemption(value: Any, field: str) -> tuple[bool, bool]:
    """Whether the queue is reclaimable and whether it preempts within itself."""
    preemption = v.mapping(value, field)
    keys_check(
        preemption, field, {"reclaimWithinCohort": "", "withinClusterQueue": "", "borrowWithinCohort": ""}
    )
    reclaim = preemption.get("reclaimWithinCohort") or "Never"
    policies = ["Never", "Any", "LowerPriority", "LowerOrNewerEqualPriority"]
    if v.choice(reclaim, v.join(field, "reclaimWithinCohort"), policies) not in ("Never", "Any"):
        raise v.DeclarationError(
            v.join(field, "reclaimWithinCohort"),
            "gangsched reclaims from queues over their fair share whatever the victims' priority: "
            "use Any or Never",
        )
    within = preemption.get("withinClusterQueue") or "Never"
    if v.choice(within, v.join(field, "withinClusterQueue"), policies) not in ("Never", "LowerPriority"):
        raise v.DeclarationError(
            v.join(field, "withinClusterQueue"),
            "gangsched preempts strictly lower-priority gangs within a queue: use LowerPriority or Never",
        )
    borrow_field = v.join(field, "borrowWithinCohort")
    borrow = v.mapping(preemption.get("borrowWithinCohort"), borrow_field)
    if (borrow.get("policy") or "Never") != "Never" or borrow.get("maxPriorityThreshold") is not None:
        raise v.DeclarationError(
            borrow_field, "gangsched never preempts to borrow: only policy Never is read"
        )
    return reclaim == "Any", within == "LowerPriority"


def _stop_policy(value: Any, field: str, *, hold_ok: bool = True) -> bool:
    """True: open. Hold closes the queue (what runs keeps running); HoldAndDrain would evict."""
    policy = value or "None"
    if policy not in ("None", "Hold", "HoldAndDrain"):  # "None" is Kueue's word for open
        raise v.DeclarationError(
            field, f"{v.shown(value)} is not a stopPolicy: use Hold, HoldAndDrain or leave it out"
        )
    if policy == "HoldAndDrain" or (policy == "Hold" and not hold_ok):
        reason = (
            "gangsched closes a queue without evicting what runs: use Hold"
            if policy == "HoldAndDrain"
            else "gangsched closes ClusterQueues, not LocalQueues: set stopPolicy on the ClusterQueue"
        )
        raise v.DeclarationError(field, reason)
    return policy == "None"


# ---------------------------------------------------------------- LocalQueue and ResourceFlavor


def load_local_queue(manifest: Manifest, readers=()) -> Loaded:
    name, namespace, _ = cluster_meta(manifest, namespaced=True)
    spec, field = spec_of(manifest, LOCAL_QUEUE_KEYS, optional=False)
    _stop_policy(spec.get("stopPolicy"), v.join(field, "stopPolicy"), hold_ok=False)
    local = LocalQueueSpec(
        namespace=namespace,
        name=name,
        cluster_queue=v.dns_subdomain(spec.get("clusterQueue"), v.join(field, "clusterQueue")),
        field=manifest.name_field,
        declaration=manifest.obj,
    )
    obj = LocalQueueObject(local)
    return Loaded(object_name=obj.object_name, objects=[obj])


def load_flavor(manifest: Manifest, readers=()) -> Loaded:
    name, _, _ = cluster_meta(manifest)
    spec, field = spec_of(manifest, FLAVOR_KEYS)
    flavor = FlavorSpec(
        name=name,
        field=manifest.name_field,
        node_labels=v.string_map(spec.get("nodeLabels"), v.join(field, "nodeLabels")),
        declaration=manifest.obj,
    )
    if spec.get("topologyName") is not None:
        # Kueue's TAS flavor: its nodes are placed by that Topology, which must exist.
        flavor.topology_name = v.dns_subdomain(spec["topologyName"], v.join(field, "topologyName"))
        flavor.topology_field = v.join(field, "topologyName")
        if not flavor.node_labels:
            raise v.DeclarationError(
                v.join(field, "nodeLabels"), "at least one nodeLabel is required when topologyName is set"
            )
    obj = FlavorObject(flavor)
    return Loaded(object_name=obj.object_name, objects=[obj])
