"""What happens to a gang when its pods fail, and how its status follows its pods.

Restart policies follow kube-batch's QueueJob (``Gang.restart_policy``):

- ``RestartGangWhenBelowMin`` (default): if fewer than min_member members are still running (or
  done), a gang that runs on fewer is useless (a training job with a dead worker), so all its
  members are recreated and the gang is requeued whole; otherwise only the failed ones are
  recreated, and the engine places them as ordinary pods since the gang stays satisfied.
- ``RestartFailedOnly``: only the failed members are recreated.
- ``Never``: the gang is Failed and its remaining pods are deleted through the backend.

A Volcano Job's policies come first (``Gang.failure_policy`` for PodFailed,
``Gang.eviction_policy`` for PodEvicted, i.e. pods deleted through the backend): RestartJob
requeues the whole gang and counts it in ``retries``; once ``max_retry`` restarts were made the
next failure makes the gang Failed ("maxRetry N exceeded"); AbortJob makes it Failed and
TerminateJob Killed, their pods deleted.

A gang that is not running (never satisfied, or preempted and requeued whole by the scheduler)
has nothing to keep or fail: its failed members are simply recreated, whatever the policy.

*Recreating* a pod means resetting its Member row to a fresh pending pod (no node, no
reservation, no start or end time). The simulated cluster has no controller to create a new pod
object; on Kubernetes the job's controller does that and the watch brings the new pod in.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime

from django.db import connection, transaction
from django.db.models import BooleanField, Count, ExpressionWrapper, F, Func, Q, QuerySet, Value
from django.utils import timezone

from scheduler_core.cluster import ClusterError, get_backend
from scheduler_core.cluster.simulated import DELETED_REASON, json_merge
from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, GangEventKind, Member, MemberPhase, RestartPolicy
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES, FailureAction
from scheduler_core.models.history import BindIntent, BindJournal, BindState, IntentState

from .history import event_record, events_record_many
from .runtimes import estimates_learn

logger = logging.getLogger(__name__)

#: Why the kubelet (or an operator, or a lost node) failed a pod, kept on its Member row.
FAILED_REASON = "gangsched.io/failed-reason"

#: Gang phases after which failures change nothing: the gang is history.
DONE_PHASES = (GangPhase.FINISHED.value, GangPhase.FAILED.value, GangPhase.KILLED.value)
_STARTABLE = (GangPhase.PENDING.value, GangPhase.SCHEDULING.value)
_ACTIVE_GANG = (*_STARTABLE, GangPhase.RUNNING.value, GangPhase.UNKNOWN.value)
_GANG_FIELDS = (
    *("id", "phase", "min_member", "total_number"),
    *("running", "succeeded", "failed", "schedule_start_time"),
)
_IS_BOUND = ExpressionWrapper(Q(node__isnull=False), output_field=BooleanField())


class JSONRemoveKeys(Func):
    """``column - keys::text[]`` on jsonb: drop keys from an object column inside one UPDATE.

    The cast matters: a list parameter arrives untyped, and ``jsonb - text`` would then remove
    the one key spelled like the whole array.
    """

    arg_joiner = " - "
    template = "(%(expressions)s::text[])"


def members_fail(members: QuerySet[Member], *, reason: str, now: datetime) -> tuple[int, dict[int, str]]:
    """Mark the active pods of ``members`` Failed (the kubelet's view: the container died).

    Returns how many failed, and {gang id: reason} for the gangs that lost a member, to hand to
    ``failures_handle``.
    """
    rows = list(members.filter(phase__in=ACTIVE_MEMBER_PHASES).values_list("id", "gang_id"))
    if rows:
        Member.objects.filter(id__in=[pk for pk, _ in rows]).update(
            phase=MemberPhase.FAILED,
            finished_at=now,
            reserved_node=None,
            annotations=json_merge("annotations", {FAILED_REASON: reason}),
            updated=now,
        )
        logger.info("%d pods failed: %s", len(rows), reason)
    return len(rows), {gang_id: reason for _, gang_id in rows if gang_id is not None}


def members_recreate(member_ids: Iterable[int], *, now: datetime) -> int:
    """Reset pods to fresh pending ones (see the module docstring), keeping their spec."""
    return Member.objects.filter(id__in=list(member_ids)).update(
        phase=MemberPhase.PENDING,
        node=None,
        reserved_node=None,
        started_at=None,
        finished_at=None,
        terminating=False,
        annotations=JSONRemoveKeys(F("annotations"), Value([FAILED_REASON, DELETED_REASON])),
        updated=now,
    )


def failures_handle(*, now: datetime | None = None, reasons: Mapping[int, str] | None = None) -> list[int]:
    """Apply each active gang's restart policy to its failed members; the ids of the gangs handled.

    An active gang never keeps a failed member (it is recreated, or the gang fails), so this
    sweep finds its work by looking, and running it twice does nothing the second time. It
    also picks up pods deleted through the backend (evictions) whatever code deleted them.
    """
    now = now or timezone.now()
    reasons = reasons or {}
    with transaction.atomic():
        # Two steps: FOR UPDATE cannot be combined with the DISTINCT the join needs.
        ids = set(
            Gang.objects.filter(members__phase=MemberPhase.FAILED)
            .exclude(phase__in=DONE_PHASES)
            .values_list("id", flat=True)
        )
        gangs = Gang.objects.select_for_update().filter(id__in=ids).exclude(phase__in=DONE_PHASES)
        return [gang.id for gang in gangs.order_by("id") if _handle(gang, reasons.get(gang.id), now)]


def _handle(gang: Gang, reason: str | None, now: datetime) -> bool:
    members = list(gang.members.select_for_update().order_by("id"))
    failed = [m for m in members if m.phase == MemberPhase.FAILED]
    if not failed:
        return False
    reason = reason or _reason_of(failed)
    remaining = sum(
        1
        for m in members
        if m.phase == MemberPhase.SUCCEEDED or (m.phase in ACTIVE_MEMBER_PHASES and m.node is not None)
    )
    running = gang.satisfied or gang.phase == GangPhase.RUNNING.value
    names = [m.name for m in failed]
    action = _failure_action(gang, failed) if running else ""
    if action:
        _action_take(gang, members, action, reason, names, now)
    elif running and gang.restart_policy == RestartPolicy.NEVER:
        _gang_fail(gang, members, f"a member failed ({reason}), restart policy Never", now)
    elif (
        running
        and gang.restart_policy == RestartPolicy.RESTART_GANG_WHEN_BELOW_MIN
        and remaining < gang.min_member
    ):
        gang_requeue(
            gang=gang,
            reason=f"{remaining}/{gang.min_member} members left ({reason}): the whole gang is restarted",
            details={"scope": "gang", "failed": names},
            now=now,
        )
    else:
        members_recreate([m.id for m in failed], now=now)
        event_record(
            gang=gang,
            kind=GangEventKind.RESTARTED,
            reason=f"{len(failed)} failed member(s) recreated ({reason})",
            details={"scope": "failed", "failed": names},
        )
        logger.info(
            "gang %s: %d failed members recreated: %s",
            gang.key,
            len(failed),
            reason,
            extra={"gang": gang.key},
        )
    return True


@transaction.atomic
def gang_requeue(
    *,
    gang: Gang,
    reason: str,
    kind: GangEventKind = GangEventKind.RESTARTED,
    details: Mapping | None = None,
    backend=None,
    now: datetime | None = None,
) -> int:
    """Stop every pod of ``gang`` and queue the gang again whole, from Pending; returns how many.

    The one place a whole gang restarts: the restart policy below minMember, a preemption, and
    the bind journal's rollback of a gang that ended below minMember all come here. Pods still
    on a node are deleted through the backend first (a failed delete is logged: the pod is
    recreated pending anyway, which on the simulated cluster frees its node).
    """
    now = now or timezone.now()
    backend = backend or get_backend()
    members = list(gang.members.select_for_update().order_by("id"))
    for member in members:
        if member.phase in ACTIVE_MEMBER_PHASES and member.node:
            try:
                backend.delete_pod(member.namespace, member.name, reason)
            except ClusterError as error:
                logger.warning(
                    "requeueing %s: %s could not be deleted: %s",
                    gang.key,
                    member.key,
                    error,
                    extra={"gang": gang.key},
                )
    members_recreate([m.id for m in members], now=now)
    # The placement an earlier cycle journaled for these pods is void now: recovering it later
    # would bind a requeued gang's pods (some of them, if a bind failed) behind the engine's back.
    BindIntent.objects.filter(gang=gang, state=IntentState.PENDING).update(
        state=IntentState.ROLLED_BACK, error=f"gang requeued: {reason}", updated=now
    )
    BindJournal.objects.filter(member__gang=gang, state=BindState.PENDING).update(
        state=BindState.ROLLED_BACK, error=f"gang requeued: {reason}"
    )
    Gang.objects.filter(id=gang.id).update(
        phase=GangPhase.PENDING.value,
        satisfied=False,
        wait_started=None,
        fallen_back=False,
        running=0,
        succeeded=0,
        failed=0,
        reason="",
        message="",
        details={},
        updated=now,
    )
    event_record(gang=gang, kind=kind, reason=reason, details={"members": len(members), **(details or {})})
    logger.info("gang %s requeued whole: %s", gang.key, reason, extra={"gang": gang.key})
    return len(members)


def _failure_action(gang: Gang, failed: list[Member]) -> str:
    """A Volcano Job's action for these failures: PodEvicted's when every failed pod was deleted
    through the backend (an eviction), else PodFailed's; blank: the restart policy decides."""
    evicted = all(DELETED_REASON in m.annotations and FAILED_REASON not in m.annotations for m in failed)
    return gang.eviction_policy if evicted else gang.failure_policy


def _action_take(gang: Gang, members: list[Member], action: str, reason: str, names: list[str], now) -> None:
    """RestartJob requeues the whole gang (``retries`` + 1), or fails it once ``max_retry``
    restarts were made; AbortJob fails it, TerminateJob kills it (pods deleted either way)."""
    if action == FailureAction.RESTART_JOB:
        if gang.max_retry is not None and gang.retries >= gang.max_retry:
            _gang_fail(gang, members, f"maxRetry {gang.max_retry} exceeded ({reason})", now)
            return
        gang_requeue(
            gang=gang,
            reason=f"RestartJob ({reason}): restart {gang.retries + 1}"
            + (f" of {gang.max_retry}" if gang.max_retry is not None else ""),
            details={"scope": "gang", "failed": names, "action": action},
            now=now,
        )
        Gang.objects.filter(id=gang.id).update(retries=F("retries") + 1)
    elif action == FailureAction.ABORT_JOB:
        _gang_fail(gang, members, f"a member failed ({reason}): AbortJob", now)
    else:
        _gang_fail(gang, members, f"a member failed ({reason}): TerminateJob", now, phase=GangPhase.KILLED)


def _gang_fail(
    gang: Gang, members: list[Member], reason: str, now: datetime, *, phase: GangPhase = GangPhase.FAILED
) -> None:
    """The gang is Failed (restart policy Never, a Volcano action; or Killed) and whatever of it
    still runs is deleted; ``reason`` becomes its message and the event's reason."""
    Gang.objects.filter(id=gang.id).update(phase=phase.value, satisfied=False, message=reason, updated=now)
    backend = get_backend()
    for member in members:
        if member.phase in ACTIVE_MEMBER_PHASES:
            try:
                backend.delete_pod(member.namespace, member.name, f"gang {gang.key} failed")
            except ClusterError as error:
                # It runs to its end instead; the gang is Failed either way.
                logger.warning(
                    "gang %s failed but %s could not be deleted: %s",
                    gang.key,
                    member.key,
                    error,
                    extra={"gang": gang.key},
                )
    kind = GangEventKind.KILLED if phase == GangPhase.KILLED else GangEventKind.FAILED
    event_record(gang=gang, kind=kind, reason=reason)
    logger.info("gang %s %s: %s", gang.key, phase.value.lower(), reason, extra={"gang": gang.key})


def _reason_of(failed: list[Member]) -> str:
    for member in failed:
        for key in (FAILED_REASON, DELETED_REASON):
            if member.annotations.get(key):
                return member.annotations[key]
    return "a member failed"


# ---------------------------------------------------------------- status follows the pods


def gangs_refresh(*, now: datetime | None = None, gang_ids: Iterable[int] = ()) -> int:
    """Recount each gang's pods and move its phase as scheduler-plugins' PodGroup controller does.

    Every gang not done is looked at (plus ``gang_ids``, e.g. one that just Failed). Pending or
    Scheduling becomes Running once min_member run (or already finished); an active gang whose
    members have all succeeded becomes Finished, with a ``finished`` event.
    A gang is written only when something changed, with a conditional UPDATE on its phase so a
    scheduling cycle that moved it meanwhile wins (the next refresh catches up).
    """
    now = now or timezone.now()
    gangs = list(
        Gang.objects.filter(~Q(phase__in=DONE_PHASES) | Q(id__in=list(gang_ids))).values(*_GANG_FIELDS)
    )
    if not gangs:
        return 0
    counts: defaultdict[int, Counter] = defaultdict(Counter)
    for row in (
        Member.objects.filter(gang_id__in=[g["id"] for g in gangs])
        .values("gang_id", "phase", bound=_IS_BOUND)
        .annotate(n=Count("id"))
    ):
        counts[row["gang_id"]][row["phase"]] += row["n"]
        if row["bound"] and row["phase"] in ACTIVE_MEMBER_PHASES:
            counts[row["gang_id"]]["bound"] += row["n"]
    changes = {}
    for gang in gangs:
        fields = _refreshed(gang, counts[gang["id"]], now)
        if fields:
            changes[gang["id"]] = (gang, fields)
    written = _gangs_write(changes, now)
    events_record_many(event for pk in written for event in _events(*changes[pk]))
    # The next run of the same job is planned with this one's runtime.
    estimates_learn(pk for pk in written if changes[pk][1].get("phase") == GangPhase.FINISHED.value)
    return len(written)


def _gangs_write(changes: dict[int, tuple[dict, dict]], now: datetime) -> list[int]:
    """One conditional UPDATE for all changed gangs (a tick after a burst touches thousands);
    a row whose phase moved since it was read is left alone. Returns the ids written."""
    if not changes:
        return []
    names = ("id", "old", "phase", "running", "succeeded", "failed", "start")
    columns: dict[str, list] = {name: [] for name in names}
    for pk, (gang, fields) in changes.items():
        merged = {**gang, **fields}
        columns["id"].append(pk)
        columns["old"].append(gang["phase"])
        columns["start"].append(fields.get("schedule_start_time"))
        for name in ("phase", "running", "succeeded", "failed"):
            columns[name].append(merged[name])
    sql = f"""
        UPDATE {Gang._meta.db_table} AS g
           SET phase = v.phase, running = v.running, succeeded = v.succeeded, failed = v.failed,
               schedule_start_time = COALESCE(g.schedule_start_time, v.start), updated = %s
          FROM (SELECT unnest(%s::bigint[]) AS id, unnest(%s::text[]) AS old, unnest(%s::text[]) AS phase,
                       unnest(%s::integer[]) AS running, unnest(%s::integer[]) AS succeeded,
                       unnest(%s::integer[]) AS failed, unnest(%s::timestamptz[]) AS start) AS v
         WHERE g.id = v.id AND g.phase = v.old
     RETURNING g.id
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [now, *columns.values()])
        return [row[0] for row in cursor.fetchall()]


def _refreshed(gang: dict, count: Counter, now: datetime) -> dict:
    """The fields of ``gang`` that its pods' ``count`` changes."""
    running, succeeded = count[MemberPhase.RUNNING], count[MemberPhase.SUCCEEDED]
    failed = count[MemberPhase.FAILED]
    fields = {}
    if (gang["running"], gang["succeeded"], gang["failed"]) != (running, succeeded, failed):
        fields.update(running=running, succeeded=succeeded, failed=failed)
    if gang["schedule_start_time"] is None and (count["bound"] or running or succeeded):
        fields["schedule_start_time"] = now
    members = sum(count[p] for p in MemberPhase.values)
    expected = gang["total_number"] or 0
    if gang["phase"] in _ACTIVE_GANG and members and succeeded == members and members >= expected:
        fields["phase"] = GangPhase.FINISHED.value
    elif gang["phase"] in _STARTABLE and running + succeeded >= gang["min_member"]:
        fields["phase"] = GangPhase.RUNNING.value
    return fields


def _events(gang: dict, fields: dict) -> list[dict]:
    # Binds already have their history (the bind journal's ``bound`` events); the kubelet adds
    # how the gang ended.
    if fields.get("phase") == GangPhase.FINISHED.value:
        return [{"gang_id": gang["id"], "kind": GangEventKind.FINISHED, "reason": "all members succeeded"}]
    return []
