"""KAI-Scheduler's ``Queue`` (``scheduling.run.ai/v2``, cluster-scoped) as a queue of the tree.

Fields and units as KAI defines and reads them (``pkg/apis/scheduling/v2/queue_types.go`` and
``resources.go``; the proportion plugin, ``pkg/scheduler/plugins/proportion/proportion.go``):

- ``spec.parentQueue`` -> parent;
- ``spec.resources.{cpu,memory,gpu}`` each with ``quota`` -> guarantee, ``limit`` -> max,
  ``overQuotaWeight`` -> weight. Amounts are JSON numbers in KAI's units: cpu in millicores (the
  engine's milli-CPU), memory in megabytes of 10^6 bytes (KAI multiplies by 1000*1000), gpu in
  devices (``nvidia.com/gpu``; gangsched counts whole GPUs, so a fraction is refused);
- ``limit: -1`` -> no max. A limit of 0, or none, is a max of 0, as in KAI (its over-limit check
  lets nothing of that resource in): declare ``limit: -1`` for an unlimited resource;
- ``quota: -1`` (KAI: an unlimited quota, deserving the whole amount its level divides) -> the
  resource is in ``unlimited_guarantee``: the queue is guaranteed all it asks of it (up to its
  limit) of what its level holds once its siblings' declared quotas are served, and is then owed,
  and keeps reserved, its fair share (``engine/fairshare.py``). It does not raise its parent's
  guarantee, and a parent's limit does not have to cover it;
- ``overQuotaWeight`` -> the weight. When the resources declare different ones (KAI's e2e queues:
  gpu 2, cpu 1, memory 1), the queue gets a weight per resource (``weights``; a resource that
  declares none -> 1) and its level of the tree divides each resource's over-quota part by that
  resource's weights, as KAI's proportion plugin does; when they agree, the one ``weight``. None
  declared -> 1 (KAI reads 0, no share over quota; gangsched's weights are positive);
- ``spec.displayName`` -> kept for the Queues page.

Refused, naming the key: ``spec.priority`` other than KAI's default 100 (gangsched orders queues
by fair share, not by priority levels), ``spec.preemptMinRuntime`` and ``spec.reclaimMinRuntime``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from scheduler_core.specs.queues import QueueSpec

from . import validate as v
from .documents import Manifest
from .queue_objects import QueueObject, cluster_meta, keys_check, spec_of
from .spec import Loaded

API_VERSION = "scheduling.run.ai/v2"
KIND = "queue.scheduling.run.ai"
GPU = "nvidia.com/gpu"
DEFAULT_PRIORITY = 100
UNLIMITED = -1

_MIN_RUNTIME = "gangsched has no minimum run time before preemption or reclaim"
SPEC_KEYS = {
    "displayName": "",
    "parentQueue": "",
    "resources": "",
    "priority": "",
    "preemptMinRuntime": _MIN_RUNTIME,
    "reclaimMinRuntime": _MIN_RUNTIME,
}
#: KAI resource -> (gangsched resource, canonical units per KAI unit, whole numbers only).
RESOURCES = {"cpu": ("cpu", 1, False), "memory": ("memory", 1000 * 1000, False), "gpu": (GPU, 1, True)}
_RESOURCE_KEYS = {"quota": "", "limit": "", "overQuotaWeight": ""}


def load_queue(manifest: Manifest, readers=()) -> Loaded:
    name, _, _ = cluster_meta(manifest)
    spec, field = spec_of(manifest, SPEC_KEYS)
    priority = spec.get("priority")
    if priority is not None and priority != DEFAULT_PRIORITY:
        v.integer(priority, v.join(field, "priority"), minimum=-(2**31), maximum=2**31 - 1)
        raise v.DeclarationError(
            v.join(field, "priority"),
            "gangsched does not order queues by priority levels: queues below their fair share go first",
        )
    parent = spec.get("parentQueue")
    if parent not in (None, ""):
        parent = v.dns_subdomain(parent, v.join(field, "parentQueue"))
    queue = QueueSpec(
        name=name,
        source_format="kai",
        field=manifest.name_field,
        declaration=manifest.obj,
        parent=parent or None,
    )
    display = spec.get("displayName")
    if display is not None:
        queue.extra["displayName"] = v.text(display, v.join(field, "displayName"))
    _resources(queue, spec.get("resources"), v.join(field, "resources"))
    obj = QueueObject(queue, KIND)
    return Loaded(object_name=obj.object_name, objects=[obj])


def _resources(queue: QueueSpec, value: Any, field: str) -> None:
    resources = v.mapping(value, field, optional=False)  # KAI's webhook requires spec.resources
    keys_check(resources, field, dict.fromkeys(RESOURCES, ""))
    weights: dict[str, float] = {}
    for kai_name, (resource, unit, whole) in RESOURCES.items():
        where = v.join(field, kai_name)
        amounts = v.mapping(resources.get(kai_name), where)
        keys_check(amounts, where, _RESOURCE_KEYS)
        quota = _amount(amounts.get("quota", 0), v.join(where, "quota"), unit, whole)
        if quota == UNLIMITED:
            queue.unlimited_guarantee.append(resource)
        else:
            queue.guarantee[resource] = quota
        limit = _amount(amounts.get("limit", 0), v.join(where, "limit"), unit, whole)
        if limit != UNLIMITED:
            queue.max[resource] = limit
        if amounts.get("overQuotaWeight") is not None:
            weights[resource] = _weight(amounts["overQuotaWeight"], v.join(where, "overQuotaWeight"))
    distinct = set(weights.values())
    if len(distinct) > 1:
        # KAI divides each resource by its own weights: so does the queue's level of the tree.
        queue.weights = {resource: weights.get(resource, 1.0) for resource, _, _ in RESOURCES.values()}
    else:
        queue.weight = distinct.pop() if distinct else 1.0


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise v.DeclarationError(field, f"must be a number (KAI's float64), not {v.shown(value)}")
    return value


def _amount(value: Any, field: str, unit: int, whole: bool) -> int:
    """A KAI amount in canonical units, rounded up as Kubernetes rounds a quantity; -1 stays -1."""
    number = _number(value, field)
    if number == UNLIMITED:
        return UNLIMITED
    if number < 0:
        raise v.DeclarationError(field, f"{v.shown(value)} is negative (only -1, unlimited, is)")
    if whole and number != int(number):
        raise v.DeclarationError(field, f"{v.shown(value)}: gangsched counts whole GPUs, not fractions")
    amount = math.ceil(Fraction(str(number)) * unit)  # str: the shortest repr, as typed
    cap = v.limit("GANGSCHED_MAX_QUANTITY", v.MAX_QUANTITY)
    if amount > cap:
        raise v.DeclarationError(field, f"{v.shown(value)} is too large (at most {cap} canonical units)")
    return amount


def _weight(value: Any, field: str) -> float:
    weight = _number(value, field)
    if not 0 < weight <= 1e9:
        raise v.DeclarationError(
            field, f"{v.shown(value)} must be positive: gangsched gives every queue a share over quota"
        )
    return float(weight)
