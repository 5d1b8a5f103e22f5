"""The queue tree for the engine's Snapshot (issue 19), read in one query.

No Queue row: an empty tree, and everything shares the cluster as the implicit ``default`` queue
(gangsched before issue 19). Otherwise every Queue row becomes an ``engine.Queue``, and the queue
a gang or pod names is resolved: a Kueue LocalQueue of its namespace stands for its ClusterQueue
(``queue_resolver``), anything else names a queue itself.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import F, Q, Value
from django.db.models.functions import Concat

from scheduler_core.engine import model as engine
from scheduler_core.models import Queue
from scheduler_core.snapshot_json import ints

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
            *("weight", "reclaimable", "open", "local"),
        )
    )
    queues, local = [], {}
    for name, parent, guarantee, max_, lending, weight, reclaimable, open_, local_keys in rows:
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
            )
        )
        for key in local_keys:
            local[key] = name

    def resolve(namespace: str, declared: str) -> str:
        return local.get(f"{namespace}/{declared}", declared)

    return tuple(queues), resolve
