"""Per-page reads, batched: every figure a page shows comes from a fixed number of queries,
whatever the number of rows (a page of gangs is one query for the gangs, one for their sibling
gangs in groups and one aggregate over their members, never one query per row)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Func, Max, Q, Value
from django.db.models.functions import TruncMinute
from django.utils import timezone

from dashboard.api.selectors import pods_counted
from scheduler_core.engine.quantity import format_quantity
from scheduler_core.heartbeats import heartbeats_read
from scheduler_core.models import Gang, GangEvent, Member, Node, SchedulingCycle
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES
from scheduler_core.selectors import gang_state
from scheduler_core.services.lease import lease_status

#: The resources the overview draws as bars, in this order (others are listed on the nodes page).
MAIN_RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
CHART_MINUTES = 60
NODE_GANGS_SHOWN = 8


def progress_for(gangs: list[Gang]) -> None:
    """Set ``progress`` (total, bound, reserved, min, percentages) on each gang, and
    ``group_progress`` (each gang of its group, listed-but-missing ones too) on grouped ones.
    Definitions as ``scheduler_core.selectors.gang_progress``, which does one gang at a time."""
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
    for gang in gangs:
        gang.group_progress = []
        if gang.group_id is None:
            continue
        in_group = [g.key for g in everyone if g.group_id == gang.group_id]
        for key in list(gang.group.members) + sorted(set(in_group) - set(gang.group.members)):
            other = by_key.get(key)
            gang.group_progress.append(
                {"key": key, "state": gang_state(other), "progress": other.progress}
                if other is not None
                else {"key": key, "state": "NotSubmitted", "progress": None}
            )


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
    }


def node_usage(*, submitter: str | None = None, all_gangs: bool = False) -> list[dict]:
    """Every node with what its bound active pods request (``used``), their number, and which
    gangs run there (every gang's with ``all_gangs``, else ``submitter``'s, else none): the
    first NODE_GANGS_SHOWN keys and a count.

    Pods are grouped by (node, requests) in PostgreSQL and summed here: a cluster has few
    request shapes, so a hundred thousand pods come back as a few thousand rows (the API's loop
    reads every bound pod, too slow for a page at that size)."""
    used: dict[str, Counter] = defaultdict(Counter)
    pods: Counter = Counter()
    bound = Member.objects.filter(node__isnull=False, phase__in=ACTIVE_MEMBER_PHASES).order_by()
    for node, requests, n in bound.values_list("node", "requests").annotate(n=Count("id")):
        pods[node] += n
        for resource, value in (requests or {}).items():
            used[node][resource] += n * int(value)
    shown: dict[str, list[str]] = defaultdict(list)
    counts: dict[str, int] = {}
    if all_gangs or submitter is not None:
        only = (
            "" if all_gangs else f"AND gang_id IN (SELECT id FROM {Gang._meta.db_table} WHERE submitter = %s)"
        )
        with connection.cursor() as cursor:
            # Per node: its first NODE_GANGS_SHOWN gangs and how many there are, in one scan.
            cursor.execute(
                f"SELECT node, (array_agg(DISTINCT gang_id ORDER BY gang_id))[1:%s], COUNT(DISTINCT gang_id) "
                f"FROM {Member._meta.db_table} "
                f"WHERE node IS NOT NULL AND gang_id IS NOT NULL AND phase = ANY(%s) {only} GROUP BY node",
                [NODE_GANGS_SHOWN, list(ACTIVE_MEMBER_PHASES), *([] if all_gangs else [submitter])],
            )
            rows = cursor.fetchall()
        named = Gang.objects.filter(pk__in={pk for _, ids, _ in rows for pk in ids})
        keys = {
            pk: f"{namespace}/{name}" for pk, namespace, name in named.values_list("pk", "namespace", "name")
        }
        for node, ids, n in rows:
            shown[node] = [keys[pk] for pk in ids if pk in keys]
            counts[node] = n
    rows = []
    for node in Node.objects.order_by("name"):
        # Other schedulers' pods take room too (Kubernetes backend): the bars show it.
        # A pod takes one of the node's ``pods`` too, counted as the API counts it.
        taken = dict(
            pods_counted(node, used.get(node.name, Counter()), pods.get(node.name, 0))
            + Counter(node.external_usage or {})
        )
        rows.append(
            {
                "node": node,
                "used": taken,
                "pods": pods.get(node.name, 0),
                "gangs": shown.get(node.name, []),
                "more_gangs": counts.get(node.name, 0) - len(shown.get(node.name, [])),
                "bars": resource_bars(node.allocatable, taken),
            }
        )
    return rows


def resource_bars(capacity: dict, used: dict, resources=None) -> list[dict]:
    """One bar per resource: used against capacity, with a percentage and readable amounts."""
    names = resources or sorted(set(capacity) | {r for r in used if r != "pods"})
    bars = []
    for resource in names:
        cap, use = int(capacity.get(resource, 0)), int(used.get(resource, 0))
        pct = min(100, round(100 * use / cap)) if cap else (100 if use else 0)
        bars.append(
            {"resource": resource, "capacity": cap, "used": use, "pct": pct,
             "label": f"{format_quantity(resource, use)} / {format_quantity(resource, cap)}"}
        )  # fmt: skip
    return bars


def bound_pods_by_minute(*, now: datetime) -> list[tuple]:
    """Bound pods as (active, minutes since start, minutes since finish, requests, count) rows,
    for the active ones and those that started or finished in the chart's hour: one scan of the
    members for both the cluster's use now and the chart (minutes are None outside the hour)."""
    start = now - timedelta(minutes=CHART_MINUTES)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT phase = ANY(%s), "
            "CASE WHEN started_at >= %s THEN floor(extract(epoch FROM %s - started_at) / 60)::int END, "
            "CASE WHEN finished_at >= %s THEN floor(extract(epoch FROM %s - finished_at) / 60)::int END, "
            f"requests, COUNT(*) FROM {Member._meta.db_table} "
            "WHERE node IS NOT NULL AND (phase = ANY(%s) OR started_at >= %s OR finished_at >= %s) "
            "GROUP BY 1, 2, 3, 4",
            [list(ACTIVE_MEMBER_PHASES), start, now, start, now, list(ACTIVE_MEMBER_PHASES), start, start],
        )
        # Django's PostgreSQL backend hands raw jsonb back as text.
        return [
            (a, s, f, json.loads(r) if isinstance(r, str) else r, n) for a, s, f, r, n in cursor.fetchall()
        ]


def cluster_totals(bound_rows: list[tuple]) -> tuple[Counter, Counter]:
    """Capacity of schedulable nodes (ready, not cordoned) and use by bound active pods on any
    node (plus other schedulers' pods on a real cluster), per resource, as the API's cluster
    summary counts them."""
    capacity, used = Counter(), Counter()
    for allocatable in Node.objects.filter(ready=True, unschedulable=False).values_list(
        "allocatable", flat=True
    ):
        capacity.update(allocatable)
    for external in Node.objects.exclude(external_usage={}).values_list("external_usage", flat=True):
        used.update(external)  # other schedulers' pods (Kubernetes backend)
    for active, _, _, requests, n in bound_rows:
        if active:
            used.update({resource: n * int(value) for resource, value in (requests or {}).items()})
    return capacity, used


def cluster_bars(capacity: Counter, used: Counter) -> list[dict]:
    return resource_bars(capacity, used, [r for r in MAIN_RESOURCES if r in capacity or r in used])


def chart_now(now: datetime | None = None) -> datetime:
    """The end of the chart's last minute (the next minute boundary)."""
    return (now or timezone.now()).replace(second=0, microsecond=0) + timedelta(minutes=1)


def gang_counts(gangs) -> dict[str, int]:
    return dict(gangs.order_by().values_list("phase").annotate(n=Count("id")).values_list("phase", "n"))


def recent_events(events, *, limit: int = 20) -> list[GangEvent]:
    return list(events[:limit])


#: A cycle's worker is its lease holder, ``host:pid`` plus ``:task-id`` when a Celery task ran it
#: (``scheduler_core.tasks``): the process is the part before the task id.
_WORKER_PROCESS = Func(F("worker"), Value(r"^([^:]*:[0-9]+):[^:]*$"), Value(r"\1"), function="regexp_replace")


def scheduler_health(*, now: datetime | None = None) -> dict:
    """The last cycle, the lease holder, each worker process's cycles in the past hour (one line
    per process, not per task) and when it ran the last, and the workers' heartbeats in Redis
    (``scheduler_core.heartbeats``) with their age in seconds."""
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
    }


def cluster_status() -> dict:
    """Which cluster is scheduled, and on Kubernetes whether a watcher of this deployment leads
    (cycles bind nothing until one does: the first thing to look at when gangs do not move)."""
    if settings.CLUSTER_BACKEND != "kubernetes":
        return {"backend": settings.CLUSTER_BACKEND, "ready": True, "leader": ""}
    from scheduler_core.cluster.kube import readiness

    leader = readiness.holder()
    return {"backend": "kubernetes", "ready": bool(leader), "leader": leader}


def chart_data(
    *, gangs, counts: dict[str, int], capacity: Counter, used: Counter, bound_rows: list[tuple], now: datetime
) -> dict:
    """The overview chart's last hour, one point per minute, oldest first.

    Nothing stores past utilisation, so it is rebuilt backwards from now (``counts``: ``gangs``
    by phase; ``capacity``, ``used``: ``cluster_totals``; ``bound_rows``: ``bound_pods_by_minute``
    at the same ``now``, a minute boundary, see ``chart_now``): a pod
    that started in a minute did not hold its requests before it, one that finished then did.
    Pending and running gangs are rebuilt the same way from the gang events of the hour. Both
    sums are grouped by minute in PostgreSQL, so the cost does not grow with the number of pods.
    Cycles per minute and their mean duration come straight from SchedulingCycle.
    """
    start = now - timedelta(minutes=CHART_MINUTES)
    started: dict[int, Counter] = defaultdict(Counter)
    finished: dict[int, Counter] = defaultdict(Counter)
    for _, started_ago, finished_ago, requests, n in bound_rows:
        amounts = {resource: n * int(value) for resource, value in (requests or {}).items()}
        if started_ago is not None:
            started[started_ago].update(amounts)
        if finished_ago is not None:
            finished[finished_ago].update(amounts)
    # now's bound pods; moving back a minute undoes what started in it and redoes what finished.
    current = Counter(used)
    pending = counts.get("Pending", 0) + counts.get("Scheduling", 0)
    running = counts.get("Running", 0)
    deltas = gang_event_deltas(gangs=gangs, since=start, now=now)
    cycles = {row["minutes_ago"]: row for row in _cycles_per_minute(start=start, now=now)}
    resources = [r for r in MAIN_RESOURCES if capacity.get(r)]
    points = []
    for minutes_ago in range(CHART_MINUTES):
        at = now - timedelta(minutes=minutes_ago + 1)
        points.append(
            {
                "t": at.isoformat(),
                "util": {r: round(100 * max(current[r], 0) / capacity[r], 1) for r in resources},
                "pending": max(pending, 0),
                "running": max(running, 0),
                "cycles": cycles.get(minutes_ago, {}).get("n", 0),
                "cycle_ms": round(1000 * (cycles.get(minutes_ago, {}).get("mean") or 0), 1),
            }
        )
        current.subtract(started.get(minutes_ago, Counter()))
        current.update(finished.get(minutes_ago, Counter()))
        d_pending, d_running = deltas.get(minutes_ago, (0, 0))
        pending -= d_pending
        running -= d_running
    points.reverse()
    return {"resources": resources, "points": points}


#: How each event kind moves a gang between pending and running (approximate: a kill or a
#: failure may come from either side; they are counted where they usually come from).
EVENT_DELTAS = {
    "created": (1, 0),
    "retried": (1, 0),
    "bound": (-1, 1),
    "timed_out": (-1, 0),
    "killed": (-1, 0),
    "finished": (0, -1),
    "failed": (0, -1),
    "restarted": (1, -1),
}


def gang_event_deltas(*, gangs, since: datetime, now: datetime) -> dict[int, tuple[int, int]]:
    """Per minute ago: how much the pending and running gang counts changed in that minute."""
    rows = (
        GangEvent.objects.filter(
            gang__in=gangs.order_by().values("pk"), created__gte=since, kind__in=EVENT_DELTAS
        )
        .annotate(minute=TruncMinute("created"))
        .order_by()
        .values_list("minute", "kind")
        .annotate(n=Count("id"))
    )
    deltas: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for minute, kind, n in rows:
        minutes_ago = int((now - minute).total_seconds() // 60) - 1
        d_pending, d_running = EVENT_DELTAS[kind]
        deltas[minutes_ago][0] += n * d_pending
        deltas[minutes_ago][1] += n * d_running
    return {k: (v[0], v[1]) for k, v in deltas.items()}


def _cycles_per_minute(*, start: datetime, now: datetime) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT floor(extract(epoch FROM %s - started_at) / 60)::int, COUNT(*), AVG(duration_s) "
            f"FROM {SchedulingCycle._meta.db_table} WHERE started_at >= %s GROUP BY 1",
            [now, start],
        )
        return [{"minutes_ago": m, "n": n, "mean": mean} for m, n, mean in cursor.fetchall()]
