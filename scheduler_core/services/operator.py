"""The operator's actions on a gang: retry and kill. The API, the admin and the pages call these.

Each is a conditional UPDATE on the gang's phase (healthchecks' "id=? AND status=<old>"): of ten
concurrent presses exactly one changes the row, records one history event and touches the pods;
the other nine find the phase already moved and get a GangActionError saying so.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import F, Value
from django.utils import timezone

from scheduler_core.cluster import ClusterError, get_backend
from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, GangEventKind, Member, MemberPhase
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES
from scheduler_core.services.cycle import TIMEOUT_ANNOTATION
from scheduler_core.services.history import event_record
from scheduler_core.services.lifecycle import JSONRemoveKeys, members_recreate

# Up a layer on purpose: cycle_trigger lives in tasks.py beside the Celery task it queues
# (schedule); tasks.py imports the services, so the services ask for a cycle through it.
from scheduler_core.tasks import cycle_trigger

logger = logging.getLogger(__name__)

RETRYABLE = (GangPhase.TIMED_OUT.value, GangPhase.FAILED.value)
KILLABLE = (
    GangPhase.PENDING.value,
    GangPhase.SCHEDULING.value,
    GangPhase.RUNNING.value,
    GangPhase.UNKNOWN.value,
    GangPhase.TIMED_OUT.value,
    GangPhase.FAILED.value,
)


class GangActionError(ValueError):
    """An action that does not apply to the gang in its current phase."""


@transaction.atomic
def gang_retry(*, gang: Gang, by: str) -> Gang:
    """Send a TimedOut or Failed gang back to the queue, whole, with its timeout clock reset."""
    now = timezone.now()
    changed = Gang.objects.filter(pk=gang.pk, phase__in=RETRYABLE).update(
        phase=GangPhase.PENDING.value,
        satisfied=False,
        wait_started=None,
        fallen_back=False,
        reason="",
        message="",
        details={},
        updated=now,
    )
    if not changed:
        gang.refresh_from_db(fields=["phase"])
        raise GangActionError(
            f"gang {gang.key} is {gang.phase}: only TimedOut or Failed gangs can be retried"
        )
    members = Member.objects.filter(gang=gang).exclude(phase=MemberPhase.SUCCEEDED)
    members_recreate(members.filter(phase=MemberPhase.FAILED).values_list("pk", flat=True), now=now)
    members.update(annotations=JSONRemoveKeys(F("annotations"), Value([TIMEOUT_ANNOTATION])))
    event_record(gang=gang, kind=GangEventKind.RETRIED, reason=f"retried by {by}", details={"by": by})
    logger.info("gang %s retried by %s", gang.key, by, extra={"gang": gang.key, "by": by})
    _wake_scheduler()
    gang.refresh_from_db()
    return gang


@transaction.atomic
def gang_kill(*, gang: Gang, by: str, reason: str = "") -> Gang:
    """Stop a gang for good: its pods are deleted and it is never scheduled again."""
    now = timezone.now()
    changed = Gang.objects.filter(pk=gang.pk, phase__in=KILLABLE).update(
        phase=GangPhase.KILLED.value, satisfied=False, updated=now, reason="", message="", details={}
    )  # nothing is placed any more: the last "why it is not placed" no longer holds
    if not changed:
        gang.refresh_from_db(fields=["phase"])
        raise GangActionError(f"gang {gang.key} is {gang.phase}: it cannot be killed")
    why = f"killed by {by}" + (f": {reason}" if reason else "")
    backend = get_backend()
    active = list(Member.objects.select_for_update().filter(gang=gang, phase__in=ACTIVE_MEMBER_PHASES))
    for member in active:
        if member.node:
            try:
                backend.delete_pod(member.namespace, member.name, why)
            except ClusterError as error:
                logger.warning(
                    "killing %s: %s could not be deleted: %s",
                    gang.key,
                    member.key,
                    error,
                    extra={"gang": gang.key},
                )
    # Whatever was not deleted (pending pods, failed deletes) is marked failed here, so nothing
    # of a killed gang holds or waits for capacity.
    Member.objects.filter(pk__in=[m.pk for m in active], phase__in=ACTIVE_MEMBER_PHASES).update(
        phase=MemberPhase.FAILED, reserved_node=None, finished_at=now, updated=now
    )
    event_record(gang=gang, kind=GangEventKind.KILLED, reason=why, details={"pods": len(active), "by": by})
    logger.info("gang %s %s", gang.key, why, extra={"gang": gang.key, "by": by})
    _wake_scheduler()
    gang.refresh_from_db()
    return gang


def _wake_scheduler() -> None:
    transaction.on_commit(cycle_trigger)
