"""``get queues`` and ``describe queue``: the queue tree as kubectl would print it.

Amounts are written as Kubernetes writes them (``format_quantity``): ``cpu=8,nvidia.com/gpu=4``;
an empty max is ``<unlimited>``. The figures (used, pending, borrowed) are the API's
(``scheduler_core/reads/queue_figures.py``). Queues are cluster-scoped: ``-n`` is ignored.
"""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db.models import Q

from scheduler_core.engine.quantity import (
    QuantityError,
    canonical_amount,
    display_quantity,
    format_quantity,
    is_display_exact,
)
from scheduler_core.reads.queue_figures import QueueFigures, queue_figures


def amounts(resources: dict[str, int], empty: str = "<none>") -> str:
    if not resources:
        return empty
    return ",".join(
        f"{name}={format_quantity(name, int(amount))}" for name, amount in sorted(resources.items())
    )


def queue_row(figures: QueueFigures) -> dict:
    queue = figures.queue
    return {
        "name": queue.name,
        "parent": figures.parent,
        "path": figures.path,
        "guarantee": amounts(queue.guarantee),
        "max": amounts(queue.max, "<unlimited>"),
        "lending_limit": amounts(queue.lending_limit, "<all>"),
        "used": amounts(figures.used),
        "pending": amounts(figures.pending),
        "pending_pods": figures.pending_pods,
        "stalled": amounts(figures.stalled),
        "stalled_pods": figures.stalled_pods,
        "borrowed": amounts(figures.borrowed),
        "weight": queue.weight,
        "reclaimable": queue.reclaimable,
        "cohort": queue.cohort,
        "state": figures.state,
        "source_format": queue.source_format,
    }


def queues(namespace: str | None = None, application: str | None = None) -> list[dict]:
    """Every queue, parents before their children (``-n`` is ignored: queues have none)."""
    if application:
        raise CommandError("--application selects gangs and pods; queues belong to no application")
    return [queue_row(figures) for figures in queue_figures().values()]


COLUMNS = ["name", "parent", "guarantee", "max", "used", "pending", "state"]
WIDE = ["weight", "borrowed", "lending_limit", "reclaimable", "cohort", "source_format"]


class QueueNotFound(LookupError):
    pass


def queue_get(name: str) -> QueueFigures:
    figures = queue_figures().get(name)
    if figures is None:
        raise QueueNotFound(name)
    return figures


def queue_detail(figures: QueueFigures) -> dict:
    from scheduler_core.models import Gang, QueueAccess

    detail = queue_row(figures)
    detail["children"] = figures.children
    access = QueueAccess.objects.filter(queue=figures.queue).select_related("user", "group")
    detail["access"] = [f"user {a.user.username}" if a.user_id else f"group {a.group.name}" for a in access]
    local = list(figures.queue.local_queues.values_list("namespace", "name"))
    detail["local_queues"] = [f"{namespace}/{name}" for namespace, name in local]
    naming = Q(queue=figures.queue.name)
    for namespace, name in local:  # a LocalQueue's name counts in its own namespace only
        naming |= Q(namespace=namespace, queue=name)
    gangs = Gang.objects.filter(naming).exclude(phase__in=["Finished", "Failed", "Killed"])
    detail["gangs"] = [f"{g.namespace}/{g.name} {g.phase}" for g in gangs.order_by("created", "id")[:50]]
    return detail


def _shown(amounts_text: str) -> str:
    """``cpu=16500m,memory=250000Mi`` as the pages display it, the exact form after a rounded
    one: ``cpu=16.5,memory=244Gi (250000Mi)``; ``<none>`` and the like as they are."""
    if amounts_text.startswith("<"):
        return amounts_text
    parts = []
    for name, _, text in (part.partition("=") for part in amounts_text.split(",")):
        try:
            amount = canonical_amount(name, text)
        except QuantityError:
            parts.append(f"{name}={text}")
            continue
        shown = display_quantity(name, amount)
        parts.append(f"{name}={shown}" if is_display_exact(name, amount) else f"{name}={shown} ({text})")
    return ",".join(parts)


def queue_text(d: dict) -> str:
    lines = [
        f"Name:           {d['name']}",
        f"Path:           {d['path']}   Parent: {d['parent'] or '<none>'}",
        f"State:          {d['state']}"
        + ("   (cohort: groups queues, takes no work)" if d["cohort"] else ""),
        f"Guarantee:      {_shown(d['guarantee'])}",
        f"Max:            {_shown(d['max'])}",
        f"Lending limit:  {_shown(d['lending_limit'])}",
        f"Weight:         {d['weight']:g}   Reclaimable: {'yes' if d['reclaimable'] else 'no'}",
        f"Used:           {_shown(d['used'])}",
        f"Borrowed:       {_shown(d['borrowed'])}",
        f"Pending:        {_shown(d['pending'])} ({d['pending_pods']} pods)",
        f"Stalled:        {_shown(d['stalled'])} ({d['stalled_pods']} pods of timed-out or failed gangs)",
        f"Source:         {d['source_format'] or '<none>'}",
        f"Children:       {', '.join(d['children']) or '<none>'}",
        f"LocalQueues:    {', '.join(d['local_queues']) or '<none>'}",
        f"Who may submit: {', '.join(d['access']) or 'everyone'}",
        "Gangs:",
    ]
    lines.extend(f"  {gang}" for gang in d["gangs"] or ["<none>"])
    return "\n".join(lines)
