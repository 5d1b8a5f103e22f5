"""Many new rows of one model in one INSERT whose values travel as a single JSON text.

``QuerySet.bulk_create`` of a 50-pod gang costs more Python than the rest of a submission: the
SQL compiler prepares each of the ~1,200 values (24 columns) one by one, then psycopg's
client-side binding turns each into SQL text. Measured on ``bench/service.py``'s gangs, that was
~100 µs of the ~170 µs of CPU a submitted pod costs. Here each row's values are read once with
the same ``pre_save`` (defaults, ``auto_now``) and dumped with ``json.dumps`` (C), and
PostgreSQL spreads them into columns with ``jsonb_to_recordset``, casting each to its column's
type. Like ``bulk_create`` on PostgreSQL: no signals, ``save()`` is not called, the primary keys
come back and are set on the instances, in order.

For models whose values are JSON-friendly (text, numbers, booleans, JSON, datetimes, foreign
keys); anything else is refused rather than mis-stored.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
from collections.abc import Sequence

from django.db import connection, models

#: Field classes whose values ``rows_insert`` passes through JSON unchanged (or as ISO text).
_PLAIN = (
    models.CharField,
    models.TextField,
    models.IntegerField,
    models.BigIntegerField,
    models.BooleanField,
    models.FloatField,
    models.JSONField,
    models.DateTimeField,
    models.ForeignKey,
)


def rows_insert(model: type[models.Model], objs: Sequence[models.Model]) -> None:
    """Insert ``objs`` (new instances of ``model``, primary key unset) in one statement and set
    their primary keys."""
    if not objs:
        return
    fields, sql = _statement(model)
    rows = [{f.column: _value(f, f.pre_save(obj, True)) for f in fields} for obj in objs]
    with connection.cursor() as cursor:
        cursor.execute(sql, [json.dumps(rows, allow_nan=False)])
        ids = [row[0] for row in cursor.fetchall()]
    for obj, pk in zip(objs, ids, strict=True):
        obj.pk = pk
        obj._state.adding, obj._state.db = False, connection.alias


@functools.cache
def _statement(model: type[models.Model]) -> tuple[list[models.Field], str]:
    """The model's columns and its INSERT, written once per model (a one-row insert of a
    submission spent a third of its time writing them)."""
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    refused = [f.name for f in fields if not isinstance(f, _PLAIN)]
    if refused or meta.pk.get_internal_type() not in ("AutoField", "BigAutoField"):
        raise TypeError(f"rows_insert cannot store {model.__name__}.{', '.join(refused) or 'pk'}")
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    types = ", ".join(f"{quote(f.column)} {_type(f)}" for f in fields)
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({columns}) "
        f"SELECT {columns} FROM ROWS FROM (jsonb_to_recordset(%s::jsonb) AS ({types})) "
        f"WITH ORDINALITY AS r({columns}, _n) ORDER BY _n RETURNING {quote(meta.pk.column)}"
    )
    return fields, sql


def _type(field: models.Field) -> str:
    """The column's type without a length: a too long text then fails on the INSERT's
    assignment to the column, as with ``bulk_create``, instead of being cut by a cast."""
    db_type = field.db_type(connection)
    return "text" if db_type.startswith("varchar(") else db_type


def _value(field: models.Field, value: object) -> object:
    """A column's value as JSON: datetimes as ISO text, non-finite floats as the text PostgreSQL
    reads them from; JSON columns as their value (nested in the document)."""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value) and not isinstance(field, models.JSONField):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value
