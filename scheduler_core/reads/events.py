"""The scheduling history as the History page and ``GET /api/v1/events/`` read it: who did each
event, the filters by gang, queue and actor, and keyset pages newest first.

Who did an event (its *actor*): the user a retry, kill, change or deletion names
(``details.by``: a username, ``cli`` for the server-side commands, ``Kubernetes`` for what the
cluster deleted); for ``created``, the gang's submitter (``cli`` when it has none); for every other
event, ``scheduler``: gangsched itself (its cycles, sweeps and the cluster's reports it records).
"""

from __future__ import annotations

import datetime as dt

from django.db.models import Q, QuerySet

from scheduler_core.models import GangEvent, GangEventKind

#: The actor of what gangsched did by itself.
SCHEDULER = "scheduler"
#: The actor of a gang created without a submitter (the server-side commands).
CLI = "cli"
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MICROSECOND = dt.timedelta(microseconds=1)


def actor_of(event: GangEvent) -> str:
    """Who did ``event`` (see the module's docstring); its gang must be loaded."""
    by = (event.details or {}).get("by") if isinstance(event.details, dict) else None
    if by:
        return str(by)
    if event.kind == GangEventKind.CREATED:
        return event.gang.submitter or CLI
    return SCHEDULER


#: What a history row shows: the event and, of its gang, the key, queue and submitter (not its
#: stored manifest, which can be large).
ROW_COLUMNS = (
    "id", "gang_id", "kind", "reason", "details", "cycle_id", "created",
    "gang__namespace", "gang__name", "gang__queue", "gang__submitter",
)  # fmt: skip


def history_rows(events: QuerySet[GangEvent]) -> QuerySet[GangEvent]:
    """``events`` with their gangs, loading only what a history row shows."""
    return events.select_related("gang").only(*ROW_COLUMNS)


def by_actor(events: QuerySet[GangEvent], actor: str) -> QuerySet[GangEvent]:
    """The events ``actor`` did, as ``actor_of`` names it."""
    unnamed = ~Q(details__has_key="by")
    if actor == SCHEDULER:
        return events.filter(unnamed).exclude(kind=GangEventKind.CREATED)
    submitter = "" if actor == CLI else actor
    created = Q(kind=GangEventKind.CREATED, gang__submitter=submitter) & unnamed
    return events.filter(Q(details__by=actor) | created)


def by_gang(events: QuerySet[GangEvent], gang: str) -> QuerySet[GangEvent]:
    """``namespace/name``: that gang's events; a bare name: those of every gang of that name."""
    namespace, slash, name = gang.partition("/")
    if not slash:
        return events.filter(gang__name=gang)
    return events.filter(gang__namespace=namespace, gang__name=name)


def cursor_of(event: GangEvent) -> str:
    """Where ``event`` is in the (created, id) order, as a query-string value: ``<µs>-<id>``."""
    return f"{(event.created - EPOCH) // MICROSECOND}-{event.pk}"


def cursor_parse(text: str) -> tuple[dt.datetime, int]:
    """``cursor_of``'s value back; ValueError when it is not one."""
    micros, dash, pk = text.partition("-")
    if not (dash and micros.isdigit() and pk.isdigit()):
        raise ValueError("not a page position")
    try:
        return EPOCH + int(micros) * MICROSECOND, int(pk)
    except OverflowError as error:
        raise ValueError("not a page position") from error


def page_older(events: QuerySet[GangEvent], before: tuple[dt.datetime, int] | None, size: int) -> tuple:
    """Up to ``size`` events older than ``before`` (the newest without it), newest first, and
    whether there are more. One backward range scan of the ``created`` index from ``before``."""
    if before is not None:
        created, pk = before
        events = events.filter(created__lte=created).exclude(created=created, pk__gte=pk)
    rows = list(events.order_by("-created", "-id")[: size + 1])
    return rows[:size], len(rows) > size


def page_newer(events: QuerySet[GangEvent], after: tuple[dt.datetime, int], size: int) -> tuple:
    """Up to ``size`` events just newer than ``after``, newest first, and whether there are
    more newer still."""
    created, pk = after
    events = events.filter(created__gte=created).exclude(created=created, pk__lte=pk)
    rows = list(events.order_by("created", "id")[: size + 1])
    return list(reversed(rows[:size])), len(rows) > size
