"""The bind journal: decided placements are written down first, then bound, then settled.

Binding a gang is not atomic on a real cluster. The cycle writes what it decided, one
``BindIntent`` row per gang (its members and their nodes, as arrays), in the same fenced
transaction as the rest of its decisions; ``journal_execute`` then binds them idempotently and
settles them: each pod's ``BindJournal`` row is written once, with the cluster's answer (bound or
failed), and the intents are marked settled, in one transaction. A pod thus costs one journal
row write instead of two (a pending row inserted, then updated), and a cycle's journal is a
fixed number of queries however many pods it binds.

A worker killed anywhere in between leaves pending intents, and the next cycle's
``journal_recover`` binds what is left (a bind of a pod already on that node succeeds) or, when
a satisfied gang ends with fewer than min_member bound, rolls the whole gang back. Either way no
gang stays half-bound and forgotten, and no pod's bind is written twice: the rows and the
settled mark commit together. (A gang of bare pods that ran and lost some to ``delete`` is the
exception: nobody recreates those, and its new members bind as its match-policy says without
touching the ones still running.) Pending ``BindJournal`` rows, the journal of earlier versions
(one per pod), are recovered the same way.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import IntegrityError, connection
from django.db.models import Count, Q
from django.utils import timezone

from scheduler_core.cluster import BindOutcome, BindRequest, ClusterBackend
from scheduler_core.db.arrays import UNPACK, packed, packed_lists
from scheduler_core.models import (
    BindIntent,
    BindJournal,
    BindState,
    Gang,
    GangEventKind,
    IntentState,
    Member,
    MemberPhase,
)
from scheduler_core.services.history import events_record_many
from scheduler_core.services.lease import Lease, fenced
from scheduler_core.services.lifecycle import gang_requeue

logger = logging.getLogger(__name__)

_STATE = {
    BindOutcome.BOUND: BindState.BOUND,
    BindOutcome.CONFLICT: BindState.FAILED,
    BindOutcome.GONE: BindState.FAILED,
    BindOutcome.FAILED: BindState.FAILED,
}
_JOURNAL = BindJournal._meta.db_table
_INTENT = BindIntent._meta.db_table
_MEMBER = Member._meta.db_table


@dataclass(slots=True)
class JournalEntry:
    """One decided bind as ``journal_execute`` needs it: its pod, its node, and where it is written
    down: ``intent`` (a ``BindIntent`` id; ``pk`` None until its row is written when settled) or
    ``pk`` (a pending ``BindJournal`` row of the per-pod journal).

    Plain values rather than model instances: a cycle journals thousands of binds, and building
    and saving model instances for them took longer than the binds themselves.
    """

    pk: int | None
    member_id: int
    gang_id: int | None
    node: str
    namespace: str
    name: str
    intent: int | None = None


def journal_pending(*, created_before=None) -> list[JournalEntry]:
    """Every bind written down and not settled (intents and per-pod rows), oldest first;
    ``created_before``: only those decided before that moment (reconciliation's stale ones)."""
    since = "" if created_before is None else "AND i.created < %(before)s"
    sql = f"""
        SELECT NULL, v.member_id, i.gang_id, v.node, m.namespace, m.name, i.id, i.created, v.position
          FROM {_INTENT} i
         CROSS JOIN LATERAL unnest(i.member_ids, i.nodes) WITH ORDINALITY AS v(member_id, node, position)
          JOIN {_MEMBER} m ON m.id = v.member_id
         WHERE i.state = %(pending)s {since}
        UNION ALL
        SELECT j.id, j.member_id, j.gang_id, j.node, m.namespace, m.name, NULL, j.created, j.id
          FROM {_JOURNAL} j JOIN {_MEMBER} m ON m.id = j.member_id
         WHERE j.state = %(pending)s {since.replace("i.", "j.")}
         ORDER BY 8, 7, 9
    """
    params = {"pending": IntentState.PENDING.value, "before": created_before}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [JournalEntry(pk, *rest, intent) for pk, *rest, intent, _created, _pos in cursor.fetchall()]


def journal_recover(*, lease: Lease, backend: ClusterBackend) -> int:
    """Finish the pending binds a crashed or stale cycle left behind; returns how many."""
    pending = journal_pending()
    if pending:
        logger.warning("recovering %d pending binds left by an earlier cycle", len(pending))
        journal_execute(lease=lease, backend=backend, rows=pending)
    return len(pending)


def journal_write(
    *, cycle_id: int, epoch: int, binds: list[tuple[int, int | None, str, str, str]]
) -> list[JournalEntry]:
    """Write one pending intent per gang for ``(member_id, gang_id, node, namespace, name)`` binds.

    Call it inside the cycle's fenced transaction: one query checks that no pod already has a
    bind pending (IntegrityError, as the per-pod journal's unique index did), one inserts the
    intents, whatever their number of pods.
    """
    if not binds:
        return []
    member_ids = [bind[0] for bind in binds]
    _refuse_second_pending(member_ids)
    by_gang: dict[int | None, list[tuple[int, int | None, str, str, str]]] = defaultdict(list)
    for bind in binds:
        by_gang[bind[1]].append(bind)
    gangs = list(by_gang)
    sql = f"""
        INSERT INTO {_INTENT} (cycle_id, epoch, gang_id, member_ids, nodes, state, error, created, updated)
        SELECT %s, %s, NULLIF(v.gang_id, 0), string_to_array(v.members, chr(30))::bigint[],
               string_to_array(v.nodes, chr(30)), %s, '', %s, %s
          FROM unnest({UNPACK}::bigint[], {UNPACK}, {UNPACK}) WITH ORDINALITY
               AS v(gang_id, members, nodes, position)
         ORDER BY v.position
        RETURNING id, gang_id
    """
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                *(cycle_id, epoch, IntentState.PENDING.value, now, now),
                packed(gang_id or 0 for gang_id in gangs),  # 0: the pods of no gang (NULL)
                packed_lists([bind[0] for bind in by_gang[gang_id]] for gang_id in gangs),
                packed_lists([bind[2] for bind in by_gang[gang_id]] for gang_id in gangs),
            ],
        )
        intent_of = dict((gang_id, pk) for pk, gang_id in cursor.fetchall())
    return [
        JournalEntry(None, member_id, gang_id, node, namespace, name, intent_of[gang_id])
        for member_id, gang_id, node, namespace, name in binds
    ]


def _refuse_second_pending(member_ids: list[int]) -> None:
    if len(set(member_ids)) != len(member_ids):
        raise IntegrityError("a pod is bound twice in one journal write")
    sql = f"""
        WITH ids AS (SELECT {UNPACK}::bigint[] AS ids)
        SELECT v.member_id FROM ids, {_INTENT} i CROSS JOIN LATERAL unnest(i.member_ids) AS v(member_id)
         WHERE i.state = %s AND v.member_id = ANY(ids.ids)
        UNION ALL
        SELECT member_id FROM ids, {_JOURNAL} WHERE state = %s AND member_id = ANY(ids.ids)
         LIMIT 1
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [packed(member_ids), IntentState.PENDING.value, BindState.PENDING.value])
        found = cursor.fetchone()
    if found:
        raise IntegrityError(f"member {found[0]} already has a bind pending")


def journal_execute(
    *,
    lease: Lease,
    backend: ClusterBackend,
    rows: Sequence[JournalEntry],
    outcomes: dict[int, str] | None = None,
) -> int:
    """Bind the rows' pods, write down the answers, and enforce the gang rule on what happened.

    Runs fenced: a worker that lost the lease binds nothing. Binds that fail after a gang was
    satisfied are fine as long as min_member members are bound (the rest wait as ordinary
    pods, Koordinator's "after gang"); below that the whole gang is rolled back and requeued.
    ``outcomes``, if given, gets each member id's journal state (rolled back: not bound).
    """
    if not rows:
        return 0
    with fenced(lease):
        # A row rolled back since it was read (its gang was requeued whole) is not bound.
        live = _still_pending(rows)
        if outcomes is not None:
            outcomes.update({row.member_id: BindState.ROLLED_BACK.value for row in rows})
        rows = live
        requests = [BindRequest(row.namespace, row.name, row.node) for row in rows]
        results = backend.bind(requests) if requests else []
        states = [_STATE[result.outcome] for result in results]
        errors = [
            ""
            if result.outcome == BindOutcome.BOUND
            else f"{result.outcome.value}: {result.error}".strip(": ")
            for result in results
        ]
        journal_settle(rows, states, errors)
        if outcomes is not None:
            outcomes.update({row.member_id: state.value for row, state in zip(rows, states, strict=True)})
        gang_ids = {row.gang_id for row in rows if row.gang_id is not None}
        _settle_gangs(gang_ids, rows, errors, backend)
    bound = sum(1 for state in states if state == BindState.BOUND)
    failed = [error for error in errors if error]
    if failed:
        logger.warning("%d of %d binds failed: %s", len(failed), len(rows), "; ".join(failed[:5]))
    return bound


def journal_settle(rows: Sequence[JournalEntry], states: Sequence[BindState], errors: Sequence[str]) -> None:
    """Write down the cluster's answers: the one place a cycle records its binds.

    Intents' pods get their ``BindJournal`` rows (one INSERT, each row in its final state, with
    the intent's cycle, epoch and decision time) and the intents are settled (one UPDATE); per-pod
    rows of the older journal are updated. A pod deleted meanwhile gets no row (its member row
    is gone). Call it inside the fenced transaction that made the binds' outcome final.
    """
    now = timezone.now()
    fresh = [i for i, row in enumerate(rows) if row.intent is not None]
    if fresh:
        sql = f"""
            INSERT INTO {_JOURNAL} (cycle_id, epoch, gang_id, member_id, node, state, error, created, updated)
            SELECT i.cycle_id, i.epoch, i.gang_id, v.member_id, v.node, v.state, COALESCE(e.error, ''),
                   i.created, %s
              FROM unnest({UNPACK}::bigint[], {UNPACK}::bigint[], {UNPACK}, {UNPACK}) WITH ORDINALITY
                   AS v(intent_id, member_id, node, state, position)
              JOIN {_INTENT} i ON i.id = v.intent_id
              JOIN {_MEMBER} m ON m.id = v.member_id
              LEFT JOIN unnest(%s::bigint[], %s::text[]) AS e(position, error) ON e.position = v.position
             ORDER BY v.position
        """
        failed = [(n, errors[i]) for n, i in enumerate(fresh, start=1) if errors[i]]
        columns = (
            packed(rows[i].intent for i in fresh),
            packed(rows[i].member_id for i in fresh),
            packed(rows[i].node for i in fresh),
            packed(states[i].value for i in fresh),
            [n for n, _error in failed],  # the few failures' errors, by position
            [error for _n, error in failed],
        )
        intent_ids = sorted({rows[i].intent for i in fresh})
        with connection.cursor() as cursor:
            cursor.execute(sql, [now, *columns])
            cursor.execute(
                f"UPDATE {_INTENT} SET state = %s, updated = %s WHERE id = ANY(%s::bigint[]) AND state = %s",
                [IntentState.SETTLED.value, now, intent_ids, IntentState.PENDING.value],
            )
    by_state: dict[tuple[BindState, str], list[int]] = defaultdict(list)
    for row, state, error in zip(rows, states, errors, strict=True):
        if row.intent is None:
            by_state[(state, error)].append(row.pk)
    with connection.cursor() as cursor:
        for (state, error), ids in by_state.items():
            cursor.execute(
                f"UPDATE {_JOURNAL} SET state = %s, error = %s, updated = %s WHERE id = ANY(%s::bigint[])",
                [state.value, error, now, ids],
            )


def _settle_gangs(gang_ids: set[int], rows: Sequence[JournalEntry], errors: Sequence[str], backend) -> None:
    if not gang_ids:
        return
    counts = dict(
        Gang.objects.filter(pk__in=gang_ids)
        .annotate(bound=Count("members", filter=Q(members__node__isnull=False, members__phase__in=_ACTIVE)))
        .values_list("pk", "bound")
    )
    tried: dict[int, int] = defaultdict(int)
    failed: dict[int, int] = defaultdict(int)
    for row, error in zip(rows, errors, strict=True):
        if row.gang_id is not None:
            tried[row.gang_id] += 1
            failed[row.gang_id] += bool(error)
    # Gangs with bare pods: below minMember because pods nobody recreates were deleted, after
    # running; their new members bind under the gang's match-policy, never requeueing the rest.
    bare = set(Member.objects.filter(gang_id__in=gang_ids, owner="").values_list("gang_id", flat=True))
    events = []
    for gang in Gang.objects.filter(pk__in=gang_ids):
        bound = counts.get(gang.pk, 0)
        # A gang that is not satisfied (requeued while these binds were in flight) and did not
        # fall back to pod-at-a-time must not keep a part of a stale placement either.
        stale = not gang.satisfied and not gang.fallen_back and bound > 0
        ran_before = bound > tried[gang.pk] - failed[gang.pk]  # members bound before these binds
        after_gang = gang.satisfied and ran_before and gang.pk in bare
        if (gang.satisfied or stale) and bound < gang.min_member and not after_gang:
            reason = (
                f"{failed[gang.pk]} of {tried[gang.pk]} binds failed; {bound} bound < minMember "
                f"{gang.min_member}: rolled back whole"
            )
            gang_requeue(gang=gang, reason=reason, backend=backend)
            continue
        events.append(
            {
                "gang": gang,
                "kind": GangEventKind.BOUND,
                "reason": f"{tried[gang.pk] - failed[gang.pk]} members bound"
                + (
                    f", {failed[gang.pk]} binds failed (they wait as ordinary pods)"
                    if failed[gang.pk]
                    else ""
                ),
                "details": {"bound_total": bound},
            }
        )
    events_record_many(events)


_ACTIVE = (MemberPhase.PENDING, MemberPhase.RUNNING)


def _still_pending(rows: Sequence[JournalEntry]) -> list[JournalEntry]:
    """The rows whose intent (or per-pod row) is still pending: one query, however many rows."""
    sql = f"""
        SELECT 'i', id FROM {_INTENT} WHERE id = ANY(%(intents)s::bigint[]) AND state = %(pending)s
        UNION ALL
        SELECT 'j', id FROM {_JOURNAL} WHERE id = ANY(%(rows)s::bigint[]) AND state = %(pending)s
    """
    intents = sorted({row.intent for row in rows if row.intent is not None})
    pks = [row.pk for row in rows if row.intent is None]
    with connection.cursor() as cursor:
        cursor.execute(sql, {"intents": intents, "rows": pks, "pending": IntentState.PENDING.value})
        pending = set(cursor.fetchall())
    return [
        row for row in rows if (("i", row.intent) if row.intent is not None else ("j", row.pk)) in pending
    ]


def member_ids_by_key(keys: set[str]) -> dict[str, int]:
    """Active members' ids by ``namespace/name``, for turning engine decisions back into rows;
    one query with array parameters, however many keys."""
    if not keys:
        return {}
    namespaces = sorted({key.split("/", 1)[0] for key in keys})
    names = sorted({key.split("/", 1)[1] for key in keys})
    sql = f"""
        SELECT id, namespace, name FROM {Member._meta.db_table}
         WHERE namespace = ANY({UNPACK}) AND name = ANY({UNPACK}) AND phase = ANY(%s::text[])
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [packed(namespaces), packed(names), [phase.value for phase in _ACTIVE]])
        rows = cursor.fetchall()
    found = {}
    for pk, namespace, name in rows:
        key = f"{namespace}/{name}"
        if key in keys:
            found[key] = pk
    return found
