"""Per-page reads, batched: every figure a page shows comes from a fixed number of queries,
whatever the number of rows (a page of gangs is one query for the gangs, one for their sibling
gangs in groups and one aggregate over their members, never one query per row)."""

from __future__ import annotations

import signal
from collections import Counter, defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Func, Max, Q, Value
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import escape
from django.utils.safestring import mark_safe

from dashboard.api.selectors import pods_counted
from dashboard.health import supervisor_restarts
from scheduler_core.engine.quantity import display_quantity, format_quantity
from scheduler_core.models import Gang, GangEvent, GangEventKind, Member, Node, SchedulingCycle
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES
from scheduler_core.reads.node_usage import usage_by_node, usage_total
from scheduler_core.reads.redaction import Viewer
from scheduler_core.reads.selectors import gang_state
from scheduler_core.services.lease import lease_status
from scheduler_core.worker.heartbeats import heartbeats_read

#: The resources the overview draws as bars, in this order (others are listed on the nodes page).
MAIN_RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
NODE_GANGS_SHOWN = 8


def progress_for(gangs: list[Gang], *, viewer: Viewer) -> None:
    """Set ``progress`` (total, bound, reserved, min, percentages) on each gang, and
    ``group_progress`` (each gang of its group, listed-but-missing ones too) and ``group_key``
    on grouped ones, as ``viewer`` may read them: a submitter is shown the group's gangs that are
    theirs (``scheduler_core/reads/redaction.py``). Definitions as
    ``scheduler_core.reads.selectors.gang_progress``, which does one gang at a time."""
    group_ids = {g.group_id for g in gangs if g.group_id}
    siblings = list(Gang.objects.filter(group_id__in=group_ids).exclude(pk__in=[g.pk for g in gangs]))
    everyone = [*gangs, *siblings] if group_ids else list(gangs)
    counts = {
        row["gang_id"]: row
        for row in Member.objects.filter(gang_id__in=[g.pk for g in everyone])
        .order_by()
        .values("gang_id")
        .annotate(
            total=Count("id"),
            bound=Count("id", filter=Q(node__isnull=False)),
            reserved=Count("id", filter=Q(reserved_node__isnull=False, phase__in=ACTIVE_MEMBER_PHASES)),
        )
    }
    for gang in everyone:
        row = counts.get(gang.pk, {})
        gang.progress = progress_bar(
            bound=row.get("bound", 0), reserved=row.get("reserved", 0), minimum=gang.min_member,
            total=row.get("total", 0),
        )  # fmt: skip
    by_key = {g.key: g for g in everyone}
    viewer.learn(*(g.group.key for g in gangs if g.group_id))
    for gang in gangs:
        gang.group_progress = []
        gang.group_key = None
        if gang.group_id is None:
            continue
        gang.group_key = viewer.group_key(gang.group.key)
        in_group = [g.key for g in everyone if g.group_id == gang.group_id]
        listed = list(gang.group.members) + sorted(set(in_group) - set(gang.group.members))
        for key in [key for key in listed if viewer.shown(key)]:
            other = by_key.get(key)
            gang.group_progress.append(
                {"key": key, "state": gang_state(other), "progress": other.progress}
                if other is not None
                else {"key": key, "state": "NotSubmitted", "progress": None}
            )


def timed_out_times(gangs: list[Gang]) -> None:
    """Set ``timed_out_at`` (its latest ``timed_out`` event) and ``waited`` (seconds from the
    start of its clock, ``wait_started``, which a timeout keeps, to then) on each timed-out gang:
    one query for the page's gangs (the events' gang index)."""
    latest = dict(
        GangEvent.objects.filter(gang_id__in=[g.pk for g in gangs], kind=GangEventKind.TIMED_OUT)
        .order_by()
        .values("gang_id")
        .annotate(at=Max("created"))
        .values_list("gang_id", "at")
    )
    for gang in gangs:
        gang.timed_out_at = latest.get(gang.pk)
        started = gang.wait_started
        gang.waited = (gang.timed_out_at - started).total_seconds() if gang.timed_out_at and started else None


def progress_bar(*, bound: int, reserved: int, minimum: int, total: int) -> dict:
    """The bar's figures: bound and reserved members against minMember (the bar is full at quorum)."""
    scale = max(minimum, 1)
    return {
        "bound": bound,
        "reserved": reserved,
        "min": minimum,
        "total": total,
        "bound_pct": min(100, round(100 * bound / scale)),
        "reserved_pct": min(100 - min(100, round(100 * bound / scale)), round(100 * reserved / scale)),
        "label": progress_label(bound=bound, reserved=reserved, minimum=minimum, total=total),
    }


def progress_label(*, bound: int, reserved: int, minimum: int, total: int) -> str:
    """``3/4 +1r``: bound of the minMember it needs, and reserved. A gang with more members than
    its minimum counts against all of them and names the minimum (``6/8 (min 4)``), so that a
    gang running beyond its quorum never reads ``6/4`` (static/js/live.js writes the same)."""
    label = f"{bound}/{total} (min {minimum})" if total > minimum else f"{bound}/{minimum}"
    return label + (f" +{reserved}r" if reserved else "")


def node_rows(nodes: list[Node], *, submitter: str | None = None, all_gangs: bool = False) -> list[dict]:
    """The page's nodes with what their bound active pods request (``used``; ``with_bars`` draws
    it), their number, and which gangs run there (every gang's with ``all_gangs``, else
    ``submitter``'s, else none): the first NODE_GANGS_SHOWN keys and a count.

    Two queries, both for these nodes only: the usage the database keeps per node
    (``scheduler_core.reads.node_usage``, no scan of the members) and the gangs of their pods (an
    index scan of those nodes' members)."""
    names = [node.name for node in nodes]
    usage = usage_by_node(names)
    shown: dict[str, list[str]] = defaultdict(list)
    counts: dict[str, int] = {}
    if names and (all_gangs or submitter is not None):
        only = (
            "" if all_gangs else f"AND gang_id IN (SELECT id FROM {Gang._meta.db_table} WHERE submitter = %s)"
        )
        with connection.cursor() as cursor:
            # Per node: its first NODE_GANGS_SHOWN gangs and how many there are, with their keys.
            cursor.execute(
                f"SELECT m.node, m.ids[1:%s], m.n, "
                f"ARRAY(SELECT g.namespace || '/' || g.name FROM {Gang._meta.db_table} g "
                f"JOIN unnest(m.ids[1:%s]) WITH ORDINALITY AS k(id, i) ON g.id = k.id ORDER BY k.i) "
                f"FROM (SELECT node, array_agg(DISTINCT gang_id ORDER BY gang_id) AS ids, "
                f"COUNT(DISTINCT gang_id) AS n FROM {Member._meta.db_table} "
                f"WHERE node = ANY(%s) AND gang_id IS NOT NULL AND phase = ANY(%s) {only} GROUP BY node) m",
                [NODE_GANGS_SHOWN, NODE_GANGS_SHOWN, names, list(ACTIVE_MEMBER_PHASES),
                 *([] if all_gangs else [submitter])],
            )  # fmt: skip
            for node, _, n, keys in cursor.fetchall():
                shown[node], counts[node] = keys, n
    rows = []
    for node in nodes:
        used = usage.get(node.name, Counter())
        pods = used.pop("pods", 0)
        # Other schedulers' pods take room too (Kubernetes backend): the bars show it.
        # A pod takes one of the node's ``pods`` too, counted as the API counts it.
        taken = dict(pods_counted(node, used, pods) + Counter(node.external_usage or {}))
        rows.append(
            {
                "node": node,
                "used": taken,
                "pods": pods,
                "gangs": shown.get(node.name, []),
                "more_gangs": counts.get(node.name, 0) - len(shown.get(node.name, [])),
            }
        )
    return rows


def with_bars(rows: list[dict]) -> list[dict]:
    """Set ``bars`` on the rows a page shows, and ``bars_html``, their markup (the same as
    ``dashboard/_bar.html``'s, built here: 350 template includes were a third of the Nodes
    page): drawing them for every node of a 5,000-node cluster cost more than the heat map of
    all its domains, for 100 rows shown."""
    for row in rows:
        row["bars"] = resource_bars(row["node"].allocatable, row["used"])
        row["bars_html"] = mark_safe("".join(map(bar_html, row["bars"])))  # noqa: S308 (escaped)
    return rows


def bar_html(bar: dict) -> str:
    resource, label, pct = escape(bar["resource"]), escape(bar["label"]), bar["pct"]
    exact = escape(bar["exact_label"])
    return (
        f'<div class="bar" data-resource="{resource}" data-capacity="{bar["capacity"]}" '
        f'data-used="{bar["used"]}" title="{resource}: {exact}"><span class="bar-fill'
        f'{" hot" if pct >= 90 else ""}" style="width: {pct}%"></span>'
        f'<span class="bar-label">{resource} {label} ({pct}%)</span></div>'
    )


def resource_bars(capacity: dict, used: dict, resources=None) -> list[dict]:
    """One bar per resource: used against capacity, with a percentage and readable amounts."""
    names = resources or sorted(set(capacity) | {r for r in used if r != "pods"})
    bars = []
    for resource in names:
        cap, use = int(capacity.get(resource, 0)), int(used.get(resource, 0))
        pct = min(100, round(100 * use / cap)) if cap else (100 if use else 0)
        bars.append(
            {"resource": resource, "capacity": cap, "used": use, "pct": pct,
             "label": f"{display_quantity(resource, use)} / {display_quantity(resource, cap)}",
             "exact_label": f"{format_quantity(resource, use)} / {format_quantity(resource, cap)}"}
        )  # fmt: skip
    return bars


_MAP = "CASE WHEN jsonb_typeof(n.{0}) = 'object' THEN n.{0} ELSE '{{}}'::jsonb END"
#: Per resource: what schedulable nodes offer (``external`` false), and what other schedulers'
#: pods take on any node (true: the Kubernetes backend's ``external_usage``).
_NODE_TOTALS = f"""
    SELECT r.key, SUM((r.value)::numeric) FILTER (WHERE n.ready AND NOT n.unschedulable), false
      FROM {Node._meta.db_table} n CROSS JOIN LATERAL jsonb_each({_MAP.format("allocatable")}) r
     WHERE jsonb_typeof(r.value) = 'number' GROUP BY r.key
    UNION ALL
    SELECT r.key, SUM((r.value)::numeric), true
      FROM {Node._meta.db_table} n CROSS JOIN LATERAL jsonb_each({_MAP.format("external_usage")}) r
     WHERE n.external_usage <> '{{}}'::jsonb AND jsonb_typeof(r.value) = 'number' GROUP BY r.key
"""


def cluster_totals() -> tuple[Counter, Counter]:
    """Capacity of schedulable nodes (ready, not cordoned) and use by bound active pods on any
    node (plus other schedulers' pods on a real cluster), per resource, as the API's cluster
    summary counts them. Use is the stored per-node usage: one aggregate over its rows, however
    many pods are bound."""
    capacity, used = Counter(), Counter()
    # Summed in PostgreSQL: 20,000 nodes' JSON maps read into Python took a third of the page.
    with connection.cursor() as cursor:
        cursor.execute(_NODE_TOTALS)
        for resource, amount, external in cursor.fetchall():
            if amount is not None:
                (used if external else capacity)[resource] += int(amount)
    used.update(usage_total())
    used.pop("pods", None)
    return capacity, used


def cluster_bars(capacity: Counter, used: Counter) -> list[dict]:
    return resource_bars(capacity, used, [r for r in MAIN_RESOURCES if r in capacity or r in used])


def gang_counts(gangs) -> dict[str, int]:
    return dict(gangs.order_by().values_list("phase").annotate(n=Count("id")).values_list("phase", "n"))


def recent_events(events, *, limit: int = 20) -> list[GangEvent]:
    return list(events[:limit])


#: A cycle's worker is its lease holder, ``host:pid`` plus ``:task-id`` when a Celery task ran it
#: (``scheduler_core.tasks``): the process is the part before the task id.
_WORKER_PROCESS = Func(F("worker"), Value(r"^([^:]*:[0-9]+):[^:]*$"), Value(r"\1"), function="regexp_replace")


def scheduler_health(*, now: datetime | None = None) -> dict:
    """The last cycle, the lease holder, each worker process's cycles in the past hour (one line
    per process, not per task) and when it ran the last, the workers' heartbeats in Redis
    (``scheduler_core.worker.heartbeats``) with their age in seconds, and the processes ``make run``
    had to restart (``restarted_processes``)."""
    now = now or timezone.now()
    workers = (
        SchedulingCycle.objects.filter(started_at__gte=now - timedelta(hours=1))
        .exclude(worker="")
        .order_by()
        .annotate(process=_WORKER_PROCESS)
        .values("process")
        .annotate(last=Max("started_at"), cycles=Count("id"))
        .order_by("-last")
    )
    heartbeats = [
        {"worker": hostname, "last_seen": seen, "age_s": max(0, round((now - seen).total_seconds()))}
        for hostname, seen in heartbeats_read()
    ]
    return {
        "last_cycle": SchedulingCycle.objects.first(),
        "lease": lease_status(),
        "workers": list(workers),
        "heartbeats": heartbeats,
        "cluster": cluster_status(),
        "restarts": restarted_processes(),
    }


def restarted_processes() -> list[dict]:
    """The processes ``make run``'s supervisor restarted (dashboard/health.py), with their last
    exit status as text (``-9 (SIGKILL)``) and last restart time; empty when none was, or the
    server was not started by ``make run``."""
    rows = []
    for name, child in sorted((supervisor_restarts() or {}).items()):
        if not isinstance(child.get("restarts"), int) or child["restarts"] < 1:
            continue
        status = child.get("last_exit_status")
        if isinstance(status, int) and status < 0 and -status in signal.valid_signals():
            status = f"{status} ({signal.Signals(-status).name})"
        restarted = child.get("last_restart_at")
        rows.append(
            {
                "process": name,
                "restarts": child["restarts"],
                "last_exit_status": status,
                "last_restart_at": parse_datetime(restarted) if isinstance(restarted, str) else None,
            }
        )
    return rows


def cluster_status() -> dict:
    """Which cluster is scheduled, and on Kubernetes whether a watcher of this deployment leads
    (cycles bind nothing until one does: the first thing to look at when gangs do not move)."""
    if settings.CLUSTER_BACKEND != "kubernetes":
        return {"backend": settings.CLUSTER_BACKEND, "ready": True, "leader": ""}
    from scheduler_core.cluster.kube import readiness

    leader = readiness.holder()
    return {"backend": "kubernetes", "ready": bool(leader), "leader": leader}
