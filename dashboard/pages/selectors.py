"""Per-page reads, batched: every figure a page shows comes from a fixed number of queries,
whatever the number of rows (a page of gangs is one query for the gangs, one for their sibling
gangs in groups and one aggregate over their members, never one query per row)."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Count, Max, Q
from django.db.models.functions import TruncMinute
from django.utils import timezone

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


def node_usage(*, gangs=None) -> list[dict]:
    """Every node with what its bound active pods request (``used``), their number, and which of
    ``gangs`` (a queryset: the gangs the user sees; None: none) run there, the first
    NODE_GANGS_SHOWN keys and a count. Sums are done by PostgreSQL
    over the JSON requests: the API's Python loop reads every bound pod, too slow at 100,000."""
    used: dict[str, Counter] = defaultdict(Counter)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.node, r.key, SUM(r.value::numeric)::bigint FROM {Member._meta.db_table} m "
            "CROSS JOIN LATERAL jsonb_each_text(m.requests) r "
            "WHERE m.node IS NOT NULL AND m.phase = ANY(%s) GROUP BY m.node, r.key",
            [list(ACTIVE_MEMBER_PHASES)],
        )
        for node, resource, amount in cursor.fetchall():
            used[node][resource] = int(amount)
    bound = Member.objects.filter(node__isnull=False, phase__in=ACTIVE_MEMBER_PHASES).order_by()
    pods = dict(bound.values_list("node").annotate(n=Count("id")).values_list("node", "n"))
    gang_ids: dict[str, list[int]] = defaultdict(list)
    if gangs is not None:
        on_nodes = bound.filter(gang__in=gangs.order_by().values("pk")).values_list("node", "gang_id")
        for node, gang_id in on_nodes.distinct():
            gang_ids[node].append(gang_id)
    shown = {gid for ids in gang_ids.values() for gid in sorted(ids)[:NODE_GANGS_SHOWN]}
    named = Gang.objects.filter(pk__in=shown).values_list("pk", "namespace", "name")
    keys = {pk: f"{namespace}/{name}" for pk, namespace, name in named}
    nodes = []
    for node in Node.objects.order_by("name"):
        ids = sorted(gang_ids.get(node.name, []))
        nodes.append(
            {
                "node": node,
                "used": dict(used.get(node.name, {})),
                "pods": pods.get(node.name, 0),
                "gangs": [keys[i] for i in ids[:NODE_GANGS_SHOWN] if i in keys],
                "more_gangs": max(0, len(ids) - NODE_GANGS_SHOWN),
                "bars": resource_bars(node.allocatable, used.get(node.name, {})),
            }
        )
    return nodes


def resource_bars(capacity: dict, used: dict, resources=None) -> list[dict]:
    """One bar per resource: used against capacity, with a percentage and readable amounts."""
    names = resources or sorted(set(capacity) | {r for r in used if r != "pods"})
    bars = []
    for resource in names:
        cap, use = int(capacity.get(resource, 0)), int(used.get(resource, 0))
        pct = min(100, round(100 * use / cap)) if cap else (100 if use else 0)
        bars.append(
            {"resource": resource, "capacity": cap, "used": use, "pct": pct,
             "label": f"{amount(resource, use)} / {amount(resource, cap)}"}
        )  # fmt: skip
    return bars


def amount(resource: str, value: int) -> str:
    """Canonical integers for people: milli-CPU as cores, bytes in Gi."""
    if resource == "cpu":
        return f"{value / 1000:g}"
    if resource in ("memory", "ephemeral-storage") or resource.endswith("memory"):
        return f"{value / 2**30:.1f}Gi"
    return str(value)


def cluster_totals(nodes: list[dict]) -> tuple[Counter, Counter]:
    """Capacity of schedulable nodes (ready, not cordoned) and use by bound active pods on any
    node, per resource, as the API's cluster summary counts them."""
    capacity, used = Counter(), Counter()
    for row in nodes:
        if row["node"].ready and not row["node"].unschedulable:
            capacity.update(row["node"].allocatable)
        used.update({k: v for k, v in row["used"].items() if k != "pods"})
    return capacity, used


def cluster_bars(capacity: Counter, used: Counter) -> list[dict]:
    return resource_bars(capacity, used, [r for r in MAIN_RESOURCES if r in capacity or r in used])


def gang_counts(gangs) -> dict[str, int]:
    return dict(gangs.order_by().values_list("phase").annotate(n=Count("id")).values_list("phase", "n"))


def recent_events(events, *, limit: int = 20) -> list[GangEvent]:
    return list(events[:limit])


def scheduler_health(*, now: datetime | None = None) -> dict:
    """The last cycle, the lease holder, and each worker's last cycle in the past hour (workers
    write no heartbeat rows: the cycles they ran are their sign of life)."""
    now = now or timezone.now()
    workers = (
        SchedulingCycle.objects.filter(started_at__gte=now - timedelta(hours=1))
        .exclude(worker="")
        .order_by()
        .values("worker")
        .annotate(last=Max("started_at"), cycles=Count("id"))
        .order_by("-last")
    )
    return {"last_cycle": SchedulingCycle.objects.first(), "lease": lease_status(), "workers": list(workers)}


def chart_data(
    *, gangs, counts: dict[str, int], capacity: Counter, used: Counter, now: datetime | None = None
) -> dict:
    """The overview chart's last hour, one point per minute, oldest first.

    Nothing stores past utilisation, so it is rebuilt backwards from now (``counts``: ``gangs``
    by phase; ``capacity`` and ``used``: ``cluster_totals``, which the page has already): a pod
    that started in a minute did not hold its requests before it, one that finished then did.
    Pending and running gangs are rebuilt the same way from the gang events of the hour. Both
    sums are grouped by minute in PostgreSQL, so the cost does not grow with the number of pods.
    Cycles per minute and their mean duration come straight from SchedulingCycle.
    """
    now = (now or timezone.now()).replace(second=0, microsecond=0) + timedelta(minutes=1)
    start = now - timedelta(minutes=CHART_MINUTES)
    table = Member._meta.db_table
    started: dict[int, Counter] = defaultdict(Counter)
    finished: dict[int, Counter] = defaultdict(Counter)
    with connection.cursor() as cursor:
        for column, into in (("started_at", started), ("finished_at", finished)):
            cursor.execute(
                f"SELECT floor(extract(epoch FROM %s - m.{column}) / 60)::int, r.key, "
                f"SUM(r.value::numeric)::bigint FROM {table} m "
                "CROSS JOIN LATERAL jsonb_each_text(m.requests) r "
                f"WHERE m.{column} >= %s AND m.node IS NOT NULL GROUP BY 1, 2",
                [now, start],
            )
            for minutes_ago, resource, total in cursor.fetchall():
                into[minutes_ago][resource] += int(total)
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
