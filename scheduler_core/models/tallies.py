"""Sums the database keeps for the pages, so that they read a few rows, not every pod or event:
QueueUsage (what each queue's pods request, bound and waiting) and GangEventMinute
(the gang events per minute, the overview's gangs chart).

Like NodeUsage, rows are deltas appended by statement-level triggers (migration 0019) in the
transaction of the change, summed when read, and folded into one per key by the timeout sweep
(``scheduler_core.reads.tallies.tallies_compact``).
"""

from django.db import models

#: QueueUsage.resource of the pod count (no resource is named so): the pods of the row's key.
POD_COUNT = ""


class QueueUsage(models.Model):
    """What the active members charged to a queue name request, per namespace, whether bound
    (``bound``: they hold a node) or waiting, per resource; ``POD_COUNT`` counts the pods.

    ``queue`` is the name the pods declare (a gang's members: the gang's queue; a pod alone: its
    own), as written: a Kueue LocalQueue name is resolved to its ClusterQueue when read, so
    renaming one does not rewrite rows; ``queue_figures`` adds each leaf up to its ancestors.
    """

    namespace = models.CharField(max_length=253)
    queue = models.CharField(max_length=253)
    bound = models.BooleanField()
    resource = models.CharField(max_length=253, blank=True)
    amount = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["namespace", "queue"], name="queueusage_queue_idx")]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.queue} {self.resource or 'pods'} {self.amount:+d}"


class GangEventMinute(models.Model):
    """How many events of a kind the gangs of a submitter had in a minute (kept two hours)."""

    minute = models.DateTimeField(help_text="The minute of the events (seconds zeroed).")
    submitter = models.CharField(max_length=150, blank=True)
    kind = models.CharField(max_length=16)
    n = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["minute"], name="gangeventminute_minute_idx")]

    def __str__(self) -> str:
        return f"{self.minute:%H:%M} {self.submitter} {self.kind} {self.n:+d}"
