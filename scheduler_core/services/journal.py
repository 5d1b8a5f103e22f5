"""The bind journal: decided placements are written down first, then bound, then settled.

Binding a gang is not atomic on a real cluster. The cycle writes one pending journal row per
bind in the same fenced transaction as the rest of its decisions; ``journal_execute`` then binds
them idempotently and settles them. A worker killed anywhere in between leaves pending rows,
and the next cycle's ``journal_recover`` binds what is left (a bind of a pod already on that
node succeeds) or, when a satisfied gang ends with fewer than min_member bound, rolls the whole
gang back. Either way no gang stays half-bound and forgotten. (A gang of bare pods that ran and
lost some to ``delete`` is the exception: nobody recreates those, and its new members bind as
its match-policy says without touching the ones still running.)
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Q
from django.utils import timezone

from scheduler_core.cluster import BindOutcome, BindRequest, ClusterBackend
from scheduler_core.models import BindJournal, BindState, Gang, GangEventKind, Member, MemberPhase
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


@dataclass(slots=True)
class JournalEntry:
    """One bind journal row as ``journal_execute`` needs it: the row, its pod and its node.

    Plain values rather than BindJournal instances: a cycle journals thousands of binds, and
    building and saving model instances for them took longer than the binds themselves.
    """

    pk: int
    member_id: int
    gang_id: int | None
    node: str
    namespace: str
    name: str


def journal_recover(*, lease: Lease, backend: ClusterBackend) -> int:
    """Finish the pending binds a crashed or stale cycle left behind; returns how many."""
    pending = [
        JournalEntry(*row)
        for row in BindJournal.objects.filter(state=BindState.PENDING)
        .order_by("created", "id")
        .values_list("pk", "member_id", "gang_id", "node", "member__namespace", "member__name")
    ]
    if pending:
        logger.warning("recovering %d pending binds left by an earlier cycle", len(pending))
        journal_execute(lease=lease, backend=backend, rows=pending)
    return len(pending)


def journal_write(
    *, cycle_id: int, epoch: int, binds: list[tuple[int, int | None, str, str, str]]
) -> list[JournalEntry]:
    """Insert one pending row per ``(member_id, gang_id, node, namespace, name)``, in one query.

    Call it inside the cycle's fenced transaction. The partial unique index on pending rows
    refuses a second pending bind for a pod (IntegrityError), as a row-by-row insert would.
    """
    if not binds:
        return []
    table = BindJournal._meta.db_table
    now = timezone.now()
    sql = f"""
        INSERT INTO {table} (cycle_id, epoch, gang_id, member_id, node, state, error, created, updated)
        SELECT %s, %s, v.gang_id, v.member_id, v.node, %s, '', %s, %s
          FROM unnest(%s::bigint[], %s::bigint[], %s::text[]) WITH ORDINALITY
               AS v(member_id, gang_id, node, position)
         ORDER BY v.position
        RETURNING id, member_id
    """
    member_ids = [bind[0] for bind in binds]
    gang_ids = [bind[1] for bind in binds]
    nodes = [bind[2] for bind in binds]
    with connection.cursor() as cursor:
        cursor.execute(sql, [cycle_id, epoch, BindState.PENDING.value, now, now, member_ids, gang_ids, nodes])
        # One pending row per member (the unique index just checked it): pair them by member.
        ids = dict((member_id, pk) for pk, member_id in cursor.fetchall())
    return [
        JournalEntry(ids[member_id], member_id, gang_id, node, namespace, name)
        for member_id, gang_id, node, namespace, name in binds
    ]


def journal_execute(*, lease: Lease, backend: ClusterBackend, rows: Sequence[JournalEntry]) -> int:
    """Bind the rows' pods, settle the rows, and enforce the gang rule on what happened.

    Runs fenced: a worker that lost the lease binds nothing. Binds that fail after a gang was
    satisfied are fine as long as min_member members are bound (the rest wait as ordinary
    pods, Koordinator's "after gang"); below that the whole gang is rolled back and requeued.
    """
    if not rows:
        return 0
    with fenced(lease):
        # A row rolled back since it was read (its gang was requeued whole) is not bound.
        rows = _still_pending(rows)
        requests = [BindRequest(row.namespace, row.name, row.node) for row in rows]
        results = backend.bind(requests) if requests else []
        by_state: dict[BindState, list[int]] = defaultdict(list)
        errors: dict[int, str] = {}
        for row, result in zip(rows, results, strict=True):
            by_state[_STATE[result.outcome]].append(row.pk)
            if result.outcome != BindOutcome.BOUND:
                errors[row.pk] = f"{result.outcome.value}: {result.error}".strip(": ")
        sql = f"UPDATE {BindJournal._meta.db_table} SET state = %s WHERE id = ANY(%s::bigint[])"
        with connection.cursor() as cursor:
            for state, ids in by_state.items():
                cursor.execute(sql, [state.value, ids])
        for pk, error in errors.items():
            BindJournal.objects.filter(pk=pk).update(error=error)
        gang_ids = {row.gang_id for row in rows if row.gang_id is not None}
        _settle_gangs(gang_ids, rows, errors, backend)
    bound = len(by_state.get(BindState.BOUND, ()))
    if errors:
        logger.warning(
            "%d of %d binds failed: %s", len(errors), len(rows), "; ".join(list(errors.values())[:5])
        )
    return bound


def _settle_gangs(gang_ids: set[int], rows: Sequence[JournalEntry], errors: dict[int, str], backend) -> None:
    if not gang_ids:
        return
    counts = dict(
        Gang.objects.filter(pk__in=gang_ids)
        .annotate(bound=Count("members", filter=Q(members__node__isnull=False, members__phase__in=_ACTIVE)))
        .values_list("pk", "bound")
    )
    tried: dict[int, int] = defaultdict(int)
    failed: dict[int, int] = defaultdict(int)
    for row in rows:
        if row.gang_id is not None:
            tried[row.gang_id] += 1
            failed[row.gang_id] += row.pk in errors
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
    """The rows still pending (one query with an array parameter, however many rows)."""
    sql = f"SELECT id FROM {BindJournal._meta.db_table} WHERE id = ANY(%s::bigint[]) AND state = %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [[row.pk for row in rows], BindState.PENDING.value])
        pending = {pk for (pk,) in cursor.fetchall()}
    return [row for row in rows if row.pk in pending]


def member_ids_by_key(keys: set[str]) -> dict[str, int]:
    """Active members' ids by ``namespace/name``, for turning engine decisions back into rows;
    one query with array parameters, however many keys."""
    if not keys:
        return {}
    namespaces = sorted({key.split("/", 1)[0] for key in keys})
    names = sorted({key.split("/", 1)[1] for key in keys})
    sql = f"""
        SELECT id, namespace, name FROM {Member._meta.db_table}
         WHERE namespace = ANY(%s::text[]) AND name = ANY(%s::text[]) AND phase = ANY(%s::text[])
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [namespaces, names, [phase.value for phase in _ACTIVE]])
        rows = cursor.fetchall()
    found = {}
    for pk, namespace, name in rows:
        key = f"{namespace}/{name}"
        if key in keys:
            found[key] = pk
    return found
