"""Putting a whole gang back in the queue: its pods stop and it starts again from Pending.

Used when binding a satisfied gang ends below min_member (the rollback of the bind journal),
when a gang is preempted, and by the restart policy. Bound members are deleted through the
backend; the simulated cluster has no controllers, so the same Member rows then come back as
fresh pending pods, as a Job controller would recreate them.
"""

from __future__ import annotations

from django.db import transaction

from scheduler_core.models import Gang, GangEventKind, Member, MemberPhase
from scheduler_core.services.history import event_record

_ACTIVE = (MemberPhase.PENDING, MemberPhase.RUNNING)


@transaction.atomic
def gang_requeue(*, gang: Gang, reason: str, backend, kind: GangEventKind = GangEventKind.RESTARTED) -> int:
    """Stop every active member of ``gang`` and make them all pending again; returns how many."""
    members = list(Member.objects.select_for_update().filter(gang=gang).exclude(phase=MemberPhase.SUCCEEDED))
    for member in members:
        if member.node and member.phase in _ACTIVE:
            backend.delete_pod(member.namespace, member.name, reason)
    Member.objects.filter(pk__in=[m.pk for m in members]).update(
        phase=MemberPhase.PENDING,
        node=None,
        reserved_node=None,
        started_at=None,
        finished_at=None,
        terminating=False,
    )
    Gang.objects.filter(pk=gang.pk).update(
        phase="Pending", satisfied=False, wait_started=None, fallen_back=False, running=0, failed=0
    )
    event_record(gang=gang, kind=kind, reason=reason, details={"members": len(members)})
    return len(members)
