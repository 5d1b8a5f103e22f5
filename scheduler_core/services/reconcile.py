"""Reconciliation: find state that drifted from the truth, repair it, and say what was repaired.

Each cycle repairs what it touches, and the journal's recovery finishes what a crashed cycle
left; this sweep catches the rest, whatever left it behind (a crash outside a cycle, a manual
edit, a bug). Where the truth is depends on the backend:

- the simulated cluster: the database *is* the cluster (pods are Member rows, nodes are Node
  rows), so drift can only be between what the scheduler derives and those rows: reservations,
  the bind journal, gang phases and counters;
- Kubernetes (scheduler_core/cluster/kube/): the watcher's list + watch keeps the mirror in step
  with the API server and relists after a gap (410 Gone), which repairs the mirror itself; pods
  may be bound to nodes not mirrored yet, so "bound to a missing node" is left to the watcher
  there, and this sweep repairs only the derived state.

The repairs, in order, each one row of history (a ``reconciled`` GangEvent) on the gang it
touched and a log line:

1. pending journal rows older than the lease TTL: their cycle is gone (we hold the lease), so
   they are finished as the next cycle would (bound, or the gang rolled back whole);
2. reservations held on a node that does not exist, by a pod that is not pending, or for a gang
   that no longer waits: dropped;
3. (simulated) active pods bound to a node that does not exist: failed ("node missing"), and
   their gangs' restart policies run;
4. gangs holding some but fewer than minMember pods, not "after gang" (satisfied, and
   RestartFailedOnly or with bare pods, whose missing members only their user replaces) nor
   fallen back, with nothing in flight: requeued whole;
5. gang counters and phases that disagree with their pods: recounted (``gangs_refresh``).

It takes the scheduler lease like a cycle, so it never races one; with the lease busy it
does nothing and says so (the next run catches up).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from scheduler_core.cluster import ClusterBackend, get_backend
from scheduler_core.engine.model import GangPhase
from scheduler_core.models import (
    BindIntent,
    BindJournal,
    BindState,
    Gang,
    GangEventKind,
    IntentState,
    Member,
    Node,
    RestartPolicy,
)
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES, MemberPhase

from . import lifecycle
from .history import events_record_many
from .journal import journal_execute, journal_pending
from .lease import default_holder, fenced, lease_held

logger = logging.getLogger(__name__)

NODE_MISSING = "node missing (reconciled)"
_WAITING = (
    GangPhase.PENDING.value,
    GangPhase.SCHEDULING.value,
    GangPhase.RUNNING.value,
    GangPhase.UNKNOWN.value,
)
_COUNTERS = ("phase", "running", "succeeded", "failed")


@dataclass(frozen=True)
class Repair:
    """One repair: what (``kind``), on which pod or gang (``subject``), and how."""

    kind: str
    subject: str
    detail: str
    gang_id: int | None = None


class LeaseBusy(Exception):
    """A cycle holds the scheduler lease; reconcile later."""


def reconcile(
    backend: ClusterBackend | None = None, *, holder: str = "", now: datetime | None = None
) -> list[Repair]:
    """Repair drift (see the module docstring); the repairs made. LeaseBusy if a cycle runs."""
    backend = backend or get_backend()
    now = now or timezone.now()
    with lease_held(holder=holder or default_holder(), ttl_s=settings.GANGSCHED_LEASE_TTL_S) as lease:
        if lease is None:
            raise LeaseBusy("another worker holds the scheduler lease")
        repairs = _journal(lease, backend, now)
        with fenced(lease):
            repairs += _reservations(now)
            if backend.name == "simulated":
                repairs += _lost_nodes(now)
            repairs += _partial_gangs(backend, now)
            repairs += _status(now)
            _record(repairs)
        return repairs


def _journal(lease, backend: ClusterBackend, now: datetime) -> list[Repair]:
    stale = now - timedelta(seconds=settings.GANGSCHED_LEASE_TTL_S)
    rows = journal_pending(created_before=stale)
    if not rows:
        return []
    states: dict[int, str] = {}
    journal_execute(lease=lease, backend=backend, rows=rows, outcomes=states)
    return [
        Repair(
            "journal",
            f"{row.namespace}/{row.name}",
            f"bind to {row.node} left pending by a cycle that is gone: {states[row.member_id]}",
            row.gang_id,
        )
        for row in rows
    ]


def _reservations(now: datetime) -> list[Repair]:
    nodes = Node.objects.values("name")
    wrong = Member.objects.filter(reserved_node__isnull=False).filter(
        ~Q(reserved_node__in=nodes)
        | ~Q(phase=MemberPhase.PENDING)
        | Q(node__isnull=False)
        | (Q(gang__isnull=False) & ~Q(gang__phase__in=_WAITING))
    )
    rows = list(wrong.values_list("pk", "namespace", "name", "reserved_node", "gang_id"))
    Member.objects.filter(pk__in=[row[0] for row in rows]).update(reserved_node=None, updated=now)
    return [
        Repair("reservation", f"{namespace}/{name}", f"reservation on {node} dropped", gang_id)
        for _, namespace, name, node, gang_id in rows
    ]


def _lost_nodes(now: datetime) -> list[Repair]:
    lost = Member.objects.filter(phase__in=ACTIVE_MEMBER_PHASES, node__isnull=False).exclude(
        node__in=Node.objects.values("name")
    )
    rows = list(lost.values_list("namespace", "name", "node", "gang_id"))
    if not rows:
        return []
    _, reasons = lifecycle.members_fail(lost, reason=NODE_MISSING, now=now)
    lifecycle.failures_handle(now=now, reasons=reasons)
    return [
        Repair("lost-node", f"{namespace}/{name}", f"bound to {node}, which does not exist: failed", gang_id)
        for namespace, name, node, gang_id in rows
    ]


def _partial_gangs(backend: ClusterBackend, now: datetime) -> list[Repair]:
    held = Counter(
        Member.objects.filter(
            Q(phase__in=ACTIVE_MEMBER_PHASES, node__isnull=False) | Q(phase=MemberPhase.SUCCEEDED),
            gang__isnull=False,
        ).values_list("gang_id", flat=True)
    )
    in_flight = set(BindJournal.objects.filter(state=BindState.PENDING).values_list("gang_id", flat=True))
    in_flight |= set(BindIntent.objects.filter(state=IntentState.PENDING).values_list("gang_id", flat=True))
    bare = set(Member.objects.filter(gang_id__in=list(held), owner="").values_list("gang_id", flat=True))
    repairs = []
    for gang in Gang.objects.filter(pk__in=list(held), phase__in=_WAITING, fallen_back=False):
        # A satisfied gang of bare pods below minMember lost members that nobody recreates:
        # Koordinator's "after gang" keeps it running, and so does this sweep.
        after_gang = gang.satisfied and (
            gang.restart_policy == RestartPolicy.RESTART_FAILED_ONLY or gang.pk in bare
        )
        if gang.pk in in_flight or after_gang or held[gang.pk] >= gang.min_member:
            continue
        reason = f"{held[gang.pk]} of minMember {gang.min_member} pods held: partially bound, requeued whole"
        lifecycle.gang_requeue(gang=gang, reason=f"reconciled: {reason}", backend=backend, now=now)
        repairs.append(Repair("partial-gang", gang.key, reason, gang.pk))
    return repairs


def _status(now: datetime) -> list[Repair]:
    def counters() -> dict[int, tuple]:
        return {row[0]: row[1:] for row in Gang.objects.values_list("pk", *_COUNTERS)}

    before = counters()
    lifecycle.gangs_refresh(now=now)
    gangs = Gang.objects.values_list("pk", "namespace", "name")
    keys = {pk: f"{namespace}/{name}" for pk, namespace, name in gangs}
    repairs = []
    for pk, after in counters().items():
        if pk in before and before[pk] != after:
            changed = zip(_COUNTERS, before[pk], after, strict=True)
            detail = ", ".join(f"{name} {old} -> {new}" for name, old, new in changed if old != new)
            repairs.append(Repair("status", keys[pk], detail, pk))
    return repairs


def _record(repairs: list[Repair]) -> None:
    for repair in repairs:
        logger.warning("reconciled %s %s: %s", repair.kind, repair.subject, repair.detail)
    events_record_many(
        {
            "gang_id": repair.gang_id,
            "kind": GangEventKind.RECONCILED,
            "reason": f"{repair.kind} {repair.subject}: {repair.detail}",
            "details": {"repair": repair.kind, "subject": repair.subject},
        }
        for repair in repairs
        if repair.gang_id is not None
    )
