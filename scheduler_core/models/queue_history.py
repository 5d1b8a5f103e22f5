"""Each queue's figures over time: what the Queues page charts and the
``/metrics`` queue gauges read.

One row per queue per minute: the figures of the last cycle of that minute (``CycleResult.
queues``, see ``engine/ledger.py`` ``report``), written by ``services/queue_history.py``. A
later cycle of the same minute replaces the row's figures (an upsert on ``queue, minute``), so
the table never holds more than queues x minutes of ``GANGSCHED_QUEUE_HISTORY_HOURS``; the
periodic sweep deletes older minutes. Rows name their queue by name, not by key, so a deleted
queue's past stays readable until it ages out.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from .history import SchedulingCycle


class QueueSample(models.Model):
    """A queue's usage, guarantee, fair share, max, pending demand, borrowed and lent, per
    resource in the engine's canonical integers, as the last cycle of ``minute`` left them."""

    cycle = models.ForeignKey(
        SchedulingCycle, null=True, blank=True, on_delete=models.SET_NULL, related_name="queue_samples"
    )
    queue = models.CharField(max_length=253)
    path = models.CharField(max_length=1024, blank=True, help_text='"ml/nlp": the names from the top down.')
    minute = models.DateTimeField(help_text="The minute the figures belong to (seconds zeroed).")
    open = models.BooleanField(default=True)
    usage = models.JSONField(default=dict, blank=True)
    guarantee = models.JSONField(default=dict, blank=True)
    fair_share = models.JSONField(default=dict, blank=True)
    max = models.JSONField(default=dict, blank=True, help_text="A missing resource: unlimited.")
    pending = models.JSONField(default=dict, blank=True)
    borrowed = models.JSONField(default=dict, blank=True)
    lent = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now, help_text="When these figures were taken.")

    class Meta:
        ordering = ["queue", "minute"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "minute"], name="queuesample_one_per_queue_minute"),
        ]
        indexes = [models.Index(fields=["minute"], name="queuesample_minute_idx")]

    def __str__(self) -> str:
        return f"{self.queue} at {self.minute:%Y-%m-%d %H:%M}"
