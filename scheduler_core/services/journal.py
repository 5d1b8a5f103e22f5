"""The bind journal: decided placements are written down first, then bound, then settled.

Binding a gang is not atomic on a real cluster. The cycle writes one pending journal row per
bind in the same fenced transaction as the rest of its decisions; ``journal_execute`` then binds
them idempotently and settles them. A worker killed anywhere in between leaves pending rows,
and the next cycle's ``journal_recover`` binds what is left (a bind of a pod already on that
node succeeds) or, when a satisfied gang ends with fewer than min_member bound, rolls the whole
gang back. Either way no gang stays half-bound and forgotten.
"""

from __future__ import annotations

import logging
from collections import defaultdict

from django.db.models import Count, Q

from scheduler_core.cluster import BindOutcome, BindRequest, ClusterBackend
from scheduler_core.models import BindJournal, BindState, Gang, GangEventKind, Member, MemberPhase
from scheduler_core.services.history import events_record_many
from scheduler_core.services.lease import Lease, fenced
from scheduler_core.services.requeue import gang_requeue

logger = logging.getLogger(__name__)

_STATE = {
    BindOutcome.BOUND: BindState.BOUND,
    BindOutcome.CONFLICT: BindState.FAILED,
    BindOutcome.GONE: BindState.FAILED,
    BindOutcome.FAILED: BindState.FAILED,
}


def journal_recover(*, lease: Lease, backend: ClusterBackend) -> int:
    """Finish the pending binds a crashed or stale cycle left behind; returns how many."""
    pending = list(BindJournal.objects.filter(state=BindState.PENDING).select_related("member"))
    if pending:
        logger.warning("recovering %d pending binds left by an earlier cycle", len(pending))
        journal_execute(lease=lease, backend=backend, rows=pending)
    return len(pending)


def journal_execute(*, lease: Lease, backend: ClusterBackend, rows: list[BindJournal]) -> int:
    """Bind the rows' pods, settle the rows, and enforce the gang rule on what happened.

    Runs fenced: a worker that lost the lease binds nothing. Binds that fail after a gang was
    satisfied are fine as long as min_member members are bound (the rest wait as ordinary
    pods, Koordinator's "after gang"); below that the whole gang is rolled back and requeued.
    """
    if not rows:
        return 0
    requests = [BindRequest(row.member.namespace, row.member.name, row.node) for row in rows]
    with fenced(lease):
        results = backend.bind(requests)
        by_state: dict[BindState, list[int]] = defaultdict(list)
        errors: dict[int, str] = {}
        for row, result in zip(rows, results, strict=True):
            by_state[_STATE[result.outcome]].append(row.pk)
            if result.outcome != BindOutcome.BOUND:
                errors[row.pk] = f"{result.outcome.value}: {result.error}".strip(": ")
        for state, ids in by_state.items():
            BindJournal.objects.filter(pk__in=ids).update(state=state)
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


def _settle_gangs(gang_ids: set[int], rows: list[BindJournal], errors: dict[int, str], backend) -> None:
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
    events = []
    for gang in Gang.objects.filter(pk__in=gang_ids):
        bound = counts.get(gang.pk, 0)
        if gang.satisfied and bound < gang.min_member:
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


def members_by_key(keys: set[str]) -> dict[str, Member]:
    """Active members by ``namespace/name``, for turning engine decisions back into rows."""
    if not keys:
        return {}
    namespaces = {key.split("/", 1)[0] for key in keys}
    names = {key.split("/", 1)[1] for key in keys}
    rows = Member.objects.filter(namespace__in=namespaces, name__in=names, phase__in=_ACTIVE).only(
        "id", "namespace", "name", "gang_id", "node", "reserved_node"
    )
    return {row.key: row for row in rows if row.key in keys}
