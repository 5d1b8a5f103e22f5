from django.db import models
from django.utils import timezone

from scheduler_core.validators import validate_resource_map, validate_string_map, validate_taints


class Node(models.Model):
    """A machine pods can be bound to, as the cluster backend last reported it."""

    name = models.CharField(max_length=253, unique=True)
    # {"cpu": 64000, "memory": 274877906944, "nvidia.com/gpu": 8}: canonical integers
    # (milli-CPU, bytes, counts), see scheduler_core/engine/quantity.py.
    allocatable = models.JSONField(default=dict, blank=True, validators=[validate_resource_map])
    labels = models.JSONField(default=dict, blank=True, validators=[validate_string_map])
    # [{"key": "gpu", "value": "a100", "effect": "NoSchedule"}], Kubernetes' spelling.
    taints = models.JSONField(default=list, blank=True, validators=[validate_taints])
    # Requests of running pods placed by other schedulers (kube-scheduler's, DaemonSets') on a
    # real cluster, kept by the watch: capacity gangsched must leave alone. Same units as above.
    external_usage = models.JSONField(default=dict, blank=True, validators=[validate_resource_map])
    unschedulable = models.BooleanField(default=False, help_text="Cordoned: no new pods are placed here.")
    ready = models.BooleanField(default=True)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class NodeUsage(models.Model):
    """What the active pods bound to a node request, kept by the database as pods change.

    Rows are deltas: a node's use of a resource is the SUM of its rows (``pods`` counts the pods).
    A statement-level trigger on the member table (migration 0017) appends, for every statement
    that binds, finishes, fails, evicts, deletes or re-requests pods, one row per (node, resource)
    it changed, so a bind never waits on another transaction's lock on a hot node row; the timeout
    sweep folds each node's rows back into one (``scheduler_core.reads.node_usage.usage_compact``).
    ``node`` is a name, as ``Member.node`` is: pods may be bound to a node not synced yet.
    """

    node = models.CharField(max_length=253)
    resource = models.CharField(max_length=253)
    amount = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["node", "resource"], name="nodeusage_node_idx")]

    def __str__(self) -> str:
        return f"{self.node} {self.resource} {self.amount:+d}"


class UsageMinute(models.Model):
    """How the cluster's usage changed in a minute, per resource: the NodeUsage rows' changes
    summed over the nodes, appended by the same triggers (one row per statement and resource,
    folded into one per minute and aged out after ``usage_compact``'s two hours). The overview
    rebuilds its last hour from today's usage and these, whatever the number of pods."""

    minute = models.DateTimeField(help_text="The minute of the change (seconds zeroed).")
    resource = models.CharField(max_length=253)
    amount = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["minute"], name="usageminute_minute_idx")]

    def __str__(self) -> str:
        return f"{self.minute:%H:%M} {self.resource} {self.amount:+d}"
