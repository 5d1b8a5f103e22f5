"""The queue tree for the engine's Snapshot, read in one query.

No Queue row: an empty tree, and everything shares the cluster as the implicit ``default`` queue
(gangsched without queues). Otherwise every Queue row becomes an ``engine.Queue``, and the queue
a gang or pod names is resolved: a Kueue LocalQueue of its namespace stands for its ClusterQueue
(``queue_resolver``), anything else names a queue itself.

A Kueue Cohort's own ``nominalQuota`` is a pool shared on top of its ClusterQueues' quotas, and
its ``borrowingLimit`` caps what the whole subtree borrows beyond that (Kueue's hierarchical
cohorts): its engine guarantee is its pool plus what its children are guaranteed, and its max
that plus its borrowing limit (``_kueue_cohorts``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import F, Q, Value
from django.db.models.functions import Concat

from scheduler_core.engine import model as engine
from scheduler_core.models import Queue
from scheduler_core.snapshot.json_fields import ints

Resolve = Callable[[str, str], str]


def queues_read() -> tuple[tuple[engine.Queue, ...], Resolve]:
    """The tree (ordered by name) and the resolver of (namespace, declared name) -> queue."""
    rows = (
        Queue.objects.annotate(
            local=ArrayAgg(
                Concat(F("local_queues__namespace"), Value("/"), F("local_queues__name")),
                filter=Q(local_queues__isnull=False),
                default=Value([]),
            )
        )
        .order_by("name")
        .values_list(
            *("name", "parent__name", "guarantee", "max", "lending_limit"),
            *("weight", "reclaimable", "open", "local", "cohort", "source_format", "extra"),
            *("weights", "unlimited_guarantee", "reclaim_delay_s", "preempt_within", "reclaim_up_to"),
        )
    )
    queues, local, pools = [], {}, {}
    for row in rows:
        name, parent, guarantee, max_, lending, weight, reclaimable, open_, local_keys = row[:9]
        cohort, source_format, extra, weights, unlimited, delay, within, up_to = row[9:]
        if cohort and source_format == "kueue":
            pools[name] = ints((extra or {}).get("borrowing_limit") or {})
        queues.append(
            engine.Queue(
                name=name,
                parent=parent,
                guarantee=ints(guarantee),
                max=ints(max_),
                lending_limit=ints(lending),
                weight=weight,
                reclaimable=reclaimable,
                open=open_,
                weights={resource: float(w) for resource, w in (weights or {}).items()},
                unlimited_guarantee=frozenset(unlimited or ()),
                reclaim_delay_s=delay,
                preempt_within=within,
                reclaim_up_to=up_to,
            )
        )
        for key in local_keys:
            local[key] = name

    def resolve(namespace: str, declared: str) -> str:
        return local.get(f"{namespace}/{declared}", declared)

    return tuple(_kueue_cohorts(queues, pools)), resolve


def _kueue_cohorts(queues: list[engine.Queue], pools: dict[str, dict[str, int]]) -> list[engine.Queue]:
    """Kueue cohorts (``pools``: name -> borrowing limit) with their subtree's guarantee added to
    their own pool, children first, every other queue counting as what the engine makes of it
    (``fairshare.guarantees``: at least its children's); the rest unchanged."""
    if not pools:
        return queues
    children: dict[str, list[str]] = {}
    for queue in queues:
        if queue.parent is not None:
            children.setdefault(queue.parent, []).append(queue.name)
    by_name = {queue.name: queue for queue in queues}
    held: dict[str, dict[str, int]] = {}

    def guarantee(name: str, seen: frozenset = frozenset()) -> dict[str, int]:
        if name in held:
            return held[name]
        own = dict(by_name[name].guarantee)
        below: dict[str, int] = {}
        for child in children.get(name, ()):
            if child not in seen:  # a cycle is refused when written; never loop on one
                for resource, amount in guarantee(child, seen | {name}).items():
                    below[resource] = below.get(resource, 0) + amount
        for resource, amount in below.items():
            own[resource] = (
                own.get(resource, 0) + amount if name in pools else max(own.get(resource, 0), amount)
            )
        held[name] = own
        return own

    out = []
    for queue in queues:
        if queue.name in pools:
            total = guarantee(queue.name)
            cap = dict(queue.max)
            for resource, limit in pools[queue.name].items():
                cap[resource] = total.get(resource, 0) + limit
            queue = dataclasses.replace(queue, guarantee=total, max=cap)
        out.append(queue)
    return out
