"""The queue tree: who is promised what share of the cluster.

``Queue`` maps one to one onto ``engine.model.Queue`` (its docstring says what each amount
means); amounts are the engine's canonical integers per resource. Rows are written only by
``services/queues.py``, which checks the tree as a whole (unknown parent, cycles, max below
guarantee, children guaranteed more than their parent's max) before anything is saved; the
database keeps what a single row can say (weight > 0, one of user or group per access row).

No Queue row at all means queues are not in use: everything shares the cluster as one implicit
``default`` queue with no guarantee and no limit (``snapshot/build.py`` passes an empty tree).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from scheduler_core.validators import validate_resource_map, validate_string_map


class Queue(models.Model):
    """A queue of the tree: a Volcano/KAI Queue, a Kueue Cohort or ClusterQueue, a YuniKorn
    queue, or one made by an operator. Gangs name leaf queues that are not cohorts."""

    name = models.CharField(max_length=253, unique=True)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    guarantee = models.JSONField(default=dict, blank=True, validators=[validate_resource_map])
    max = models.JSONField(
        default=dict,
        blank=True,
        validators=[validate_resource_map],
        help_text="A missing resource: unlimited.",
    )
    lending_limit = models.JSONField(
        default=dict,
        blank=True,
        validators=[validate_resource_map],
        help_text="A missing resource: lends all.",
    )
    weight = models.FloatField(default=1.0, help_text="Over-quota weight, > 0.")
    weights = models.JSONField(
        default=dict,
        blank=True,
        help_text="Over-quota weight per resource (KAI), each > 0; a resource not named: weight.",
    )
    unlimited_guarantee = models.JSONField(
        default=list,
        blank=True,
        help_text="Resources guaranteed all the queue asks (KAI quota -1), not listed in guarantee.",
    )
    reclaimable = models.BooleanField(default=True)
    open = models.BooleanField(default=True, help_text="A closed queue places nothing new.")
    cohort = models.BooleanField(default=False, help_text="Only groups queues (a Kueue Cohort).")
    reclaim_delay_s = models.FloatField(
        null=True,
        blank=True,
        help_text="Seconds its work waits before reclaiming beyond its guarantee; empty: the global delay.",
    )
    default_runtime_s = models.FloatField(
        null=True,
        blank=True,
        help_text="Runtime of its gangs with no better estimate; empty: GANGSCHED_DEFAULT_RUNTIME_S.",
    )
    preempt_within = models.BooleanField(
        default=True,
        help_text="Its work may evict its lower-priority work (not Kueue's Never, not YuniKorn).",
    )
    reclaim_up_to = models.CharField(
        max_length=16,
        choices=[("fair-share", "fair share"), ("guarantee", "guarantee")],
        default="fair-share",
        help_text="How far its work reclaims: its fair share, or only its guarantee (YuniKorn).",
    )
    source_format = models.CharField(max_length=32, blank=True, default="gangsched")
    declaration = models.JSONField(default=dict, blank=True, help_text="The object it was applied as.")
    extra = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        permissions = [("close_queue", "Can close and open a queue")]
        constraints = [
            models.CheckConstraint(condition=Q(weight__gt=0), name="queue_weight_positive"),
            models.CheckConstraint(condition=~Q(parent=models.F("pk")), name="queue_not_own_parent"),
            models.CheckConstraint(
                condition=Q(reclaim_delay_s__isnull=True) | Q(reclaim_delay_s__gte=0),
                name="queue_reclaim_delay_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(default_runtime_s__isnull=True) | Q(default_runtime_s__gte=0),
                name="queue_default_runtime_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(reclaim_up_to__in=["fair-share", "guarantee"]), name="queue_reclaim_up_to_known"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class LocalQueue(models.Model):
    """Kueue's namespaced ``LocalQueue``: gangs and pods of ``namespace`` naming ``name`` are
    charged to ``cluster_queue``."""

    namespace = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    cluster_queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="local_queues")
    declaration = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["namespace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "name"], name="localqueue_unique_namespace_name"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class ResourceFlavor(models.Model):
    """Kueue's ``ResourceFlavor``, recorded so that a ClusterQueue may name it."""

    name = models.CharField(max_length=253, unique=True)
    node_labels = models.JSONField(default=dict, blank=True, validators=[validate_string_map])
    declaration = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class QueueAccess(models.Model):
    """One user or one group allowed to submit to a queue. A queue with no rows is open to
    every submitter (``services/queues.queue_allows``)."""

    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="access")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    group = models.ForeignKey("auth.Group", null=True, blank=True, on_delete=models.CASCADE)

    class Meta:
        verbose_name_plural = "queue access"
        constraints = [
            models.CheckConstraint(
                condition=(Q(user__isnull=False) & Q(group__isnull=True))
                | (Q(user__isnull=True) & Q(group__isnull=False)),
                name="queueaccess_user_xor_group",
            ),
            models.UniqueConstraint(fields=["queue", "user"], name="queueaccess_unique_user"),
            models.UniqueConstraint(fields=["queue", "group"], name="queueaccess_unique_group"),
        ]

    def __str__(self) -> str:
        who = f"user {self.user}" if self.user_id else f"group {self.group}"
        return f"{self.queue}: {who}"
