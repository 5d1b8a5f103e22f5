"""The overview's last hour, one point per minute: utilisation, pending and running gangs,
pending demand, cycles. Every series comes from a fixed number of queries grouped by minute in
PostgreSQL, so the cost does not grow with the number of pods, gangs or cycles."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from scheduler_core.models import SchedulingCycle
from scheduler_core.reads.node_usage import usage_changes
from scheduler_core.reads.tallies import event_counts

from .selectors import MAIN_RESOURCES

CHART_MINUTES = 60


def chart_now(now: datetime | None = None) -> datetime:
    """The end of the chart's last minute (the next minute boundary)."""
    return (now or timezone.now()).replace(second=0, microsecond=0) + timedelta(minutes=1)


def usage_changes_by_minute(*, now: datetime) -> dict[int, Counter]:
    """How the cluster's usage changed in each minute of the chart's hour, by minutes before
    ``now`` (a minute boundary): the stored per-minute changes (``scheduler_core.reads.node_usage``),
    a few rows per minute however many pods were bound or finished."""
    changes: dict[int, Counter] = defaultdict(Counter)
    for minute, resource, amount in usage_changes(since=now - timedelta(minutes=CHART_MINUTES), until=now):
        changes[int((now - minute).total_seconds() // 60) - 1][resource] += amount
    return changes


def chart_data(
    *,
    submitter: str | None,
    counts: dict[str, int],
    capacity: Counter,
    used: Counter,
    changes: dict[int, Counter],
    now: datetime,
) -> dict:
    """The overview charts' last hour, one point per minute, oldest first.

    Utilisation is rebuilt backwards from now (``counts``: the gangs shown by phase, those of
    ``submitter`` or every gang's when None; ``capacity``,
    ``used``: ``selectors.cluster_totals``; ``changes``: ``usage_changes_by_minute`` at the same
    ``now``, a minute boundary, see ``chart_now``): what was bound in a minute was not held
    before it, what finished or was evicted then was.
    Pending and running gangs are rebuilt the same way from the gang events of the hour.
    Cycles per minute, their mean duration and the pending demand come straight from
    SchedulingCycle: a minute's demand is what its last cycle left pending (``demand``: percent
    of today's capacity, ``demand_amounts``: canonical amounts), a minute without a cycle keeps
    the previous one's, and the hour starts from the last cycle before it.
    """
    start = now - timedelta(minutes=CHART_MINUTES)
    # now's bound pods; moving back a minute undoes what changed in it.
    current = Counter(used)
    pending = counts.get("Pending", 0) + counts.get("Scheduling", 0)
    running = counts.get("Running", 0)
    deltas = gang_event_deltas(submitter=submitter, since=start, now=now)
    cycles = {row["minutes_ago"]: row for row in _cycles_per_minute(start=start, now=now)}
    resources = [r for r in MAIN_RESOURCES if capacity.get(r)]
    demand = _demand_by_minute(cycles)
    points = []
    for minutes_ago in range(CHART_MINUTES):
        at = now - timedelta(minutes=minutes_ago + 1)
        left = demand[minutes_ago]
        points.append(
            {
                "t": at.isoformat(),
                "util": {r: round(100 * max(current[r], 0) / capacity[r], 1) for r in resources},
                "pending": max(pending, 0),
                "running": max(running, 0),
                "demand": {r: round(100 * int(left.get(r, 0)) / capacity[r], 1) for r in resources},
                "demand_amounts": {r: int(left.get(r, 0)) for r in resources},
                "cycles": cycles.get(minutes_ago, {}).get("n", 0),
                "cycle_ms": round(1000 * (cycles.get(minutes_ago, {}).get("mean") or 0), 1),
            }
        )
        current.subtract(changes.get(minutes_ago, Counter()))
        d_pending, d_running = deltas.get(minutes_ago, (0, 0))
        pending -= d_pending
        running -= d_running
    points.reverse()
    return {"resources": resources, "points": points}


def _demand_by_minute(cycles: dict[int, dict]) -> list[dict]:
    """Per minute ago (0 = the last minute): its last cycle's pending demand, carried forward
    over minutes without a cycle, from the last cycle before the hour (``CHART_MINUTES``)."""
    demand = [{} for _ in range(CHART_MINUTES)]
    carried = cycles.get(CHART_MINUTES, {}).get("demand") or {}
    for minutes_ago in range(CHART_MINUTES - 1, -1, -1):
        if minutes_ago in cycles:
            carried = cycles[minutes_ago]["demand"] or {}
        demand[minutes_ago] = carried
    return demand


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


def gang_event_deltas(*, submitter: str | None, since: datetime, now: datetime) -> dict[int, tuple[int, int]]:
    """Per minute ago: how much the pending and running gang counts changed in that minute, from
    the events of the gangs of ``submitter`` (None: every gang). Read from the per-minute counts
    the database keeps (``scheduler_core.reads.tallies``): a few rows per minute, not every event."""
    deltas: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for minute, kind, n in event_counts(since=since, kinds=EVENT_DELTAS, submitter=submitter):
        minutes_ago = int((now - minute).total_seconds() // 60) - 1
        d_pending, d_running = EVENT_DELTAS[kind]
        deltas[minutes_ago][0] += n * d_pending
        deltas[minutes_ago][1] += n * d_running
    return {k: (v[0], v[1]) for k, v in deltas.items()}


def _cycles_per_minute(*, start: datetime, now: datetime) -> list[dict]:
    """Per minute ago: the cycles, their mean duration and the last one's pending demand; the
    last cycle before the hour comes back as minute ``CHART_MINUTES`` (one query: the lookup
    of that cycle walks the started_at index backwards from ``start``)."""
    table = SchedulingCycle._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT CASE WHEN started_at >= %s THEN floor(extract(epoch FROM %s - started_at) / 60)::int "
            "ELSE %s END, COUNT(*), AVG(duration_s), "
            "(array_agg(pending_demand ORDER BY started_at DESC, id DESC))[1] "
            f"FROM {table} WHERE started_at >= %s OR id = ("
            f"SELECT id FROM {table} WHERE started_at < %s ORDER BY started_at DESC, id DESC LIMIT 1"
            ") GROUP BY 1",
            [start, now, CHART_MINUTES, start, start],
        )
        return [
            {"minutes_ago": m, "n": n, "mean": mean, "demand": _json(demand)}
            for m, n, mean, demand in cursor.fetchall()
        ]


def _json(value):
    """Django's PostgreSQL backend hands raw jsonb back as text."""
    return json.loads(value) if isinstance(value, str) else value
