"""The one place queues are written, and who may submit to which.

Writers: ``queue_put`` / ``queue_remove``, ``local_queue_put`` / ``local_queue_remove``,
``flavor_put`` / ``flavor_remove``, ``queue_close`` / ``queue_open``. Each answers as kubectl
does (``created``, ``configured``, ``unchanged``) and raises ``DeclarationError`` (a field and a
reason; nothing written) for what the tree's rules refuse (``queue_checks.py``). An apply of
several queues calls ``queues_check(specs)`` once for all of them and then ``queue_put(spec,
checked=True)`` parents first (``queues_put`` does both), so that an apply raising a parent's
max and its children's guarantees together is judged as a whole, not step by step.

Who may submit (``queue_allows``, asked in one query in services/queue_access.py), when at least
one Queue row exists (with none, queues are not in use and everything is the implicit
``default`` queue): operators (and the server-side CLI, and the Kubernetes mirror) anywhere;
anyone else only to a queue that exists and either has no QueueAccess rows or lists them or one
of their groups. ``default`` is open unless a Queue row named ``default`` has access rows. To a
submitter, a queue they may not use reads exactly as one that does not exist: ``queue X not
found`` (``queue_require``).
"""

from __future__ import annotations

import contextlib

from django.db import transaction

from scheduler_core.models import LocalQueue, Queue, ResourceFlavor, Topology
from scheduler_core.specs.errors import DeclarationError, join
from scheduler_core.specs.queues import FlavorSpec, LocalQueueSpec, QueueSpec

from .named_rows import named_row_put
from .queue_access import queue_allows, queue_require
from .queue_checks import local_queue_active, queue_active, queues_check, spec_of

__all__ = [
    "QueueInUse",
    "flavor_put",
    "flavor_remove",
    "local_queue_put",
    "local_queue_active",
    "local_queue_remove",
    "queue_allows",
    "queue_close",
    "queue_for_gang",
    "queue_open",
    "queue_put",
    "queue_remove",
    "queue_remove_refusal",
    "queue_require",
    "queues_check",
    "queues_put",
    "spec_of",
]

CREATED, CONFIGURED, UNCHANGED = "created", "configured", "unchanged"
_QUEUE_FIELDS = ("guarantee", "max", "lending_limit", "weight", "weights", "unlimited_guarantee")
_QUEUE_FIELDS += ("reclaimable", "open", "cohort", "reclaim_delay_s", "preempt_within", "reclaim_up_to")
_QUEUE_FIELDS += ("default_runtime_s", "source_format", "declaration", "extra")


class QueueInUse(ValueError):
    """Deleting a queue that children, LocalQueues or active work still need (the API's 409)."""


class QueueNotFound(ValueError):
    """A queue, LocalQueue or flavor to remove, close or open does not exist (the API's 404;
    ``delete -f`` reports it as any missing object; not ``delete.NotFound``, whose module
    reaches the scheduling loop and back to the manifest readers)."""


# ---------------------------------------------------------------- Queue


def queues_put(specs: list[QueueSpec]) -> list[str]:
    """Check ``specs`` together, then write them parents first; statuses in ``specs``' order."""
    queues_check(specs)
    by_name = {spec.name: spec for spec in specs}
    statuses: dict[str, str] = {}

    def put(spec: QueueSpec) -> None:
        if spec.name in statuses:
            return
        statuses[spec.name] = ""  # visiting: the check has ruled cycles out
        parent = by_name.get(spec.parent or "")
        if parent is not None:
            put(parent)
        statuses[spec.name] = queue_put(spec, checked=True)

    with transaction.atomic():
        for spec in specs:
            put(spec)
    return [statuses[spec.name] for spec in specs]


@transaction.atomic
def queue_put(spec: QueueSpec, *, checked: bool = False) -> str:
    """Create or update one queue; ``checked``: ``queues_check`` already judged its apply."""
    if not checked:
        queues_check([spec])
    parent = None
    if spec.parent is not None:
        parent = Queue.objects.filter(name=spec.parent).first()
        if parent is None:
            raise DeclarationError(join(spec.field, "parent"), f"parent queue {spec.parent} not found")
    fields = {key: getattr(spec, key) for key in _QUEUE_FIELDS}
    fields["weight"] = float(fields["weight"])
    fields["weights"] = {resource: float(weight) for resource, weight in fields["weights"].items()}
    fields["unlimited_guarantee"] = sorted(fields["unlimited_guarantee"])
    row = Queue.objects.select_for_update().filter(name=spec.name).first()
    if row is None:
        Queue.objects.create(name=spec.name, parent=parent, **fields)
        return CREATED
    same = row.parent_id == (parent.pk if parent else None)
    if same and all(getattr(row, key) == value for key, value in fields.items()):
        return UNCHANGED
    row.parent = parent
    for key, value in fields.items():
        setattr(row, key, value)
    row.save()
    return CONFIGURED


def queue_remove_refusal(row: Queue) -> str | None:
    """Why ``row`` may not be deleted now (children, LocalQueues, active work), or None."""
    name = row.name
    children = list(row.children.values_list("name", flat=True)[:5])
    if children:
        return f"queue {name} has child queues ({', '.join(children)}): delete or move them first"
    local = [f"{ns}/{lq}" for ns, lq in row.local_queues.values_list("namespace", "name")[:5]]
    if local:
        return f"queue {name} is the ClusterQueue of LocalQueue {', '.join(local)}: delete them first"
    if queue_active([name]):
        return f"queue {name} holds active gangs or pods: close it and let them finish first"
    return None


@transaction.atomic
def queue_remove(name: str) -> str:
    """Delete a queue no child, LocalQueue or active gang or pod needs (else ``QueueInUse``
    naming what holds it); its access rows go with it."""
    row = Queue.objects.select_for_update().filter(name=name).first()
    if row is None:
        raise QueueNotFound(f"queue {name} not found")
    refusal = queue_remove_refusal(row)
    if refusal:
        raise QueueInUse(refusal)
    row.delete()
    return "deleted"


def queues_retire(source_format: str, keep: set[str]) -> dict[str, str]:
    """Queues of ``source_format`` its latest declaration no longer lists (YuniKorn's config
    re-applied without them), children first: deleted when nothing needs them, else closed, as
    YuniKorn drains a removed queue (what runs finishes, nothing new starts; the next apply
    deletes it once empty). Returns what happened to each, "deleted" or "closed"."""
    rows = {row.name: row for row in Queue.objects.select_for_update().filter(source_format=source_format)}
    gone = [name for name in rows if name not in keep]

    def depth(name: str) -> int:
        row, n = rows[name], 0
        while row.parent_id is not None and row.parent.name in rows:
            row, n = rows[row.parent.name], n + 1
        return n

    done: dict[str, str] = {}
    for name in sorted(gone, key=lambda name: (-depth(name), name)):
        row = Queue.objects.get(pk=rows[name].pk)
        if queue_remove_refusal(row) is None:
            row.delete()
            done[name] = "deleted"
        elif row.open:
            row.open = False
            row.save(update_fields=["open", "updated"])
            done[name] = "closed"
    return done


def _open_set(name: str, value: bool) -> str:
    with transaction.atomic():
        row = Queue.objects.select_for_update().filter(name=name).first()
        if row is None:
            raise QueueNotFound(f"queue {name} not found")
        if row.open == value:
            return UNCHANGED
        row.open = value
        row.save(update_fields=["open", "updated"])
    _wake()
    return CONFIGURED


def queue_close(name: str) -> str:
    """A closed queue places nothing new; what runs keeps running."""
    return _open_set(name, False)


def queue_open(name: str) -> str:
    return _open_set(name, True)


def _wake() -> None:
    def trigger() -> None:
        # Up a layer on purpose, as in submit.py: cycle_trigger sits beside the Celery task it queues.
        from scheduler_core.tasks import cycle_trigger

        with contextlib.suppress(Exception):  # committed; the periodic cycle picks it up
            cycle_trigger()

    transaction.on_commit(trigger)


# ---------------------------------------------------------------- LocalQueue, ResourceFlavor


@transaction.atomic
def local_queue_put(spec: LocalQueueSpec) -> str:
    target = Queue.objects.filter(name=spec.cluster_queue).first()
    if target is None:
        raise DeclarationError(
            join(spec.field, "spec", "clusterQueue"), f"queue {spec.cluster_queue} not found"
        )
    row = LocalQueue.objects.select_for_update().filter(namespace=spec.namespace, name=spec.name).first()
    if row is None:
        LocalQueue.objects.create(
            namespace=spec.namespace, name=spec.name, cluster_queue=target, declaration=spec.declaration
        )
        return CREATED
    if row.cluster_queue_id == target.pk and row.declaration == spec.declaration:
        return UNCHANGED
    row.cluster_queue, row.declaration = target, spec.declaration
    row.save()
    return CONFIGURED


def local_queue_refusal(namespace: str, name: str) -> str:
    return f"localqueue {namespace}/{name} is named by active gangs or pods: let them finish first"


@transaction.atomic
def local_queue_remove(namespace: str, name: str) -> str:
    """Delete a LocalQueue no active gang or pod of its namespace names (else ``QueueInUse``):
    their running work would otherwise be charged to no queue, and their ClusterQueue's usage
    would drop while they still run."""
    row = LocalQueue.objects.select_for_update().filter(namespace=namespace, name=name).first()
    if row is None:
        raise QueueNotFound(f"localqueue {namespace}/{name} not found")
    if local_queue_active(namespace, name):
        raise QueueInUse(local_queue_refusal(namespace, name))
    row.delete()
    return "deleted"


@transaction.atomic
def flavor_put(spec: FlavorSpec) -> str:
    if spec.topology_name and not Topology.objects.filter(name=spec.topology_name).exists():
        raise DeclarationError(
            spec.topology_field,
            f"topology {spec.topology_name} not found: apply the Topology first (or alongside)",
        )
    fields = {"node_labels": spec.node_labels, "declaration": spec.declaration}
    return named_row_put(ResourceFlavor, spec.name, fields)


def flavor_remove(name: str) -> str:
    deleted, _ = ResourceFlavor.objects.filter(name=name).delete()
    if not deleted:
        raise QueueNotFound(f"resourceflavor {name} not found")
    return "deleted"


# ---------------------------------------------------------------- who submits where


def queue_for_gang(namespace: str, declared_name: str) -> str:
    """The queue a gang or pod of ``namespace`` naming ``declared_name`` is charged to: a Kueue
    LocalQueue of that namespace resolves to its ClusterQueue, anything else is the name itself."""
    target = (
        LocalQueue.objects.filter(namespace=namespace, name=declared_name)
        .values_list("cluster_queue__name", flat=True)
        .first()
    )
    return target or declared_name
