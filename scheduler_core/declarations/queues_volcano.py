"""Volcano's ``Queue`` (``scheduling.volcano.sh/v1beta1``, cluster-scoped) as a queue of the tree.

Fields as Volcano's API defines them (``staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/
types.go``, ``QueueSpec`` and ``QueueStatus``):

- ``spec.weight`` (1..65535, default 1) -> weight;
- ``spec.capability`` -> max (a missing resource: unlimited);
- ``spec.deserved`` -> guarantee: what the capacity plugin calls the queue's entitlement, lent to
  others while unused and reclaimed when the queue has demand;
- ``spec.guarantee.resource`` -> the part of the guarantee kept even without demand: the lending
  limit is deserved minus guarantee (what is reserved is never lent, which is what keeps it free
  for the queue). Volcano's own rule holds: guarantee <= deserved <= capability, per resource;
- ``spec.reclaimable`` (default true) -> reclaimable;
- reclaim delay 0: Volcano's reclaim action takes room back for a queue below its deserved share
  in the first session it is pending (the proportion and capacity plugins have no delay), so its
  queues do not wait ``GANGSCHED_RECLAIM_DELAY_S``;
- ``spec.parent`` -> parent (Volcano's ``root`` is the whole cluster: a top-level queue);
- ``status.state``: Volcano keeps a queue's state in its status (``vcctl queue operate --action
  close`` sets it through a Command, and the queue controller writes ``Closed``): ``Open`` or
  absent -> open; ``Closed`` or ``Closing`` -> closed.

Refused, naming the key: ``spec.affinity``, ``spec.extendClusters``, ``spec.type``, a
``spec.priority`` other than 0 and ``spec.dequeueStrategy: fifo`` (gangsched's order within a
queue is its own); a queue named ``root``; the drf plugin's annotations ``volcano.sh/hierarchy``
and ``volcano.sh/hierarchy-weights`` (``spec.parent`` says the same). ``status`` fields other
than ``state`` are what Volcano observed and are not read.
"""

from __future__ import annotations

from scheduler_core.specs.queues import QueueSpec

from . import validate as v
from .documents import Manifest
from .queue_objects import QueueObject, boolean, cluster_meta, keys_check, spec_of
from .spec import Loaded

API_VERSION = "scheduling.volcano.sh/v1beta1"
KIND = "queue.scheduling.volcano.sh"
ROOT = "root"
#: The drf plugin's older hierarchy, declared in annotations: refused (spec.parent says it).
HIERARCHY_ANNOTATIONS = ("volcano.sh/hierarchy", "volcano.sh/hierarchy-weights")

SPEC_KEYS = {
    "weight": "",
    "capability": "",
    "deserved": "",
    "guarantee": "",
    "reclaimable": "",
    "parent": "",
    "priority": "",
    "dequeueStrategy": "",
    "affinity": "gangsched does not place a queue's pods by queue affinity: use the pods' own affinity",
    "extendClusters": "gangsched schedules one cluster: extendClusters cannot be honoured",
    "type": "gangsched has one type of queue",
}
_STATES = {"Open": True, "Closed": False, "Closing": False}


def load_queue(manifest: Manifest, readers=()) -> Loaded:
    spec = queue_read(manifest)
    queue = QueueObject(spec, KIND)
    return Loaded(object_name=queue.object_name, objects=[queue])


def queue_read(manifest: Manifest) -> QueueSpec:
    name, _, metadata = cluster_meta(manifest)
    annotations_field = v.join(manifest.path, "metadata", "annotations")
    for key in v.string_map(metadata.get("annotations"), annotations_field):
        if key in HIERARCHY_ANNOTATIONS:
            raise v.DeclarationError(
                v.join(annotations_field, key),
                "gangsched reads Volcano's hierarchy from spec.parent (and weights from spec.weight)",
            )
    if name == ROOT:
        raise v.DeclarationError(
            manifest.name_field,
            "Volcano's root queue is the whole cluster in gangsched: leave it out (its children are "
            "top-level queues)",
        )
    spec, field = spec_of(manifest, SPEC_KEYS)
    weight = v.integer(spec.get("weight", 1), v.join(field, "weight"), minimum=1, maximum=65535)
    priority = v.integer(spec.get("priority", 0), v.join(field, "priority"), minimum=0, maximum=2**31 - 1)
    if priority:
        raise v.DeclarationError(
            v.join(field, "priority"),
            "gangsched does not order queues by priority: queues below their fair share go first",
        )
    dequeue = spec.get("dequeueStrategy", "traverse")
    if v.choice(dequeue, v.join(field, "dequeueStrategy"), ["traverse", "fifo"]) == "fifo":
        raise v.DeclarationError(
            v.join(field, "dequeueStrategy"),
            "gangsched does not hold a queue behind its first job (fifo): use traverse (the default)",
        )
    deserved = v.resources(spec.get("deserved"), v.join(field, "deserved"))
    guarantee_field = v.join(field, "guarantee")
    guarantee_spec = v.mapping(spec.get("guarantee"), guarantee_field)
    keys_check(guarantee_spec, guarantee_field, {"resource": ""})
    reserved = v.resources(guarantee_spec.get("resource"), v.join(guarantee_field, "resource"))
    lending = {}
    for resource, amount in reserved.items():  # Volcano: guarantee <= deserved, resource by resource
        if deserved.get(resource, -1) < amount:
            raise v.DeclarationError(
                v.join(field, "deserved", resource),
                f"must be at least spec.guarantee.resource's {resource} (Volcano: guarantee <= deserved)",
            )
        lending[resource] = deserved[resource] - amount
    capability = v.resources(spec.get("capability"), v.join(field, "capability"))
    for resource, amount in capability.items():  # and deserved <= capability
        if deserved.get(resource, 0) > amount:
            raise v.DeclarationError(
                v.join(field, "capability", resource),
                f"is less than spec.deserved's {resource} (Volcano: deserved <= capability)",
            )
    parent = spec.get("parent")
    if parent is not None:
        parent = v.dns_subdomain(parent, v.join(field, "parent"))
        parent = None if parent == ROOT else parent
    return QueueSpec(
        name=name,
        source_format="volcano",
        field=manifest.name_field,
        declaration=manifest.obj,
        parent=parent,
        guarantee=deserved,
        max=capability,
        lending_limit=lending,
        weight=float(weight),
        reclaimable=boolean(spec.get("reclaimable"), v.join(field, "reclaimable"), True),
        open=_open(manifest),
        reclaim_delay_s=0.0,
    )


def _open(manifest: Manifest) -> bool:
    status = v.mapping(manifest.obj.get("status"), v.join(manifest.path, "status"))
    if status.get("state") in (None, ""):
        return True
    state = v.choice(status["state"], v.join(manifest.path, "status", "state"), list(_STATES))
    return _STATES[state]
