"""Append-only records of what the scheduler did. Rows are inserted, never edited (see
AppendOnlyModel), except for bookkeeping columns named below; a correction is a new row."""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from .base import AppendOnlyModel, choices_constraint
from .gangs import Gang, Member


class SchedulingCycle(AppendOnlyModel):
    """One run of the engine and the application of its decisions, written when it ends."""

    started_at = models.DateTimeField(default=timezone.now)
    duration_s = models.FloatField(default=0.0)
    pods_considered = models.PositiveIntegerField(default=0)
    pods_bound = models.PositiveIntegerField(default=0)
    units_parked = models.PositiveIntegerField(
        default=0,
        help_text="Units the engine's requeue book did not try: they failed behind the same head "
        "and nothing that could let them place happened since (CycleResult.parked).",
    )
    # Fencing token: the scheduler lease's epoch when the cycle ran. A bind journal entry from an
    # older epoch than the current lease's must not be applied (its scheduler lost the lease).
    epoch = models.BigIntegerField(default=0)
    timings = models.JSONField(default=dict, blank=True, help_text="Seconds per engine action.")
    worker = models.CharField(max_length=255, blank=True, help_text="Celery worker hostname that ran it.")
    pending_demand = models.JSONField(
        default=dict,
        blank=True,
        help_text="Summed requests per resource (canonical integers) of the pods the cycle left "
        "pending: the engine's CycleResult.pending_demand.",
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["started_at"], name="cycle_started_at_idx")]

    def __str__(self) -> str:
        return f"cycle {self.pk} at {self.started_at:%Y-%m-%d %H:%M:%S}"


class GangEventKind(models.TextChoices):
    CREATED = "created"
    CONFIGURED = "configured"  # an existing gang changed by a declaration: who and what, in details
    RESERVED = "reserved"
    SATISFIED = "satisfied"
    BOUND = "bound"
    TIMED_OUT = "timed_out"
    RETRIED = "retried"
    KILLED = "killed"
    FAILED = "failed"
    FINISHED = "finished"
    RELEASED = "released"
    PREEMPTED = "preempted"
    RESTARTED = "restarted"
    FELL_BACK = "fell_back"
    EXPLAINED = "explained"
    RECONCILED = "reconciled"  # drift repaired by services/reconcile.py


class GangEvent(AppendOnlyModel):
    """A gang's history, one row per thing that happened to it.

    Also the outbox for live updates: services insert events in the same transaction as the
    change they describe, and the publisher (scheduler_core/events.py) sends rows whose
    ``published_at`` is empty to the websocket layer, then sets it with a bulk UPDATE, the only
    column written after insert.
    """

    gang = models.ForeignKey(Gang, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=16, choices=GangEventKind.choices)
    reason = models.TextField(blank=True)
    details = models.JSONField(default=dict, blank=True)
    cycle = models.ForeignKey(
        SchedulingCycle, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    created = models.DateTimeField(default=timezone.now, db_index=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created", "id"]
        constraints = [choices_constraint("kind", GangEventKind.choices, "gangevent_kind_valid")]
        indexes = [
            models.Index(fields=["gang", "created"], name="gangevent_gang_created_idx"),
            # The publisher (scheduler_core/events.py) polls "unpublished, oldest first"; once
            # published a row leaves this index, so it stays as small as the backlog.
            models.Index(
                fields=["created"], condition=Q(published_at__isnull=True), name="gangevent_unpublished_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.gang_id}: {self.kind}"


class BindState(models.TextChoices):
    PENDING = "pending"  # decided, not yet confirmed by the cluster
    BOUND = "bound"
    FAILED = "failed"
    ROLLED_BACK = "rolled_back"  # a sibling's bind failed, so this one was undone (Strict gangs)


class BindJournal(models.Model):
    """A placement the scheduler decided, written *before* the bind call is made.

    After a crash, pending entries say which binds may or may not have happened, so recovery
    can check them against the cluster instead of guessing. ``state``, ``error`` and
    ``updated`` move forward as the bind goes; the other columns never change.
    """

    cycle = models.ForeignKey(
        SchedulingCycle, null=True, blank=True, on_delete=models.SET_NULL, related_name="binds"
    )
    epoch = models.BigIntegerField(help_text="The scheduler lease epoch that decided it (fencing).")
    gang = models.ForeignKey(Gang, null=True, blank=True, on_delete=models.SET_NULL, related_name="binds")
    member = models.ForeignKey(Member, on_delete=models.CASCADE, related_name="binds")
    node = models.CharField(max_length=253)
    state = models.CharField(max_length=16, choices=BindState.choices, default=BindState.PENDING)
    error = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created", "id"]
        constraints = [
            choices_constraint("state", BindState.choices, "bindjournal_state_valid"),
            # A pod is bound to one node: two undecided binds for it would be a double placement.
            models.UniqueConstraint(
                fields=["member"],
                condition=Q(state=BindState.PENDING),
                name="bindjournal_one_pending_per_member",
            ),
        ]
        indexes = [
            # Recovery after a crash looks for the pending entries.
            models.Index(
                fields=["created"], condition=Q(state=BindState.PENDING), name="bindjournal_pending_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.member_id} -> {self.node} ({self.state})"


class IntentState(models.TextChoices):
    PENDING = "pending"  # decided, the cluster's answers not yet written down
    SETTLED = "settled"  # every bind answered: each pod's outcome is its BindJournal row
    ROLLED_BACK = "rolled_back"  # the gang was requeued whole before its binds were made


class BindIntent(models.Model):
    """The binds one cycle decided for one gang (or for its pods scheduled alone), written in the
    cycle's fenced transaction *before* any bind call: the bind journal's crash record.

    One row per gang and cycle instead of one per pod: a cycle that binds 10,000 pods writes 200
    of these, and each pod's ``BindJournal`` row is written once, when the cluster has answered
    (bound or failed), in the same transaction that settles the intent. A pending intent after a
    crash says which binds may or may not have happened; recovery binds them again (a bind of a
    pod already on that node succeeds) and writes their rows. ``state``, ``error`` and
    ``updated`` move forward; the other columns never change.
    """

    cycle = models.ForeignKey(
        SchedulingCycle, null=True, blank=True, on_delete=models.SET_NULL, related_name="intents"
    )
    epoch = models.BigIntegerField(help_text="The scheduler lease epoch that decided it (fencing).")
    gang = models.ForeignKey(Gang, null=True, blank=True, on_delete=models.SET_NULL, related_name="intents")
    member_ids = ArrayField(models.BigIntegerField(), help_text="Member ids, in bind order.")
    nodes = ArrayField(models.CharField(max_length=253), help_text="Each member's node, by position.")
    state = models.CharField(max_length=16, choices=IntentState.choices, default=IntentState.PENDING)
    error = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created", "id"]
        constraints = [
            choices_constraint("state", IntentState.choices, "bindintent_state_valid"),
        ]
        indexes = [
            # Recovery after a crash looks for the pending intents.
            models.Index(
                fields=["created"], condition=Q(state=IntentState.PENDING), name="bindintent_pending_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"cycle {self.cycle_id}, gang {self.gang_id}: {len(self.member_ids)} binds ({self.state})"
