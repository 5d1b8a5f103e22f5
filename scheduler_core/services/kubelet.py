"""The simulated cluster's kubelets: pods start, run for their ``duration_seconds``, end.

A real cluster does this on its own; the simulated one needs a clock to tick it (the scheduling
loop's periodic task calls ``kubelet_tick``, tests call it with an explicit ``now``). One tick,
in one transaction:

1. pods on a node that is gone or not ready fail ("node lost"; a real cluster waits out the
   NoExecute toleration first, the simulation does not);
2. bound pending pods start running (``started_at = now``);
3. running pods whose ``duration_seconds`` has elapsed succeed, freeing their node (terminal pods
   are not in the snapshot); a pod without a duration runs until it is deleted or failed;
4. gangs that lost members go through their restart policy (services/lifecycle.py);
5. gang counts and phases follow their pods.

Each step selects by state and moves it forward, so a second tick at the same ``now`` finds
nothing to do. Ticks are serialised by a transaction-level advisory lock: two overlapping ticks
(a slow one and the next beat) would otherwise race on the same rows.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import connection, transaction
from django.db.models import DateTimeField, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from scheduler_core.models import Member, MemberPhase, Node
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES

from . import lifecycle

logger = logging.getLogger(__name__)

#: pg_advisory_xact_lock key for kubelet ticks ("kubelet" in ASCII, as a bigint).
KUBELET_LOCK = 0x6B7562656C6574

NODE_LOST = "node lost"


def kubelet_tick(now: datetime | None = None) -> dict[str, int]:
    """Advance every pod by one tick; what moved, counted: lost, started, succeeded, gangs
    handled by their restart policy (``restarted``), gangs whose status changed (``gangs``)."""
    now = now or timezone.now()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [KUBELET_LOCK])
        lost, reasons = lifecycle.members_fail(_on_lost_nodes(), reason=NODE_LOST, now=now)
        started = Member.objects.filter(phase=MemberPhase.PENDING, node__isnull=False).update(
            phase=MemberPhase.RUNNING, started_at=now, updated=now
        )
        succeeded = _elapsed(now).update(phase=MemberPhase.SUCCEEDED, finished_at=now, updated=now)
        handled = lifecycle.failures_handle(now=now, reasons=reasons)
        # ``handled`` too: a gang its policy just Failed is done, yet its counts must follow.
        gangs = lifecycle.gangs_refresh(now=now, gang_ids=handled)
    counts = dict(lost=lost, started=started, succeeded=succeeded, restarted=len(handled), gangs=gangs)
    if any(counts.values()):
        logger.info("kubelet tick: %s", counts)
    return counts


def pod_fail(namespace: str, name: str, reason: str, now: datetime | None = None) -> bool:
    """Fail a bound pod now, as if its container crashed; False if no such pod is bound and
    active. Its gang's restart policy runs at once."""
    now = now or timezone.now()
    with transaction.atomic():
        pod = Member.objects.filter(
            namespace=namespace, name=name, node__isnull=False, phase__in=ACTIVE_MEMBER_PHASES
        )
        failed, reasons = lifecycle.members_fail(pod, reason=reason, now=now)
        if failed:
            handled = lifecycle.failures_handle(now=now, reasons=reasons)
            lifecycle.gangs_refresh(now=now, gang_ids=handled)
    return bool(failed)


def _on_lost_nodes() -> QuerySet[Member]:
    ready = Node.objects.filter(ready=True).values("name")
    return Member.objects.filter(phase__in=ACTIVE_MEMBER_PHASES, node__isnull=False).exclude(node__in=ready)


def _elapsed(now: datetime) -> QuerySet[Member]:
    ends = RawSQL("started_at + duration_seconds * interval '1 second'", (), output_field=DateTimeField())
    return (
        Member.objects.filter(
            phase=MemberPhase.RUNNING, duration_seconds__isnull=False, started_at__isnull=False
        )
        .alias(ends=ends)
        .filter(ends__lte=now)
    )
