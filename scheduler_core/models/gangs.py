from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from scheduler_core.engine.decisions import Reason
from scheduler_core.engine.model import GangMode, GangPhase, MatchPolicy, Placement, TimeoutStyle
from scheduler_core.engine.runtimes import DECLARED, SOURCES, Estimate, overrun
from scheduler_core.validators import (
    validate_affinity,
    validate_gang_keys,
    validate_resource_map,
    validate_string_map,
    validate_tolerations,
)

from .base import choices_constraint, enum_choices

PHASE_CHOICES = enum_choices(GangPhase)
MODE_CHOICES = enum_choices(GangMode)
STYLE_CHOICES = enum_choices(TimeoutStyle)
PLACEMENT_CHOICES = enum_choices(Placement)
MATCH_POLICY_CHOICES = enum_choices(MatchPolicy)
REASON_CHOICES = enum_choices(Reason)


class RestartPolicy(models.TextChoices):
    """What happens when a running gang loses members (failed or evicted pods)."""

    RESTART_GANG_WHEN_BELOW_MIN = "RestartGangWhenBelowMin"  # below min_member: restart them all
    RESTART_FAILED_ONLY = "RestartFailedOnly"  # replace the failed pods, keep the others running
    NEVER = "Never"  # the gang is Failed


class FailureAction(models.TextChoices):
    """A Volcano Job's action on PodFailed / PodEvicted (``spec.policies``); blank: the restart
    policy decides (services/lifecycle.py)."""

    RESTART_JOB = "RestartJob"  # the whole gang is requeued, at most max_retry times
    ABORT_JOB = "AbortJob"  # the gang is Failed and its pods deleted
    TERMINATE_JOB = "TerminateJob"  # the gang is Killed and its pods deleted


class MemberPhase(models.TextChoices):
    """A pod's phase, as Kubernetes reports it (Unknown is reported as the last known phase)."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


#: Member phases whose pods hold (or will hold) capacity: the pods a snapshot carries.
ACTIVE_MEMBER_PHASES = (MemberPhase.PENDING, MemberPhase.RUNNING)

#: Gang phases of a gang not placed yet (with ``satisfied`` false: see ``waiting_q``).
WAITING_PHASES = (GangPhase.PENDING.value, GangPhase.SCHEDULING.value)


def waiting_q(prefix: str = "") -> Q:
    """Gangs waiting to be placed: Pending, or Scheduling and not satisfied yet. A satisfied gang
    stays Scheduling until its pods run, but it holds its nodes and waits for nothing from its
    queue (Kueue counts such a workload admitted, not pending), so queue lanes, waiting counts and
    the pending-gangs metric leave it out. ``prefix``: the path to the gang, e.g. ``"gang__"``."""
    return Q(**{f"{prefix}phase__in": WAITING_PHASES, f"{prefix}satisfied": False})


class GangGroup(models.Model):
    """Gangs that must all be satisfied together (Koordinator's gang-group annotation).

    ``members`` lists every gang the group expects, as ``namespace/name`` keys, including gangs
    not submitted yet: a listed gang with no row holds the whole group back. ``Gang.group`` points
    the submitted ones here; services keep the two in step.
    """

    key = models.CharField(max_length=512, unique=True)
    members = models.JSONField(default=list, validators=[validate_gang_keys])
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key


class Gang(models.Model):
    """A set of pods placed all together or not at all, with its scheduling state.

    The fields the engine reads mirror ``scheduler_core.engine.model.Gang``; the rest (counts,
    explanation, restart policy, declaration) serve services, pages and the API.
    """

    namespace = models.CharField(max_length=63)
    name = models.CharField(max_length=253)

    # What was asked for.
    min_member = models.PositiveIntegerField(help_text="Members that must be placed together.")
    total_number = models.PositiveIntegerField(null=True, blank=True, help_text="Members expected in all.")
    min_resources = models.JSONField(default=dict, blank=True, validators=[validate_resource_map])
    mode = models.CharField(max_length=16, choices=MODE_CHOICES, default=GangMode.STRICT.value)
    style = models.CharField(max_length=8, choices=STYLE_CHOICES, default=TimeoutStyle.HARD.value)
    wait_seconds = models.FloatField(null=True, blank=True, help_text="Scheduling timeout; empty: forever.")
    group = models.ForeignKey(
        GangGroup, null=True, blank=True, on_delete=models.SET_NULL, related_name="gangs"
    )
    priority = models.IntegerField(null=True, blank=True, help_text="Empty: the highest of its pods'.")
    placement = models.CharField(max_length=16, choices=PLACEMENT_CHOICES, default=Placement.BINPACK.value)
    preemptible = models.BooleanField(default=True)
    queue = models.CharField(max_length=253, default="default")  # a Queue's name, or a LocalQueue's
    restart_policy = models.CharField(
        max_length=32, choices=RestartPolicy.choices, default=RestartPolicy.RESTART_GANG_WHEN_BELOW_MIN
    )
    # Volcano Job (vcjob): what a failed or evicted pod does to the gang, and how many whole-gang
    # restarts are allowed (``max_retry``; empty: unbounded) and were made (``retries``).
    failure_policy = models.CharField(max_length=16, choices=FailureAction.choices, blank=True)
    eviction_policy = models.CharField(max_length=16, choices=FailureAction.choices, blank=True)
    max_retry = models.PositiveIntegerField(null=True, blank=True)
    retries = models.PositiveIntegerField(default=0)
    # Koordinator's match-policy: how a gang satisfied once takes new members (engine MatchPolicy).
    match_policy = models.CharField(
        max_length=24, choices=MATCH_POLICY_CHOICES, default=MatchPolicy.ONCE_SATISFIED.value
    )
    # Topology (engine TopologyConstraint): node-label keys of a topology level; blank:
    # none. All members in one domain of ``topology_required``; the smallest domain that fits,
    # from ``topology_preferred`` up. ``topology_name`` picks the Topology; blank: any that has it.
    # ``topology_exclusive``: its required domain holds no other gang exclusive at that level
    # (JobSet's and LeaderWorkerSet's exclusive-topology).
    topology_required = models.CharField(max_length=317, blank=True, default="")
    topology_preferred = models.CharField(max_length=317, blank=True, default="")
    topology_name = models.CharField(max_length=253, blank=True, default="")
    topology_exclusive = models.BooleanField(default=False)
    submitter = models.CharField(max_length=150, blank=True)
    # Pods that name a gang before its declaration (PodGroup) arrives are held in a provisional
    # gang, which the scheduler does not see (snapshot/build.py leaves it out, so its pods wait) until
    # the declaration arrives or ``provisional_until`` passes (Koordinator's behaviour).
    provisional = models.BooleanField(default=False)
    provisional_until = models.DateTimeField(null=True, blank=True)
    declaration = models.JSONField(default=dict, blank=True, help_text="The manifest it was submitted as.")
    source_format = models.CharField(max_length=32, blank=True, help_text="e.g. podgroup, volcano, yunikorn")
    # The application the gang belongs to, where the format names one (YuniKorn's applicationId):
    # users look an application up by it (get --application, the API's ?application=).
    application = models.CharField(max_length=253, blank=True, default="")

    # What the scheduler expects it to run for (engine/runtimes.py; services/runtimes.py keeps
    # it): seconds and where the figure comes from (declared, learned, limit, default; blank:
    # no estimate), the kill limit its pods declare (activeDeadlineSeconds; the cap and the
    # overrun rule's bound) and the key its runtime is learned under (submitter, queue, shape).
    runtime_estimate_s = models.FloatField(
        null=True, blank=True, help_text="Expected runtime; empty: unknown."
    )
    runtime_source = models.CharField(max_length=16, blank=True, default="")
    runtime_limit_s = models.FloatField(null=True, blank=True, help_text="Its pods' activeDeadlineSeconds.")
    runtime_key = models.CharField(max_length=64, blank=True, default="")

    # Scheduling state, as the last cycle left it (see the engine's Gang docstring).
    phase = models.CharField(max_length=16, choices=PHASE_CHOICES, default=GangPhase.PENDING.value)
    satisfied = models.BooleanField(default=False)
    wait_started = models.DateTimeField(null=True, blank=True)
    fallen_back = models.BooleanField(default=False)
    schedule_start_time = models.DateTimeField(null=True, blank=True)
    running = models.PositiveIntegerField(default=0)
    succeeded = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)

    # Why it is not placed (the engine's latest Explanation); blank once placed.
    reason = models.CharField(max_length=32, choices=REASON_CHOICES, blank=True)
    message = models.TextField(blank=True)
    details = models.JSONField(default=dict, blank=True)

    # Settable (not auto_now_add) so that a gang synced from Kubernetes keeps its
    # creationTimestamp: queue order counts from creation time (engine/queue.py).
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created", "id"]
        # Operator actions are permissions of their own: DRF's DjangoModelPermissions would map
        # a POST of "retry" or "kill" to add_gang, which says nothing about either.
        permissions = [
            ("retry_gang", "Can retry a gang that timed out or failed"),
            ("kill_gang", "Can kill a gang and delete its pods"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "name"], name="gang_unique_namespace_name"),
            models.CheckConstraint(condition=Q(min_member__gte=1), name="gang_min_member_positive"),
            models.CheckConstraint(
                condition=Q(total_number__isnull=True) | Q(total_number__gte=F("min_member")),
                name="gang_total_number_at_least_min_member",
            ),
            models.CheckConstraint(
                condition=Q(wait_seconds__isnull=True) | Q(wait_seconds__gte=0),
                name="gang_wait_seconds_non_negative",
            ),
            # Only a Soft gang falls back to pod-at-a-time scheduling; a Hard one times out.
            models.CheckConstraint(
                condition=Q(fallen_back=False) | Q(style=TimeoutStyle.SOFT.value),
                name="gang_fallen_back_only_soft",
            ),
            models.CheckConstraint(
                condition=Q(runtime_estimate_s__isnull=True, runtime_source="")
                | Q(runtime_estimate_s__gte=0, runtime_source__in=SOURCES),
                name="gang_runtime_estimate_valid",
            ),
            choices_constraint("phase", PHASE_CHOICES, "gang_phase_valid"),
            choices_constraint("mode", MODE_CHOICES, "gang_mode_valid"),
            choices_constraint("style", STYLE_CHOICES, "gang_style_valid"),
            choices_constraint("placement", PLACEMENT_CHOICES, "gang_placement_valid"),
            choices_constraint("match_policy", MATCH_POLICY_CHOICES, "gang_match_policy_valid"),
            choices_constraint("restart_policy", RestartPolicy.choices, "gang_restart_policy_valid"),
            models.CheckConstraint(
                condition=Q(reason="") | Q(reason__in=[value for value, _ in REASON_CHOICES]),
                name="gang_reason_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["phase"], name="gang_phase_idx"),
            models.Index(fields=["namespace"], name="gang_namespace_idx"),
            # Queue order (created, id) and the API's gang list, newest first: every gang, or
            # a submitter's own (with their count) without a scan of the whole table.
            models.Index(fields=["created", "id"], name="gang_created_id_idx"),
            models.Index(fields=["submitter", "created", "id"], name="gang_submitter_created_idx"),
            models.Index(fields=["application"], name="gang_application_idx", condition=~Q(application="")),
            # The finished runs a runtime is learned from (services/runtimes.py).
            models.Index(
                fields=["runtime_key"],
                name="gang_runtime_key_idx",
                condition=Q(phase=GangPhase.FINISHED.value),
            ),
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def key(self) -> str:
        """``namespace/name``, the gang's name in the engine, events and URLs."""
        return f"{self.namespace}/{self.name}"

    @property
    def runtime_estimate(self) -> Estimate | None:
        """The expected runtime the scheduler works with now: the stored estimate, or for a
        running gang that outlived it, the overrun rule's (from its first bind; a declared
        figure is taken at its word, as ``snapshot/runtimes.py`` does)."""
        if self.runtime_estimate_s is None or not self.runtime_source:
            return None
        believed = Estimate(self.runtime_estimate_s, self.runtime_source)
        started = self.schedule_start_time
        if self.phase == GangPhase.RUNNING.value and started is not None and believed.source != DECLARED:
            believed = overrun(believed, (timezone.now() - started).total_seconds(), self.runtime_limit_s)
        return believed


class Member(models.Model):
    """A pod: a member of a gang, or (``gang`` empty) a pod scheduled on its own.

    ``node`` and ``reserved_node`` are node *names*, as in a pod's spec.nodeName: a pod can be
    bound to a node gangsched has not synced yet, and removing a Node row must not make its pods
    look pending.
    """

    namespace = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    # Deleting a gang deletes its members: a pod whose gang is gone must not be bound on its own.
    gang = models.ForeignKey(Gang, null=True, blank=True, on_delete=models.CASCADE, related_name="members")
    # Who applied the pod: its owner for tenancy (services/tenancy.py), also for a pod of no gang.
    submitter = models.CharField(max_length=150, blank=True, default="")
    requests = models.JSONField(default=dict, blank=True, validators=[validate_resource_map])
    priority = models.IntegerField(default=0)
    preemptible = models.BooleanField(default=True)
    # Being deleted (a deletionTimestamp is set): it still holds its node until it is gone, and
    # the engine never picks it as a preemption victim again.
    # The uid of the Kubernetes pod this row mirrors (empty on the simulated cluster): tells a
    # pod recreated under the same name (a StatefulSet's) from the one it replaced.
    uid = models.CharField(max_length=64, blank=True, default="")
    # The workload that created the pod and recreates it (``job.batch/train``, a vcjob, a
    # GangJob, a Workload; a Pod's controller ownerReference). Empty: a bare Pod, which nobody
    # recreates: deleting it removes it for good (services/delete.py).
    owner = models.CharField(max_length=320, blank=True, default="")
    terminating = models.BooleanField(default=False)
    # The queue a pod scheduled alone is charged to, as its keys name it (a Kueue LocalQueue
    # is resolved by snapshot/build.py); a gang's member is charged to its gang's queue instead.
    queue = models.CharField(max_length=253, default="default")
    phase = models.CharField(max_length=16, choices=MemberPhase.choices, default=MemberPhase.PENDING)
    node = models.CharField(max_length=253, null=True, blank=True, help_text="Bound to; empty: pending.")
    reserved_node = models.CharField(
        max_length=253, null=True, blank=True, help_text="Capacity held across cycles for this pending pod."
    )
    node_selector = models.JSONField(default=dict, blank=True, validators=[validate_string_map])
    tolerations = models.JSONField(default=list, blank=True, validators=[validate_tolerations])
    affinity = models.JSONField(default=list, blank=True, validators=[validate_affinity])
    duration_seconds = models.FloatField(
        null=True, blank=True, help_text="Expected runtime, for backfilling."
    )
    # activeDeadlineSeconds: of the pod, or of the workload that creates it (a Job, a Kubeflow
    # job's runPolicy); the pod is stopped after it (the runtime estimate's limit).
    deadline_seconds = models.FloatField(null=True, blank=True, help_text="Longest it may run, in seconds.")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    annotations = models.JSONField(default=dict, blank=True, validators=[validate_string_map])
    labels = models.JSONField(default=dict, blank=True, validators=[validate_string_map])
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["namespace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "name"], name="member_unique_namespace_name"),
            choices_constraint("phase", MemberPhase.choices, "member_phase_valid"),
            models.CheckConstraint(
                condition=Q(duration_seconds__isnull=True) | Q(duration_seconds__gte=0),
                name="member_duration_non_negative",
            ),
            # A bound pod holds no reservation: binding consumes it.
            models.CheckConstraint(
                condition=Q(node__isnull=True) | Q(reserved_node__isnull=True),
                name="member_bound_or_reserved",
            ),
        ]
        indexes = [
            models.Index(fields=["phase"], name="member_phase_idx"),
            models.Index(fields=["gang", "phase"], name="member_gang_phase_idx"),
            models.Index(fields=["node"], name="member_node_idx"),
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"
