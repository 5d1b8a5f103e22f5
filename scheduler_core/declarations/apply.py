"""``manifests_apply``: manifests in, Gang / GangGroup / Member rows out, all or nothing.

Three steps, so that every check runs before the first write:

1. load: each object through its format's loader (``registry.py``) into GangSpec / PodSpec;
2. plan: gangs declared by objects win over gangs declared on pods; two pods declaring one gang
   differently is an error; pods naming an undeclared gang are collected for a provisional gang;
3. write, in one transaction, after checking that every existing gang and pod touched is the
   actor's (``services/tenancy.py``): gangs and gang groups (``gang_writes.py``), then pods
   (``pod_writes.py``).

A pod naming a gang nobody declared (a PodGroup label before the PodGroup) joins a provisional
gang, which the scheduler does not see until its PodGroup is applied or
``GANGSCHED_PROVISIONAL_GRACE_S`` passes (``provisional.py``).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from scheduler_core.engine.model import DEFAULT_QUEUE
from scheduler_core.models import Gang, Member
from scheduler_core.services.queues import queue_require
from scheduler_core.services.runtimes import gang_estimates_refresh
from scheduler_core.services.tenancy import CLI, Actor

from . import kai_podgroup
from . import validate as v
from .changes import pods_record
from .cluster import priority_classes
from .documents import documents_expand, size_check
from .gang_topology import topology_adopt, topology_adopt_stored, topology_keep, topology_resolve
from .gang_writes import (
    CONFIGURED,
    CREATED,
    UNCHANGED,
    gang_line,
    gang_write,
    groups_write,
    keys_q,
    provisional_write,
    replica_write,
)
from .koordinator import SOURCE as KOORDINATOR
from .kueue_priority import workload_priority_classes
from .pod_fields import SOURCE_V1ALPHA2
from .pod_writes import pod_queue, pods_write
from .podgroup import LEGACY_SOURCE as PODGROUP_LEGACY
from .podgroup import SOURCE as PODGROUP
from .queue_objects import queues_write
from .registry import manifest_load
from .spec import GangRef, GangSpec, Loaded, Plan, PodSpec
from .topology_objects import topologies_write
from .upstream import SOURCE_V1ALPHA1, replica_gang
from .workload_deadlines import workload_deadline_apply
from .yunikorn_apps import applications_plan

logger = logging.getLogger(__name__)


@dataclass
class ApplyResult:
    lines: list[str] = field(default_factory=list)
    gangs: list[Gang] = field(default_factory=list)
    pods: int = 0  # pods created or updated
    changed: bool = False


def manifests_apply(documents: list[Any], *, actor: Actor = CLI, submitter: str | None = None) -> ApplyResult:
    """Apply parsed manifests (``documents.documents_parse``, or JSON objects from the API).

    ``actor`` is who asks (services/tenancy.py): a submitter may create objects and change only
    their own gangs and pods; touching anyone else's raises ``tenancy.NotFound`` before the first
    write. ``submitter`` is the name recorded on what is created (the actor's, unless the CLI
    gives one). Raises DeclarationError (``field``, ``reason``) and writes nothing when any
    object is refused.
    """
    if submitter is None or not actor.changes_all:
        submitter = actor.username
    try:
        size = len(json.dumps(documents, default=str))
    except (TypeError, ValueError, RecursionError):
        raise v.DeclarationError("", "the manifest is not JSON-shaped data") from None
    size_check(size)
    manifests = documents_expand(documents)
    with priority_classes(manifests), workload_priority_classes(manifests):
        plan = _plan(_load(manifests))
    with transaction.atomic():
        # Queues first, the tree as a whole (unknown parent, cycle, max below guarantee), so the
        # gangs of the same apply may name them.
        queues_write(plan.loaded)
        # Topologies before the gangs too: a constraint may name a level declared alongside it.
        topologies_write(plan.loaded)
        result = _write(plan, actor, submitter)
        if result.changed:
            transaction.on_commit(_wake_scheduler)
    return result


def _wake_scheduler() -> None:
    from scheduler_core.tasks import cycle_trigger  # tasks imports Celery; keep this module light

    try:
        cycle_trigger()
    except Exception:  # the change is committed; the periodic cycle will pick it up
        logger.exception("could not trigger a scheduling cycle after apply")


# ---------------------------------------------------------------- 1. load


def _load(manifests) -> list[Loaded]:
    loaded, pods = [], 0
    maximum = v.limit("GANGSCHED_MAX_GANG_MEMBERS", v.MAX_GANG_MEMBERS)
    for manifest in manifests:
        item = manifest_load(manifest)
        workload_deadline_apply(manifest, item)
        pods += len(item.pods)
        if pods > maximum:
            raise v.DeclarationError(manifest.name_field, f"one apply may create at most {maximum} pods")
        loaded.append(item)
    return loaded


# ---------------------------------------------------------------- 2. plan


def _plan(loaded: list[Loaded]) -> Plan:
    declared: dict[str, GangSpec] = {}
    for item in loaded:
        for gang in item.gangs:
            if gang.key in declared:
                raise v.DeclarationError(gang.field, f"gang {gang.key} is declared twice")
            declared[gang.key] = gang
    by_objects = set(declared)
    pods: dict[str, PodSpec] = {}
    refs: dict[str, GangRef] = {}
    pods_by_gang: dict[str, list[PodSpec]] = defaultdict(list)
    for item in loaded:
        for pod in item.pods:
            if pod.key in pods:
                raise v.DeclarationError(pod.field, f"pod {pod.key} is declared twice")
            pods[pod.key] = pod
            if pod.gang is None:
                continue
            pods_by_gang[pod.gang.key].append(pod)
            for gang in filter(None, [pod.gang.spec, *pod.gang.siblings]):
                if gang.key in by_objects:
                    continue  # the PodGroup (or GangJob) wins over what its pods say
                first = declared.setdefault(gang.key, gang)
                if _comparable(first) != _comparable(gang):
                    raise v.DeclarationError(
                        gang.field,
                        f"declares gang {gang.key} differently from {first.field or 'the first pod'}",
                    )
            base = declared.get(pod.gang.replica_of or "")
            if pod.gang.key not in declared and base is not None:
                declared[pod.gang.key] = replica_gang(base, pod.gang)  # upstream: one gang per replica key
            if pod.gang.key not in declared:
                refs.setdefault(pod.gang.key, pod.gang)
    applications_plan(declared, pods, pods_by_gang)  # YuniKorn: gang groups, placeholders
    for key in declared:
        refs.pop(key, None)
    kai_podgroup.refs_check(refs, pods_by_gang, declared.values())  # a KAI PodGroup's subgroups
    _queues_adopt(pods_by_gang, declared)
    _queues_check(pods.values(), declared)
    topology_adopt(pods_by_gang, declared)
    for key, members in pods_by_gang.items():
        gang = declared.get(key)
        if gang is not None:
            for pod in members:
                _constraints_default(pod, gang)
    return Plan(loaded, declared, pods, refs, pods_by_gang)


#: Formats whose gang declaration cannot name a queue: their gang is in the queue its pods name
#: (a KAI PodGroup may: one without ``spec.queue`` is read the same way).
_QUEUELESS = {PODGROUP, PODGROUP_LEGACY, SOURCE_V1ALPHA1, SOURCE_V1ALPHA2, KOORDINATOR, kai_podgroup.SOURCE}


def _queues_adopt(pods_by_gang: dict, gangs: dict) -> None:
    """A scheduler-plugins PodGroup, an upstream Workload or a Koordinator gang names no queue;
    its pods' own key does (KAI's ``kai.scheduler/queue``...). ``_queues_check`` then refuses a
    pod naming another."""
    for key, pods in pods_by_gang.items():
        gang = gangs.get(key)
        if gang is None or gang.source_format not in _QUEUELESS or gang.queue != DEFAULT_QUEUE:
            continue
        asking = next((pod.gang for pod in pods if pod.gang.queue), None)
        if asking is not None:
            gang.queue, gang.queue_field = asking.queue, asking.queue_field


def _queue_keep(spec: GangSpec, stored: Gang | None) -> None:
    """Re-applying a queueless gang's declaration keeps the queue its pods gave it."""
    if stored is not None and spec.source_format in _QUEUELESS and spec.queue == DEFAULT_QUEUE:
        spec.queue = stored.queue


def _queue_asked_stored(gang: Gang, pods: list[PodSpec]) -> GangRef | None:
    """The reference of the first pod that moves a queueless gang applied earlier (a PodGroup,
    then its pods, as a real cluster sends them) into the queue it names, while the gang is
    still in the default one; None when none does."""
    if gang.source_format not in _QUEUELESS or gang.queue != DEFAULT_QUEUE:
        return None
    return next((pod.gang for pod in pods if pod.gang.queue), None)


def _queue_adopt_stored(gang: Gang, pods: list[PodSpec]) -> None:
    """Pods joining a queueless gang applied earlier put it in the queue they name
    (``_queue_asked_stored``)."""
    asking = _queue_asked_stored(gang, pods)
    if asking is not None:
        gang.queue = asking.queue
        Gang.objects.filter(pk=gang.pk).update(queue=asking.queue)


def _queues_check(pods, gangs: dict) -> None:
    """A pod's own queue key (Volcano's queue-name annotation, Kueue's label) must agree with its
    gang's queue: two declarations of one value disagreeing is an error, not a pick."""
    for pod in pods:
        ref = pod.gang
        if ref is None or not ref.queue:
            continue
        gang = gangs.get(ref.key)
        queue = gang.queue if gang is not None else None
        if queue is not None and queue != ref.queue:
            raise v.DeclarationError(
                ref.field,
                f"pod {pod.key} asks for queue {ref.queue!r} but gang {ref.key} is in queue {queue!r}",
            )


def _comparable(gang: GangSpec) -> tuple:
    settings_ = {k: val for k, val in gang.settings().items() if k != "declaration"}
    return tuple(sorted(settings_.items(), key=lambda kv: kv[0])), gang.group_key, gang.group


def _constraints_default(pod: PodSpec, gang: GangSpec) -> None:
    """YuniKorn: a member with no constraints of its own takes its task group's."""
    if not pod.node_selector:
        pod.node_selector = dict(gang.member_node_selector)
    if not pod.tolerations:
        pod.tolerations = list(gang.member_tolerations)
    if not pod.affinity:
        pod.affinity = list(gang.member_affinity)


# ---------------------------------------------------------------- 3. write


def _write(plan: Plan, actor: Actor, submitter: str) -> ApplyResult:
    result = ApplyResult()
    # Cluster objects first, as kubectl applies a file in order and they come first in one:
    # nodes, priority classes and namespaces before the workloads that use them.
    object_statuses = {id(item): [obj.write() for obj in item.objects] for item in plan.loaded}
    existing = {
        gang.key: gang
        for gang in Gang.objects.select_for_update().filter(
            keys_q([*plan.gangs, *plan.refs, *plan.pods_by_gang])
        )
    }
    _ownership_check(plan, existing, actor)
    kai_podgroup.stored_refs_check(
        plan.refs, plan.pods_by_gang, existing, None if actor.changes_all else actor.username
    )
    _queue_access_check(plan, existing, actor)
    statuses: dict[str, str] = {}
    gangs_out: dict[str, Gang] = {}
    groups = groups_write(plan.gangs.values())
    for key, spec in plan.gangs.items():
        _queue_keep(spec, existing.get(key))
        topology_keep(spec, existing.get(key), _QUEUELESS)
    topology_resolve(plan)
    for key, spec in plan.gangs.items():
        gang, status = gang_write(spec, existing.get(key), groups, submitter, actor)
        statuses[key], gangs_out[key] = status, gang
        result.lines.append(gang_line(gang, status))
        replicas = Gang.objects.select_for_update().filter(
            provisional=True, declaration__provisional__replica_of=key
        )
        if not actor.changes_all:  # another tenant's pods naming this key stay theirs
            replicas = replicas.filter(submitter=actor.username)
        for replica in replicas if spec.source_format == SOURCE_V1ALPHA1 else ():
            # Pods with a replica key came before their Workload: their gang is declared now.
            ref = GangRef(replica.namespace, replica.name, spec.source_format, spec.field)
            replica, status = gang_write(replica_gang(spec, ref), replica, groups, submitter, actor)
            statuses[replica.key], gangs_out[replica.key] = status, replica
            result.lines.append(gang_line(replica, status))
    for key, ref in plan.refs.items():
        gang = existing.get(key)
        if ref.replica_of and (gang is None or gang.provisional):
            gang = replica_write(ref, gang, submitter, actor) or gang
            existing[key] = gang
        if gang is not None and not gang.provisional:
            _queue_adopt_stored(gang, plan.pods_by_gang[key])
            topology_adopt_stored(gang, plan.pods_by_gang[key])
            _queues_check(plan.pods_by_gang[key], {key: gang})
            gangs_out[key] = gang  # declared by an earlier apply: the pods just join it
            continue
        gang, status = provisional_write(ref, gang, len(plan.pods_by_gang[key]), submitter)
        topology_adopt_stored(gang, plan.pods_by_gang[key])  # kept for the PodGroup to come
        statuses[key], gangs_out[key] = status, gang
        result.lines.append(gang_line(gang, status))
    pod_statuses = pods_write(plan, gangs_out, submitter)
    gang_estimates_refresh(gang.pk for gang in gangs_out.values())
    _pods_joined_record(plan, gangs_out, statuses, pod_statuses, actor)
    result.pods = sum(1 for status in pod_statuses.values() if status != UNCHANGED)
    object_lines = []
    for item in plan.loaded:
        own = [statuses[g.key] for g in item.gangs] + [pod_statuses[p.key] for p in item.pods]
        own += object_statuses[id(item)]
        object_lines.append(f"{item.object_name} {_combined(own)}")
        if not item.object_name.startswith("pod/"):
            object_lines.extend(f"pod/{pod.name} {pod_statuses[pod.key]}" for pod in item.pods)
    result.lines = object_lines + result.lines
    result.gangs = list(gangs_out.values())
    result.changed = any(
        s != UNCHANGED
        for s in [*statuses.values(), *pod_statuses.values(), *sum(object_statuses.values(), [])]
    )
    return result


def _ownership_check(plan: Plan, gangs: dict[str, Gang], actor: Actor) -> None:
    """Before the first write: every existing gang or pod the manifests touch is the actor's."""
    for key, gang in gangs.items():
        actor.require(gang.submitter, f"gang {key}")
    if not actor.changes_all:
        for member in Member.objects.filter(keys_q(plan.pods)).only("namespace", "name", "submitter"):
            actor.require(member.submitter, f"pod {member.key}")


def _queue_access_check(plan: Plan, gangs: dict[str, Gang], actor: Actor) -> None:
    """Before the first write: a submitter puts new work (or moves work) only into queues they
    may use; one they may not reads as a missing queue (services/queues.py)."""
    if actor.changes_all:
        return
    for key, spec in plan.gangs.items():
        if key not in gangs or gangs[key].queue != spec.queue:
            queue_require(actor, spec.namespace, spec.queue, spec.queue_field or spec.field)
    for key, ref in plan.refs.items():
        stored = gangs.get(key)
        if stored is None:
            queue_require(actor, ref.namespace, ref.queue or "default", ref.queue_field or ref.field)
        elif not stored.provisional and (asking := _queue_asked_stored(stored, plan.pods_by_gang[key])):
            queue_require(actor, ref.namespace, asking.queue, asking.queue_field or asking.field)
    alone = {key: pod for key, pod in plan.pods.items() if pod.gang is None}
    stored = {}
    if alone:
        rows = Member.objects.filter(keys_q(alone)).values_list("namespace", "name", "queue")
        stored = {f"{ns}/{name}": queue for ns, name, queue in rows}
    for key, pod in alone.items():
        queue = pod_queue(pod)
        if stored.get(key) != queue:
            queue_require(actor, pod.namespace, queue, pod.queue_field or pod.field)


def _pods_joined_record(plan: Plan, gangs: dict[str, Gang], statuses, pod_statuses, actor: Actor) -> None:
    for key, pods in plan.pods_by_gang.items():
        gang = gangs.get(key)
        if gang is None or statuses.get(key) == CREATED:
            continue  # a new gang's pods are part of its creation
        joined = [pod.name for pod in pods if pod_statuses[pod.key] == CREATED]
        changed = [pod.name for pod in pods if pod_statuses[pod.key] == CONFIGURED]
        if joined or changed:
            pods_record(gang, actor, joined, changed)


def _combined(statuses: list[str]) -> str:
    if statuses and all(s == CREATED for s in statuses):
        return CREATED
    if all(s == UNCHANGED for s in statuses):
        return UNCHANGED
    return CONFIGURED
