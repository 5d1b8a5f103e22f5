"""The queue tree's rules, checked over what one apply declares together with what is stored.

``queues_check`` (re-exported by ``services/queues.py``, the one writer) raises a
``DeclarationError`` naming the spec's ``field`` and the key at fault, and reads only: nothing
is written when it raises. The rules:

- a name is 1-253 characters, declared once per apply;
- amounts (guarantee, max, lending_limit) are non-negative integers (canonical units), each below
  ``MAX_AMOUNT`` so sums over a tree stay in int64; weight, and each weight per resource
  (``weights``), is a finite number > 0; a resource guaranteed all it asks
  (``unlimited_guarantee``, KAI's ``quota: -1``) has no amount in ``guarantee``;
  ``reclaim_up_to`` is one the engine knows (``RECLAIM_UP_TO``);
- the parent exists (stored, or declared in the same apply), and following parents never leads
  back to the queue (no cycle);
- per resource: max >= guarantee; lending_limit <= guarantee; the guarantees of a queue's
  children add up to no more than its max;
- a queue that holds active gangs or pods (``queue_active``) stays a place work can be in: it
  may not become a cohort, nor get children.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from scheduler_core.engine.model import RECLAIM_UP_TO, GangPhase
from scheduler_core.models import Gang, LocalQueue, Member, Queue
from scheduler_core.specs.errors import DeclarationError, join
from scheduler_core.specs.queues import QueueSpec

#: 2^56 canonical units per resource and queue: 64 PiB of memory, far beyond any cluster, and a
#: thousand such amounts still add up within int64.
MAX_AMOUNT = 2**56
MAX_NAME = 253
#: Gangs in these phases hold nothing and will not run again by themselves.
ENDED_PHASES = (GangPhase.FINISHED.value, GangPhase.FAILED.value, GangPhase.KILLED.value)


@dataclass
class _Node:
    """One queue of the merged tree: stored, or as the apply declares it."""

    name: str
    parent: str | None
    guarantee: Mapping[str, int] = field(default_factory=dict)
    max: Mapping[str, int] = field(default_factory=dict)
    cohort: bool = False
    spec: QueueSpec | None = None  # None: stored and untouched by this apply


def queues_check(specs: list[QueueSpec]) -> None:
    """Refuse ``specs`` (one apply's queues) if the tree they make with the stored one breaks a
    rule of this module's docstring; the error names the offending spec's field and key."""
    seen: dict[str, QueueSpec] = {}
    for spec in specs:
        _spec_check(spec)
        if spec.name in seen:
            raise DeclarationError(join(spec.field, "name"), f"queue {spec.name} is declared twice")
        seen[spec.name] = spec
    tree = _tree(specs)
    for spec in specs:
        _ancestry_check(spec, tree)
    _guarantees_check(tree)
    _active_check(specs)


def _spec_check(spec: QueueSpec) -> None:
    if not isinstance(spec.name, str) or not spec.name or len(spec.name) > MAX_NAME:
        raise DeclarationError(join(spec.field, "name"), f"a queue name is 1 to {MAX_NAME} characters")
    for key in ("guarantee", "max", "lending_limit"):
        amounts = getattr(spec, key)
        if not isinstance(amounts, Mapping):
            raise DeclarationError(join(spec.field, key), "must be an object of resource -> amount")
        for resource, amount in amounts.items():
            where = join(spec.field, key, str(resource))
            if not isinstance(amount, int) or isinstance(amount, bool):
                raise DeclarationError(where, f"must be an integer amount, not {amount!r}")
            if amount < 0:
                raise DeclarationError(where, f"must not be negative ({amount})")
            if amount > MAX_AMOUNT:
                raise DeclarationError(where, f"at most {MAX_AMOUNT} canonical units")
    weight = spec.weight
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
        raise DeclarationError(join(spec.field, "weight"), f"must be a number, not {weight!r}")
    if weight <= 0:
        raise DeclarationError(join(spec.field, "weight"), f"must be greater than 0, not {weight}")
    _weights_check(spec)
    runtime = spec.default_runtime_s
    if runtime is not None and (
        isinstance(runtime, bool) or not isinstance(runtime, (int, float)) or not 0 <= runtime < math.inf
    ):
        raise DeclarationError(
            join(spec.field, "default_runtime_s"), f"must be a number of seconds, 0 or more, not {runtime!r}"
        )
    if spec.reclaim_up_to not in RECLAIM_UP_TO:
        raise DeclarationError(
            join(spec.field, "reclaim_up_to"),
            f"must be one of {', '.join(RECLAIM_UP_TO)}, not {spec.reclaim_up_to!r}",
        )
    for resource, amount in spec.max.items():
        if amount < spec.guarantee.get(resource, 0):
            raise DeclarationError(
                join(spec.field, "max", resource),
                f"max {amount} is below the guarantee {spec.guarantee[resource]} of queue {spec.name}",
            )
    for resource, amount in spec.lending_limit.items():
        if amount > spec.guarantee.get(resource, 0):
            raise DeclarationError(
                join(spec.field, "lending_limit", resource),
                f"lending limit {amount} is above the guarantee {spec.guarantee.get(resource, 0)} "
                f"of queue {spec.name}",
            )


def _weights_check(spec: QueueSpec) -> None:
    if not isinstance(spec.weights, Mapping):
        raise DeclarationError(join(spec.field, "weights"), "must be an object of resource -> weight")
    for resource, weight in spec.weights.items():
        where = join(spec.field, "weights", str(resource))
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
            raise DeclarationError(where, f"must be a number, not {weight!r}")
        if weight <= 0:
            raise DeclarationError(where, f"must be greater than 0, not {weight}")
    unlimited = spec.unlimited_guarantee
    if not isinstance(unlimited, (list, tuple)) or not all(isinstance(r, str) for r in unlimited):
        raise DeclarationError(join(spec.field, "unlimited_guarantee"), "must be a list of resource names")
    for resource in unlimited:
        if resource in spec.guarantee:
            raise DeclarationError(
                join(spec.field, "guarantee", resource),
                f"{resource} is guaranteed all the queue asks: it has no guaranteed amount too",
            )


def _tree(specs: Iterable[QueueSpec]) -> dict[str, _Node]:
    tree = {
        name: _Node(name, parent, guarantee, max_, cohort)
        for name, parent, guarantee, max_, cohort in Queue.objects.values_list(
            "name", "parent__name", "guarantee", "max", "cohort"
        )
    }
    for spec in specs:
        tree[spec.name] = _Node(spec.name, spec.parent, spec.guarantee, spec.max, spec.cohort, spec)
    return tree


def _ancestry_check(spec: QueueSpec, tree: dict[str, _Node]) -> None:
    where = join(spec.field, "parent")
    if spec.parent is None:
        return
    if spec.parent not in tree:
        raise DeclarationError(where, f"parent queue {spec.parent} not found")
    path, name = [spec.name], spec.parent
    while name is not None:
        if name == spec.name:
            raise DeclarationError(
                where, f"queue {spec.name} would be its own ancestor: {' -> '.join([*path, name])}"
            )
        path.append(name)
        name = tree[name].parent if name in tree else None


def _guarantees_check(tree: dict[str, _Node]) -> None:
    children: dict[str, list[_Node]] = {}
    for node in tree.values():
        if node.parent is not None:
            children.setdefault(node.parent, []).append(node)
    for parent_name, kids in children.items():
        parent = tree[parent_name]
        if parent.spec is None and all(kid.spec is None for kid in kids):
            continue  # untouched by this apply
        for resource, maximum in parent.max.items():
            total = sum(kid.guarantee.get(resource, 0) for kid in kids)
            if total <= maximum:
                continue
            changed = [kid for kid in kids if kid.spec is not None and kid.guarantee.get(resource, 0)]
            reason = (
                f"the guarantees of queue {parent_name}'s children add up to {total} {resource}, "
                f"above its max {maximum}"
            )
            if changed:
                raise DeclarationError(join(changed[0].spec.field, "guarantee", resource), reason)
            raise DeclarationError(join(parent.spec.field, "max", resource), reason)


def _active_check(specs: list[QueueSpec]) -> None:
    """A queue holding work stays a leaf queue that is not a cohort."""
    becoming_parents = {spec.parent: spec for spec in specs if spec.parent is not None and _new_child(spec)}
    cohorts = {spec.name: spec for spec in specs if spec.cohort}
    busy = queue_active([*becoming_parents, *cohorts])
    for name in busy:
        if name in cohorts:
            raise DeclarationError(
                join(cohorts[name].field, "cohort"),
                f"queue {name} holds active gangs or pods: it cannot become a cohort",
            )
        raise DeclarationError(
            join(becoming_parents[name].field, "parent"),
            f"queue {name} holds active gangs or pods: it cannot become a parent queue",
        )


def _new_child(spec: QueueSpec) -> bool:
    """Whether the spec's parent is a leaf today (a parent already is not: work cannot be in it)."""
    return not Queue.objects.filter(name=spec.parent, children__isnull=False).exists()


def queue_active(names: Iterable[str]) -> list[str]:
    """Which of ``names`` hold work: gangs not finished, failed or killed, or active pods
    scheduled alone, naming the queue itself or a Kueue LocalQueue that points to it."""
    names = sorted(set(names))
    if not names:
        return []
    local = list(
        LocalQueue.objects.filter(cluster_queue__name__in=names).values_list(
            "namespace", "name", "cluster_queue__name"
        )
    )
    busy = set()
    for name in names:
        through = [Q(namespace=ns, queue=lq) for ns, lq, cq in local if cq == name]
        naming = Q(queue=name)
        for q in through:
            naming |= q
        gangs = Gang.objects.filter(naming).exclude(phase__in=ENDED_PHASES)
        pods = Member.objects.filter(naming, gang__isnull=True, phase__in=("Pending", "Running"))
        if gangs.exists() or pods.exists():
            busy.add(name)
    return sorted(busy)


def local_queue_active(namespace: str, name: str) -> bool:
    """Whether gangs not ended, or active pods scheduled alone, of ``namespace`` name the
    LocalQueue: deleting it would leave their running work charged to no queue."""
    naming = Q(namespace=namespace, queue=name)
    gangs = Gang.objects.filter(naming).exclude(phase__in=ENDED_PHASES)
    pods = Member.objects.filter(naming, gang__isnull=True, phase__in=("Pending", "Running"))
    return gangs.exists() or pods.exists()


def spec_of(queue: Queue, **changes: Any) -> QueueSpec:
    """A stored queue as a spec (for the API's and the admin's partial changes)."""
    spec = QueueSpec(
        name=queue.name,
        source_format=queue.source_format,
        field="",
        declaration=dict(queue.declaration),
        parent=queue.parent.name if queue.parent_id else None,
        guarantee=dict(queue.guarantee),
        max=dict(queue.max),
        lending_limit=dict(queue.lending_limit),
        weight=queue.weight,
        weights=dict(queue.weights),
        unlimited_guarantee=list(queue.unlimited_guarantee),
        reclaimable=queue.reclaimable,
        open=queue.open,
        cohort=queue.cohort,
        reclaim_delay_s=queue.reclaim_delay_s,
        default_runtime_s=queue.default_runtime_s,
        preempt_within=queue.preempt_within,
        reclaim_up_to=queue.reclaim_up_to,
        extra=dict(queue.extra),
    )
    for key, value in changes.items():
        setattr(spec, key, value)
    return spec
