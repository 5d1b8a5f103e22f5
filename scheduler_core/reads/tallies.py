"""Reads and upkeep of the sums the database keeps for the pages (``QueueUsage`` and
``GangEventMinute``, migration 0019), as ``node_usage`` does for the nodes: reads that cost what
the queues and minutes are, not what the pods and events are.

The triggers append a row per key each statement changed; ``tallies_compact`` (run by the timeout
sweep with ``usage_compact``, under the same lock) folds each key's rows into one and ages the
minutes out. ``queue_drift`` and ``tallies_repair`` compare with, and rebuild from, the members and
events (``manage.py node_usage [--repair]``): the triggers leave no drift, but a restored dump, a
disabled trigger or a hand edit could.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime

from django.db import connection, transaction

from scheduler_core.engine.model import INACTIVE_PHASES
from scheduler_core.models import Gang, GangEvent, GangEventMinute, Member, QueueUsage
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES, MemberPhase
from scheduler_core.models.tallies import POD_COUNT

_QUEUES = QueueUsage._meta.db_table
_EVENT_MINUTES = GangEventMinute._meta.db_table
_MEMBER, _GANG, _EVENT = Member._meta.db_table, Gang._meta.db_table, GangEvent._meta.db_table
#: pg_try_advisory_xact_lock key of the compaction (``node_usage.usage_compact``, which folds
#: these tables too, and the repairs): "nodeuse" in ASCII, as a bigint.
COMPACT_LOCK = 0x6E6F6465757365
#: How long the event minutes are kept: the overview charts the last hour.
MINUTES_KEPT = "2 hours"
_REQUESTS = "CASE WHEN jsonb_typeof(m.requests) = 'object' THEN m.requests ELSE '{}'::jsonb END"

#: Each queue's charges summed from scratch: what the stored rows must add up to.
_QUEUES_FROM_MEMBERS = f"""
    SELECT namespace, queue, bound, resource, SUM(amount) FROM (
        SELECT m.namespace, COALESCE(g.queue, m.queue) AS queue, m.node IS NOT NULL AS bound,
               r.key AS resource, trunc((r.value)::numeric) AS amount
          FROM {_MEMBER} m LEFT JOIN {_GANG} g ON g.id = m.gang_id
         CROSS JOIN LATERAL jsonb_each({_REQUESTS}) r
         WHERE m.phase = ANY(%s) AND jsonb_typeof(r.value) = 'number'
        UNION ALL
        SELECT m.namespace, COALESCE(g.queue, m.queue), m.node IS NOT NULL, '', 1
          FROM {_MEMBER} m LEFT JOIN {_GANG} g ON g.id = m.gang_id
         WHERE m.phase = ANY(%s)
    ) d
    GROUP BY namespace, queue, bound, resource
    HAVING SUM(amount) <> 0
"""
#: The pods without a node of gangs the scheduler no longer tries (timed out, failed, killed,
#: finished): their pods still exist, Pending, as a Kubernetes pod rejected by a gang plugin
#: does, but nothing places them until an operator retries the gang. The gang's phase index
#: finds the few such gangs; their members come by the gang index.
_STALLED = f"""
    SELECT namespace, queue, bound, resource, SUM(amount) FROM (
        SELECT m.namespace, g.queue AS queue, false AS bound, r.key AS resource,
               trunc((r.value)::numeric) AS amount
          FROM {_GANG} g JOIN {_MEMBER} m ON m.gang_id = g.id
         CROSS JOIN LATERAL jsonb_each({_REQUESTS}) r
         WHERE g.phase = ANY(%s) AND m.phase = %s AND m.node IS NULL
           AND jsonb_typeof(r.value) = 'number'
        UNION ALL
        SELECT m.namespace, g.queue, false, '', 1
          FROM {_GANG} g JOIN {_MEMBER} m ON m.gang_id = g.id
         WHERE g.phase = ANY(%s) AND m.phase = %s AND m.node IS NULL
    ) d
    GROUP BY namespace, queue, bound, resource
    HAVING SUM(amount) <> 0
"""
_MINUTES_FROM_EVENTS = f"""
    SELECT date_trunc('minute', e.created), COALESCE(g.submitter, ''), e.kind, COUNT(*)
      FROM {_EVENT} e LEFT JOIN {_GANG} g ON g.id = e.gang_id
     WHERE e.created >= now() - interval '{MINUTES_KEPT}'
     GROUP BY 1, 2, 3
"""

QueueKey = tuple[str, str, bool]  # (namespace, declared queue, bound)


def _charges(sql: str, params: list) -> dict[QueueKey, Counter]:
    charges: dict[QueueKey, Counter] = defaultdict(Counter)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for namespace, queue, bound, resource, amount in cursor.fetchall():
            if amount:
                charges[(namespace, queue, bound)][resource] += int(amount)
    return dict(charges)


def queue_charges() -> dict[QueueKey, Counter]:
    """What the active pods request per (namespace, declared queue, bound), per resource, and
    their number under ``POD_COUNT``: one aggregate over the stored rows."""
    sql = f"SELECT namespace, queue, bound, resource, SUM(amount) FROM {_QUEUES} GROUP BY 1, 2, 3, 4"
    return _charges(sql, [])


def queue_charges_stalled() -> dict[QueueKey, Counter]:
    """The part of ``queue_charges``' pending rows that belongs to gangs nobody schedules until
    an operator acts (``_STALLED``): the pages count it apart from the demand that waits."""
    phases = sorted(phase.value for phase in INACTIVE_PHASES)
    return _charges(_STALLED, [phases, MemberPhase.PENDING.value, phases, MemberPhase.PENDING.value])


def queue_charges_from_members() -> dict[QueueKey, Counter]:
    """The same, summed afresh from the members (a scan of every active pod: for checks)."""
    phases = list(ACTIVE_MEMBER_PHASES)
    return _charges(_QUEUES_FROM_MEMBERS, [phases, phases])


def queue_drift() -> dict[QueueKey, tuple[Counter, Counter]]:
    """Keys whose stored charges differ from the members': ``{key: (stored, from members)}``."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:  # one snapshot for both reads, as usage_drift
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        stored, truth = queue_charges(), queue_charges_from_members()
    return {
        key: (stored.get(key, Counter()), truth.get(key, Counter()))
        for key in sorted(set(stored) | set(truth))
        if +stored.get(key, Counter()) != +truth.get(key, Counter())
    }


def tallies_repair() -> int:
    """Rebuild the queue rows from the members and the event minutes from the events, each in
    one statement (one snapshot); the rows written. Not while a sweep folds (its lock)."""
    phases = list(ACTIVE_MEMBER_PHASES)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [COMPACT_LOCK])
        cursor.execute(
            f"WITH gone AS (DELETE FROM {_QUEUES}) "
            f"INSERT INTO {_QUEUES} (namespace, queue, bound, resource, amount) {_QUEUES_FROM_MEMBERS}",
            [phases, phases],
        )
        rows = cursor.rowcount
        cursor.execute(
            f"WITH gone AS (DELETE FROM {_EVENT_MINUTES}) "
            f"INSERT INTO {_EVENT_MINUTES} (minute, submitter, kind, n) {_MINUTES_FROM_EVENTS}"
        )
        return rows + cursor.rowcount


def fold_rows(cursor, table: str, keys: tuple[str, ...], amount: str, *, lone_zeros: bool = True) -> int:
    """Fold the rows of ``table`` that share ``keys`` into one row holding their summed
    ``amount``, dropping sums of zero; with ``lone_zeros`` a single row of zero goes too.
    The triggers append a row per change and the readers sum them: folding keeps the tables
    as small as their keys. Returns how many rows were folded away or dropped."""
    columns = ", ".join(keys)
    folds = "HAVING COUNT(*) > 1" + (f" OR SUM({amount}) = 0" if lone_zeros else "")
    cursor.execute(
        f"""
        WITH folded AS (
            SELECT {columns} FROM {table} GROUP BY {columns} {folds}
        ), gone AS (
            DELETE FROM {table} u USING folded f
             WHERE {" AND ".join(f"u.{key} = f.{key}" for key in keys)}
         RETURNING {", ".join(f"u.{key}" for key in (*keys, amount))}
        ), kept AS (
            INSERT INTO {table} ({columns}, {amount})
            SELECT {columns}, SUM({amount}) FROM gone GROUP BY {columns} HAVING SUM({amount}) <> 0
        )
        SELECT COUNT(*) FROM gone
        """
    )
    return cursor.fetchone()[0]


def tallies_compact(cursor) -> None:
    """Fold each key's rows into one (dropping those summing to zero) and age the event minutes
    out; run by ``usage_compact`` inside its transaction, holding its lock."""
    fold_rows(cursor, _QUEUES, ("namespace", "queue", "bound", "resource"), "amount")
    cursor.execute(f"DELETE FROM {_EVENT_MINUTES} WHERE minute < now() - interval '{MINUTES_KEPT}'")
    fold_rows(cursor, _EVENT_MINUTES, ("minute", "submitter", "kind"), "n")


def event_counts(*, since: datetime, kinds, submitter: str | None = None) -> list[tuple[datetime, str, int]]:
    """(minute, kind, events) for the minutes from ``since`` on, of ``kinds``, of the gangs of
    ``submitter`` (None: every gang's)."""
    sql = f"SELECT minute, kind, SUM(n) FROM {_EVENT_MINUTES} WHERE minute >= %s AND kind = ANY(%s)"
    params: list = [since, list(kinds)]
    if submitter is not None:
        sql += " AND submitter = %s"
        params.append(submitter)
    with connection.cursor() as cursor:
        cursor.execute(sql + " GROUP BY minute, kind", params)
        return [(minute, kind, int(n)) for minute, kind, n in cursor.fetchall() if n]


__all__ = [
    "COMPACT_LOCK",
    "fold_rows",
    "POD_COUNT",
    "event_counts",
    "queue_charges",
    "queue_drift",
    "tallies_compact",
    "tallies_repair",
]
