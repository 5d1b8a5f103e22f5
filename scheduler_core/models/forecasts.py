"""GangForecast: the latest start-time forecast of each pending gang (docs/forecasts.md).

One row per gang, replaced whole by every forecast run (``services/forecasts.py``): a gang the
run did not forecast (it started, ended, left) loses its row then, and until then readers show
a forecast only for a gang still waiting (``reads/forecasts.py``), with its age.

Positions are stored twice: as Kueue counts them (every pending unit ahead: what operators
see) and counting only the gang's own submitter's pending gangs ahead (what the submitter sees:
no count of anyone else's work). The engine's explanation is stored twice too: as it is, and as
the gang's submitter may read it (another submitter's gang or pod named in it redacted).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from .base import choices_constraint
from .gangs import Gang

#: ``scheduler_core.forecast``'s statuses (results.py: EXPECTED, LATER, NONE).
STATUS_CHOICES = [("expected", "expected"), ("later", "later"), ("none", "none")]


class GangForecast(models.Model):
    # No database constraint: inserting a forecast must take no lock on the gang's row (a foreign
    # key's check does), and deleting a gang must not wait for its forecast (services/forecasts.py).
    gang = models.OneToOneField(
        Gang, on_delete=models.DO_NOTHING, db_constraint=False, primary_key=True, related_name="forecast"
    )
    made_at = models.DateTimeField(help_text="The time the forecast was made for (its snapshot's).")
    status = models.CharField(max_length=8, choices=STATUS_CHOICES)
    note = models.TextField(blank=True, default="", help_text="Why, when the status is not expected.")
    start_p10 = models.DateTimeField(null=True, blank=True)
    start_p50 = models.DateTimeField(null=True, blank=True)
    start_p90 = models.DateTimeField(null=True, blank=True)
    # The engine queue the positions count in (a LocalQueue resolved to its ClusterQueue).
    queue = models.CharField(max_length=253, blank=True, default="")
    # From 0, as Kueue's visibility API: every pending unit ahead ...
    position_in_queue = models.PositiveIntegerField()
    position_in_local_queue = models.PositiveIntegerField()
    position_in_cluster = models.PositiveIntegerField()
    # ... and only the pending gangs of the gang's own submitter ahead.
    own_in_queue = models.PositiveIntegerField()
    own_in_local_queue = models.PositiveIntegerField()
    own_in_cluster = models.PositiveIntegerField()
    waiting_reason = models.CharField(max_length=32, blank=True, default="")
    waiting_message = models.TextField(blank=True, default="")
    waiting_message_own = models.TextField(
        blank=True, default="", help_text="The message as the gang's submitter reads it."
    )

    class Meta:
        constraints = [
            choices_constraint("status", STATUS_CHOICES, "gangforecast_status_valid"),
            models.CheckConstraint(
                condition=Q(start_p50__isnull=True) | Q(status="expected"),
                name="gangforecast_start_only_expected",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.gang_id} {self.status} {self.start_p50}"
