"""The one place gang history rows are written.

A GangEvent is also the live-update outbox (see its model docstring), so it must be inserted in
the same transaction as the change it describes: callers call these inside their own atomic block.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from scheduler_core.models import Gang, GangEvent, GangEventKind, SchedulingCycle


def event_record(
    *,
    gang: Gang,
    kind: GangEventKind | str,
    reason: str = "",
    details: Mapping[str, Any] | None = None,
    cycle: SchedulingCycle | None = None,
) -> GangEvent:
    return GangEvent.objects.create(
        gang=gang, kind=GangEventKind(kind), reason=reason, details=dict(details or {}), cycle=cycle
    )


def events_record_many(rows: Iterable[Mapping[str, Any]]) -> list[GangEvent]:
    """Insert many events in one query; each row holds ``event_record``'s keyword arguments
    (``gang`` may be given as ``gang_id``, which saves loading gangs just to log them)."""
    events = [
        GangEvent(
            gang_id=row["gang"].pk if row.get("gang") is not None else row["gang_id"],
            kind=GangEventKind(row["kind"]),
            reason=row.get("reason", ""),
            details=dict(row.get("details") or {}),
            cycle=row.get("cycle"),
        )
        for row in rows
    ]
    return GangEvent.objects.bulk_create(events) if events else []
