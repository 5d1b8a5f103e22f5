"""What the Queues page shows, read in a fixed number of queries whatever the number of queues.

Per queue, in tree order: its state, the gangs waiting in it (and its subtree) that the user may
see, and per resource the bar: usage (live: the bound pods charged to it, ``queue_figures``)
against its guarantee, its fair share and its max (the fair share and what it lends come from
the last cycle's sample, ``QueueSample``: only the engine computes them). The chart: one queue's
samples over the last hour, one point per minute.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from django.db.models import Count

from dashboard.api.permissions import queue_figures_visible
from dashboard.api.selectors import gang_visible
from scheduler_core.engine.quantity import display_quantity, format_quantity
from scheduler_core.models import LocalQueue, QueueSample
from scheduler_core.models.gangs import waiting_q
from scheduler_core.reads.queue_figures import QueueFigures, latest_samples

CHART_MINUTES = 60
#: Resources a queue's bars leave out (counted, never contended for by tenants).
HIDDEN_RESOURCES = {"pods"}


def _pct(amount: int | None, scale: int) -> float | None:
    return None if amount is None else round(min(100.0, 100.0 * amount / max(scale, 1)), 1)


def resource_bar(resource: str, *, used, guarantee, fair_share, max_, borrowed, lent, pending) -> dict:
    """One resource's figures and where its bar's fill and marks go (percent of the bar): the
    bar spans the max where the queue has one, else the largest of the figures. Texts are as
    displayed (``display_quantity``, ``244Gi``), ``*_exact`` as Kubernetes writes them."""
    scale = max_ if max_ is not None else max(used, guarantee, fair_share or 0, 1)
    text = lambda amount: display_quantity(resource, int(amount))  # noqa: E731
    exact = lambda amount: format_quantity(resource, int(amount))  # noqa: E731

    def label(write) -> str:
        parts = [f"{write(used)} used", f"guarantee {write(guarantee)}"]
        if fair_share is not None:
            parts.append(f"fair share {write(fair_share)}")
        parts.append(f"max {write(max_)}" if max_ is not None else "no max")
        return " · ".join(parts)

    return {
        "resource": resource,
        "used": used,
        "guarantee": guarantee,
        "fair_share": fair_share,
        "max": max_,
        "borrowed": borrowed,
        "lent": lent,
        "pending": pending,
        "used_pct": _pct(used, scale),
        "guarantee_pct": _pct(guarantee, scale),
        "fair_pct": _pct(fair_share, scale),
        "label": label(text),
        "exact_label": label(exact),
        "borrowed_text": text(borrowed),
        "borrowed_exact": exact(borrowed),
        "lent_text": text(lent) if lent is not None else "",
        "lent_exact": exact(lent) if lent is not None else "",
        "pending_text": text(pending),
        "pending_exact": exact(pending),
        "hot": max_ is not None and used >= max_,
    }


def _resources(figures: QueueFigures, sample: QueueSample | None) -> list[str]:
    queue = figures.queue
    names = {*queue.guarantee, *queue.max, *figures.used, *figures.pending}
    if sample is not None:
        names |= {*sample.fair_share, *sample.lent}
    return sorted(names - HIDDEN_RESOURCES)


def waiting_gangs(user, figures: dict[str, QueueFigures], local: dict | None = None) -> Counter:
    """Gangs waiting to be placed (``waiting_q``) per queue, its subtree's included,
    counting only the gangs ``user`` may see (``gang_visible``: a submitter's own). ``local``:
    the LocalQueues, (namespace, name) -> ClusterQueue, when the caller read them."""
    if local is None:
        local = {
            (namespace, name): target
            for namespace, name, target in LocalQueue.objects.values_list(
                "namespace", "name", "cluster_queue__name"
            )
        }
    rows = (
        gang_visible(user=user)
        .filter(waiting_q())
        .order_by()
        .values_list("namespace", "queue")
        .annotate(n=Count("id"))
    )
    counts: Counter = Counter()
    for namespace, declared, n in rows:
        name = local.get((namespace, declared), declared)
        while name in figures:
            counts[name] += n
            name = figures[name].parent
    return counts


def queue_rows(user, figures: dict[str, QueueFigures] | None = None, local: dict | None = None) -> list[dict]:
    """Every queue ``user`` may read (``queue_figures_visible``, unless the caller read them, and
    the LocalQueues with them), parents before children, with its bars (see the module docstring)."""
    figures = queue_figures_visible(user) if figures is None else figures
    if not figures:
        return []
    samples = {sample.queue: sample for sample in latest_samples()}
    waiting = waiting_gangs(user, figures, local)
    rows = []
    for name, entry in figures.items():
        queue, sample = entry.queue, samples.get(name)
        borrowed = entry.borrowed
        bars = [
            resource_bar(
                resource,
                used=entry.used.get(resource, 0),
                guarantee=queue.guarantee.get(resource, 0),
                fair_share=sample.fair_share.get(resource, 0) if sample else None,
                max_=queue.max.get(resource),
                borrowed=borrowed.get(resource, 0),
                lent=sample.lent.get(resource, 0) if sample else None,
                pending=entry.pending.get(resource, 0),
            )
            for resource in _resources(entry, sample)
        ]
        rows.append(
            {
                "name": name,
                "path": entry.path,
                "parent": entry.parent,
                "depth": entry.depth,
                "indent": entry.depth * 1.5,
                "leaf": not entry.children,
                "open": queue.open,
                "cohort": queue.cohort,
                "weight": queue.weight,
                "weights": dict(queue.weights),
                "unlimited_guarantee": list(queue.unlimited_guarantee),
                "reclaimable": queue.reclaimable,
                "waiting_gangs": waiting.get(name, 0),
                "pending_pods": entry.pending_pods,
                "bars": bars,
                "sampled": sample.created.isoformat() if sample else None,
            }
        )
    return rows


def queue_chart(name: str | None, *, now: datetime) -> dict:
    """``name``'s usage, fair share and guarantee per resource over the last hour, one point per
    minute with a sample (the last cycle of the minute), oldest first."""
    if not name:
        return {"queue": None, "resources": [], "points": []}
    start = now.replace(second=0, microsecond=0) - timedelta(minutes=CHART_MINUTES - 1)
    rows = QueueSample.objects.filter(queue=name, minute__gte=start).order_by("minute")
    points, resources = [], set()
    for sample in rows.only("minute", "usage", "fair_share", "guarantee", "max"):
        resources |= {*sample.usage, *sample.fair_share, *sample.guarantee} - HIDDEN_RESOURCES
        points.append(
            {
                "t": sample.minute.isoformat(),
                "usage": sample.usage,
                "fair_share": sample.fair_share,
                "guarantee": sample.guarantee,
            }
        )
    return {"queue": name, "resources": sorted(resources), "points": points}
