"""Per-node usage as the database keeps it (``NodeUsage``, migration 0017): reads that cost what
the nodes asked for, not what the members are, and the two writes that keep the table small and
right.

A node's use of a resource is the SUM of its ``NodeUsage`` rows; ``pods`` is its number of
bound active pods. The member table's triggers append a row per (node, resource) each statement
changed, so the table grows with the changes until ``usage_compact`` (run by the timeout sweep,
every few seconds) folds each node's rows into one. The same changes, summed over the nodes per
minute (``UsageMinute``), are what the overview's last hour is rebuilt from. ``usage_drift`` and
``usage_repair`` compare with, and rebuild from, the members (``manage.py node_usage``): the triggers leave no
drift, but a restored dump, a disabled trigger or a hand edit could.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from django.db import connection, transaction

from scheduler_core.models import Member, NodeUsage, UsageMinute
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES
from scheduler_core.reads.tallies import COMPACT_LOCK, fold_rows, tallies_compact

_USAGE = NodeUsage._meta.db_table
_MINUTES = UsageMinute._meta.db_table
#: How long the per-minute changes are kept: the overview charts the last hour.
MINUTES_KEPT = "2 hours"
_MEMBER = Member._meta.db_table

#: The members' usage, summed from scratch: what the stored rows must add up to.
_FROM_MEMBERS = f"""
    SELECT node, resource, SUM(amount) FROM (
        SELECT m.node, r.key AS resource, (r.value)::numeric AS amount
          FROM {_MEMBER} m
         CROSS JOIN LATERAL jsonb_each(
               CASE WHEN jsonb_typeof(m.requests) = 'object' THEN m.requests ELSE '{{}}'::jsonb END) r
         WHERE m.node IS NOT NULL AND m.phase = ANY(%s) AND r.key <> 'pods'
           AND jsonb_typeof(r.value) = 'number'
        UNION ALL
        SELECT m.node, 'pods', 1 FROM {_MEMBER} m WHERE m.node IS NOT NULL AND m.phase = ANY(%s)
    ) d
    GROUP BY node, resource
    HAVING SUM(amount) <> 0
"""


def usage_by_node(names: Iterable[str] | None = None, *, resource: str | None = None) -> dict[str, Counter]:
    """Each node's use per resource (``pods`` included), for ``names`` (None: every node that has
    pods) and only ``resource`` if given: one indexed aggregate over the usage rows."""
    where, params = [], []
    if names is not None:
        names = list(names)
        if not names:
            return {}
        where.append("node = ANY(%s)")
        params.append(names)
    if resource is not None:
        where.append("resource = %s")
        params.append(resource)
    sql = f"SELECT node, resource, SUM(amount) FROM {_USAGE}"
    sql += (" WHERE " + " AND ".join(where) if where else "") + " GROUP BY node, resource"
    used: dict[str, Counter] = defaultdict(Counter)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for node, name, amount in cursor.fetchall():
            if amount:
                used[node][name] = int(amount)
    return dict(used)


def usage_total() -> Counter:
    """What every bound active pod requests, summed per resource, wherever it runs."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT resource, SUM(amount) FROM {_USAGE} GROUP BY resource")
        return Counter({name: int(amount) for name, amount in cursor.fetchall() if amount})


def usage_from_members() -> dict[str, Counter]:
    """The usage summed afresh from the members (a scan of every bound active pod: for checks)."""
    phases = list(ACTIVE_MEMBER_PHASES)
    used: dict[str, Counter] = defaultdict(Counter)
    with connection.cursor() as cursor:
        cursor.execute(_FROM_MEMBERS, [phases, phases])
        for node, name, amount in cursor.fetchall():
            used[node][name] = int(amount)
    return dict(used)


def usage_drift() -> dict[str, tuple[Counter, Counter]]:
    """Nodes whose stored usage differs from their members': ``{node: (stored, from members)}``."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            # One snapshot for both reads, so a bind committing between them is no false drift.
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        stored, truth = usage_by_node(), usage_from_members()
    return {
        node: (stored.get(node, Counter()), truth.get(node, Counter()))
        for node in sorted(set(stored) | set(truth))
        if +stored.get(node, Counter()) != +truth.get(node, Counter())
    }


def usage_repair() -> int:
    """Rebuild the usage rows from the members, in one statement (one snapshot: a transaction
    committing meanwhile keeps its own rows, its pods not being in the sum); the rows written."""
    phases = list(ACTIVE_MEMBER_PHASES)
    with transaction.atomic(), connection.cursor() as cursor:
        # Not while a sweep folds: rows it writes after this statement's snapshot would be kept.
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [COMPACT_LOCK])
        cursor.execute(
            f"WITH gone AS (DELETE FROM {_USAGE}) "
            f"INSERT INTO {_USAGE} (node, resource, amount) {_FROM_MEMBERS}",
            [phases, phases],
        )
        return cursor.rowcount


def usage_compact() -> int:
    """Fold each (node, resource)'s rows into one, dropping those that sum to zero, and each
    (minute, resource)'s the same way, deleting minutes older than MINUTES_KEPT, and the pages'
    other sums (``tallies_compact``: queues, event minutes); how many node rows were folded.
    Rows being written by open transactions are not seen, hence kept. Two sweeps at once: the
    second does nothing."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [COMPACT_LOCK])
        if not cursor.fetchone()[0]:
            return 0
        folded = fold_rows(cursor, _USAGE, ("node", "resource"), "amount")
        cursor.execute(f"DELETE FROM {_MINUTES} WHERE minute < now() - interval '{MINUTES_KEPT}'")
        fold_rows(cursor, _MINUTES, ("minute", "resource"), "amount", lone_zeros=False)
        tallies_compact(cursor)
        return folded


def usage_changes(*, since, until) -> list[tuple]:
    """(minute, resource, net change) of the cluster's usage for the minutes in [since, until)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT minute, resource, SUM(amount) FROM {_MINUTES} WHERE minute >= %s AND minute < %s "
            "GROUP BY minute, resource",
            [since, until],
        )
        return [(minute, resource, int(amount)) for minute, resource, amount in cursor.fetchall()]
