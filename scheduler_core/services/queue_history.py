"""The queue history (``QueueSample``): written after each cycle, pruned by the periodic sweep.

Bounded in size: one row per queue per minute and none older than
``GANGSCHED_QUEUE_HISTORY_HOURS``. ``queue_samples_record`` is one ``INSERT ... ON CONFLICT
(queue, minute) DO UPDATE ... WHERE`` the figures differ: the first cycle of a minute inserts,
a later one with other figures replaces them (the last cycle of a minute wins), and one with the
same figures writes nothing, so with a cycle a second and nothing moving no row is touched.
``queue_samples_prune`` (the timeout sweep's beat) deletes the minutes past the window.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from scheduler_core.models import QueueSample, SchedulingCycle

#: The figures a sample keeps, as ``engine/ledger.py`` ``report`` names them.
FIGURES = ("usage", "guarantee", "fair_share", "max", "pending", "borrowed", "lent")
DEFAULT_HOURS = 24.0
_CHANGING = ("path", "open", *FIGURES)


def history_hours() -> float:
    return float(getattr(settings, "GANGSCHED_QUEUE_HISTORY_HOURS", DEFAULT_HOURS))


def _minute(at: datetime) -> datetime:
    return at.replace(second=0, microsecond=0)


def _sql(count: int) -> str:
    table = QueueSample._meta.db_table
    columns = ("cycle_id", "queue", "minute", "created", "path", "open", *FIGURES)
    row = "(" + ", ".join("%s::jsonb" if c in FIGURES else "%s" for c in columns) + ")"
    values = ", ".join([row] * count)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in ("cycle_id", "created", *_CHANGING))
    changed = ", ".join(f"{table}.{c}" for c in _CHANGING)
    excluded = ", ".join(f"EXCLUDED.{c}" for c in _CHANGING)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES {values} "
        f"ON CONFLICT (queue, minute) DO UPDATE SET {updates} "
        f"WHERE ({changed}) IS DISTINCT FROM ({excluded})"
    )


def queue_samples_record(
    queues: dict[str, dict], *, cycle: SchedulingCycle | None, at: datetime | None = None
) -> None:
    """Keep ``CycleResult.queues`` (per queue name, ``ledger.report``'s dict) as this minute's
    samples; one statement, whatever the number of queues."""
    if not queues:
        return
    at = at or timezone.now()
    minute = _minute(at)
    rows = [
        value
        for name, figures in sorted(queues.items())
        for value in (
            cycle.pk if cycle else None,
            name,
            minute,
            at,
            figures.get("path") or name,
            bool(figures.get("open", True)),
            *(json.dumps(figures.get(key) or {}, sort_keys=True) for key in FIGURES),
        )
    ]
    with connection.cursor() as cursor:
        cursor.execute(_sql(len(queues)), rows)


def queue_samples_prune(now: datetime | None = None) -> int:
    """Delete the samples older than the history window; returns how many."""
    cutoff = (now or timezone.now()) - timedelta(hours=history_hours())
    deleted, _ = QueueSample.objects.filter(minute__lt=cutoff).delete()
    return deleted
