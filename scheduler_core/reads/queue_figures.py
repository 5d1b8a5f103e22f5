"""Live figures of the queue tree, read from the database (the API, ``manage.py get queues`` and
``describe queue`` share them).

Per queue and resource, in canonical units:

- ``used``: requests of the bound pods (a ``node``, terminating ones included: they still hold
  it) of active members charged to the queue;
- ``pending``: requests of the pending ones (no node yet) that the scheduler still tries to place;
- ``stalled``: requests of the pending ones of gangs it no longer tries (timed out, failed,
  killed) until an operator retries or deletes them: demand that does not wait in the queue;
- ``borrowed``: ``used`` above ``guarantee``, where positive;
- ``fair_share`` and ``lent``: as the latest scheduling cycle computed them (its QueueSample;
  None before a cycle has seen the queue): only the engine knows them.

A gang's members are charged to the gang's queue, a pod alone to its own (``Member.queue``); a
name that is a Kueue LocalQueue of the pod's namespace stands for its ClusterQueue. An inner
queue's figures add up its whole subtree. Four queries, whatever the number of queues or pods:
the requests are the sums the database keeps per queue name (``scheduler_core.reads.tallies``),
and the stalled part is read from the few gangs in those phases.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, Q
from django.db.models.functions import Coalesce

from scheduler_core.engine.model import INACTIVE_PHASES
from scheduler_core.models import LocalQueue, Member, Queue, QueueSample
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES, MemberPhase
from scheduler_core.reads.tallies import POD_COUNT, queue_charges, queue_charges_stalled


@dataclass
class QueueFigures:
    queue: Queue
    path: str  # "ml/nlp": the names from the top of the tree down
    parent: str | None
    depth: int
    children: list[str] = field(default_factory=list)
    used: dict[str, int] = field(default_factory=dict)
    pending: dict[str, int] = field(default_factory=dict)
    pending_pods: int = 0
    stalled: dict[str, int] = field(default_factory=dict)
    stalled_pods: int = 0
    fair_share: dict[str, int] | None = None
    lent: dict[str, int] | None = None

    @property
    def borrowed(self) -> dict[str, int]:
        guarantee = self.queue.guarantee
        return {
            r: amount - guarantee.get(r, 0) for r, amount in self.used.items() if amount > guarantee.get(r, 0)
        }

    @property
    def state(self) -> str:
        return "Open" if self.queue.open else "Closed"


def _add(total: dict[str, int], amounts: dict[str, int]) -> None:
    for resource, amount in amounts.items():
        total[resource] = total.get(resource, 0) + amount


def queue_figures() -> dict[str, QueueFigures]:
    """Every queue's figures, in tree order (parents before their children, siblings by name)."""
    queues = {queue.name: queue for queue in Queue.objects.select_related("parent").order_by("name")}
    local = {
        (namespace, name): target
        for namespace, name, target in LocalQueue.objects.values_list(
            "namespace", "name", "cluster_queue__name"
        )
    }
    children: dict[str | None, list[str]] = defaultdict(list)
    for name, queue in queues.items():
        children[queue.parent.name if queue.parent_id else None].append(name)
    figures: dict[str, QueueFigures] = {}

    def walk(name: str, path: str, depth: int) -> None:
        queue = queues[name]
        figures[name] = QueueFigures(queue, path, queue.parent.name if queue.parent_id else None, depth)
        figures[name].children = list(children[name])
        for child in children[name]:
            walk(child, f"{path}/{child}", depth + 1)

    for top in children[None]:
        walk(top, top, 0)
    if not figures:
        return figures
    # The sums the database keeps per (namespace, declared queue, bound) (``QueueUsage``, kept by
    # the member table's triggers): a few rows per queue, whatever the number of pods.
    stalled = queue_charges_stalled()
    for (namespace, declared, bound), amounts in queue_charges().items():
        name = local.get((namespace, declared), declared)
        held = stalled.get((namespace, declared, bound), {})
        waiting = {resource: amount - held.get(resource, 0) for resource, amount in amounts.items()}
        pods = waiting.pop(POD_COUNT, 0)
        stalled_pods = held.get(POD_COUNT, 0)
        held = {resource: amount for resource, amount in held.items() if resource != POD_COUNT}
        while name in figures:  # the leaf and each of its ancestors
            entry = figures[name]
            if bound:
                _add(entry.used, waiting)
            else:
                _add(entry.pending, {resource: amount for resource, amount in waiting.items() if amount})
                entry.pending_pods += pods
                _add(entry.stalled, held)
                entry.stalled_pods += stalled_pods
            name = entry.parent
    for sample in latest_samples():
        if sample.queue in figures:
            figures[sample.queue].fair_share, figures[sample.queue].lent = sample.fair_share, sample.lent
    return figures


def own_pod_counts(figures: dict[str, QueueFigures], username: str) -> dict[str, tuple[int, int]]:
    """Per queue of ``figures`` (subtree summed): how many of ``username``'s pods without a node
    wait in it and how many are stalled, as ``pending_pods`` and ``stalled_pods`` count everyone's
    (a gang's pod is its gang's submitter's; a pod alone, its own). One aggregate over that
    submitter's pods: what a submitter reads instead of every tenant's counts."""
    names = LocalQueue.objects.values_list("namespace", "name", "cluster_queue__name")
    local = {(namespace, name): target for namespace, name, target in names}
    inactive = sorted(phase.value for phase in INACTIVE_PHASES)
    stalled = Q(gang__phase__in=inactive, phase=MemberPhase.PENDING.value)
    rows = (
        Member.objects.filter(node__isnull=True, phase__in=ACTIVE_MEMBER_PHASES)
        .filter(Q(gang__submitter=username) | Q(gang__isnull=True, submitter=username))
        .order_by()
        .values_list("namespace", Coalesce("gang__queue", "queue"))
        .annotate(pods=Count("id"), stalled=Count("id", filter=stalled))
    )
    counts: dict[str, tuple[int, int]] = {}
    for namespace, declared, pods, held in rows:
        name = local.get((namespace, declared), declared)
        while name in figures:
            pending, stalled_pods = counts.get(name, (0, 0))
            counts[name] = (pending + pods - held, stalled_pods + held)
            name = figures[name].parent
    return counts


def latest_samples() -> list[QueueSample]:
    """Each existing queue's newest sample: one query, one probe of the (queue, minute) index
    per queue, however long the history."""
    samples, queues = QueueSample._meta.db_table, Queue._meta.db_table
    return list(
        QueueSample.objects.raw(
            f"SELECT s.* FROM {queues} q CROSS JOIN LATERAL (SELECT * FROM {samples} s "
            "WHERE s.queue = q.name ORDER BY s.minute DESC LIMIT 1) s ORDER BY s.queue"
        )
    )
