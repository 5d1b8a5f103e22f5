"""The queue families of ``/metrics``, read from the latest queue samples.

Per queue (``queue``, its name) and resource (``resource``), as the last cycle left them
(``QueueSample``, one query for every queue: a lateral join on its index), in the engine's
canonical units (milli-CPU, bytes, counts):

- ``gangsched_queue_usage``, ``gangsched_queue_guarantee``, ``gangsched_queue_fair_share``,
  ``gangsched_queue_pending`` (requests of the pods left pending), ``gangsched_queue_borrowed``
  (usage above the guarantee), ``gangsched_queue_lent`` (guarantee lent to others), each for
  every resource any of the queue's figures names, zeros included;
- ``gangsched_queue_max``: only where the queue is limited (a missing series: unlimited);
- ``gangsched_queue_open``: 1 when open, 0 when closed;
- ``gangsched_queue_reclaim_evictions_total{queue, reclaimed_by}`` (counter): gangs of ``queue``
  evicted by reclaim for ``reclaimed_by``, counted from their ``preempted`` history rows (whose
  details name the queue the room went to). Two more queries.

Only queues that exist now are reported, and only samples of the history window.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from django.db.models import Count
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from scheduler_core.models import GangEvent, GangEventKind, LocalQueue
from scheduler_core.reads.queue_figures import latest_samples

GAUGES = {
    "usage": "Requests of the queue's running pods (its subtree's for an inner queue).",
    "guarantee": "The queue's guarantee (nominal quota, deserved, guaranteed).",
    "fair_share": "The queue's fair share this cycle: its guarantee where it has demand, plus its "
    "weighted part of what its parent has left.",
    "pending": "Requests of the queue's pods left pending by the last cycle.",
    "borrowed": "Usage above the guarantee.",
    "lent": "Guarantee of the queue lent to other queues.",
}


def queue_families() -> Iterator:
    samples = latest_samples()
    families = {
        name: GaugeMetricFamily(f"gangsched_queue_{name}", text, labels=["queue", "resource"])
        for name, text in GAUGES.items()
    }
    limit = GaugeMetricFamily(
        "gangsched_queue_max", "The queue's max (where limited).", labels=["queue", "resource"]
    )
    state = GaugeMetricFamily(
        "gangsched_queue_open", "1 when the queue is open, 0 when closed.", labels=["queue"]
    )
    for sample in samples:
        resources = sorted({r for field in (*GAUGES, "max") for r in getattr(sample, field) or {}} - {"pods"})
        for name, family in families.items():
            amounts = getattr(sample, name) or {}
            for resource in resources:
                family.add_metric([sample.queue, resource], amounts.get(resource, 0))
        for resource, amount in sorted((sample.max or {}).items()):
            limit.add_metric([sample.queue, resource], amount)
        state.add_metric([sample.queue], 1 if sample.open else 0)
    yield from families.values()
    yield limit
    yield state
    yield _reclaims()


def _reclaims() -> CounterMetricFamily:
    counter = CounterMetricFamily(
        "gangsched_queue_reclaim_evictions",
        "Gangs evicted by reclaim, by their queue and the queue the room went to.",
        labels=["queue", "reclaimed_by"],
    )
    rows = (
        GangEvent.objects.filter(kind=GangEventKind.PREEMPTED, details__has_key="reclaimedBy")
        .order_by()
        .values_list("gang__namespace", "gang__queue", "details__reclaimedBy")
        .annotate(n=Count("id"))
    )
    counts = {(namespace, declared, by): n for namespace, declared, by, n in rows}
    if not counts:
        return counter
    local = {
        (namespace, name): target
        for namespace, name, target in LocalQueue.objects.values_list(
            "namespace", "name", "cluster_queue__name"
        )
    }
    totals: Counter = Counter()
    for (namespace, declared, by), n in counts.items():
        totals[(local.get((namespace, declared), declared), by)] += n
    for (queue, by), n in sorted(totals.items()):
        counter.add_metric([queue, by], n)
    return counter
