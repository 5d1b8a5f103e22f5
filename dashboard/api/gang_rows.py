"""The unfiltered gang list's page in one hand-written query, for DRF's cursor pagination.

Each submission costs a gang list more than once: its writer's list is computed again before
the submission is answered, and again when the scheduler binds the gang and when it finishes
(dashboard/api/read_cache.py). For that one query the ORM's compiler took longer than
PostgreSQL: a third of the list's time went on writing the same SQL again and building model
instances. ``GangRows`` stands in for the queryset when the list has no filter: it takes what
``CursorPagination.paginate_queryset`` does to a queryset (``order_by`` of the pagination's
ordering or its reverse, ``filter`` by the cursor's position, one slice) and answers the slice
with one statement written once per shape, as light rows with the attributes GangRowOutput and
the pagination read (the gang's group key and its forecast joined in). A filtered list keeps
the ORM (django-filter builds on a real queryset); tests/api/test_gang_rows.py walks pages both
ways and compares.
"""

from __future__ import annotations

import functools

from django.db import connection

from scheduler_core.models import Gang, GangForecast, GangGroup
from scheduler_core.reads.forecasts import FORECAST_COLUMNS

from .serializers import GANG_OUTPUT_COLUMNS

#: The rows' attributes: the list's columns (the group's key apart) and the primary key.
COLUMNS = ("id", *(column for column in GANG_OUTPUT_COLUMNS if "__" not in column))
NEWEST_FIRST = ("-created", "-id")
OLDEST_FIRST = ("created", "id")


class GroupKey:
    __slots__ = ("key",)

    def __init__(self, key: str):
        self.key = key


class GangRow:
    """A gang of the list: its ``COLUMNS`` as attributes, ``group`` (None, or its key) and
    ``forecast`` (None, or its stored forecast)."""

    __slots__ = (*COLUMNS, "group", "forecast")

    runtime_estimate = Gang.runtime_estimate  # the same columns, the same rule

    def __init__(self, values: tuple):
        for name, value in zip(COLUMNS, values, strict=False):
            setattr(self, name, value)
        group_key = values[len(COLUMNS)]
        self.group = None if group_key is None else GroupKey(group_key)
        forecast = values[len(COLUMNS) + 1 :]
        self.forecast = (
            None
            if forecast[0] is None
            else GangForecast(gang_id=self.id, **dict(zip(FORECAST_COLUMNS, forecast[1:], strict=True)))
        )


class GangRows:
    """The gangs of one submitter (or, with ``submitter`` None, every gang), newest first."""

    model = Gang

    def __init__(self, submitter: str | None, ordering=NEWEST_FIRST, position: tuple[str, str] | None = None):
        self.submitter, self.ordering, self.position = submitter, tuple(ordering), position

    def order_by(self, *ordering: str) -> GangRows:
        if ordering not in (NEWEST_FIRST, OLDEST_FIRST):
            raise ValueError(f"GangRows orders by {NEWEST_FIRST} or {OLDEST_FIRST}, not {ordering}")
        return GangRows(self.submitter, ordering, self.position)

    def filter(self, **lookup) -> GangRows:
        ((name, value),) = lookup.items()
        if name not in ("created__lt", "created__gt") or self.position is not None:
            raise ValueError(f"GangRows filters once by created__lt or created__gt, not {name}")
        return GangRows(self.submitter, self.ordering, (name.removeprefix("created__"), str(value)))

    def __getitem__(self, window: slice) -> list[GangRow]:
        if not isinstance(window, slice) or window.step is not None or window.stop is None:
            raise TypeError("GangRows answers one slice with an end")
        offset = window.start or 0
        sql = _sql(self.submitter is not None, self.position[0] if self.position else None, self.ordering)
        params = {
            "submitter": self.submitter,
            "position": self.position[1] if self.position else None,
            "limit": max(window.stop - offset, 0),
            "offset": offset,
        }
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [GangRow(values) for values in cursor.fetchall()]


@functools.cache
def _sql(own: bool, position: str | None, ordering: tuple[str, ...]) -> str:
    gangs, groups = Gang._meta.db_table, GangGroup._meta.db_table
    columns = ", ".join(f"g.{Gang._meta.get_field(name).column}" for name in COLUMNS)
    forecasts = GangForecast._meta.db_table
    forecast = ", ".join(f"f.{GangForecast._meta.get_field(name).column}" for name in FORECAST_COLUMNS)
    group = Gang._meta.get_field("group").column
    where = ["TRUE"]
    if own:
        where.append("g.submitter = %(submitter)s")
    if position is not None:
        where.append(f"g.created {'<' if position == 'lt' else '>'} %(position)s::timestamptz")
    direction = "DESC" if ordering == NEWEST_FIRST else "ASC"
    return (
        f"SELECT {columns}, gg.key, f.gang_id, {forecast} FROM {gangs} g "
        f"LEFT JOIN {groups} gg ON gg.id = g.{group} LEFT JOIN {forecasts} f ON f.gang_id = g.id "
        f"WHERE {' AND '.join(where)} ORDER BY g.created {direction}, g.id {direction} "
        "LIMIT %(limit)s OFFSET %(offset)s"
    )
