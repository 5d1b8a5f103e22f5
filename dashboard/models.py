"""The dashboard's own rows: trace replay runs. The scheduler's rows live in scheduler_core."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SimulationRuntimes(models.TextChoices):
    """What a replay tells the engine of runtimes: scheduler_core/simulation/runtime_view.py's
    MODES, spelled again here so that loading the models imports no numpy (a test checks that
    both lists agree)."""

    ORACLE = "oracle", "oracle"
    LIMIT = "limit", "limit"
    LEARNED = "learned", "learned"


class SimulationRun(models.Model):
    """One comparison of policies on a trace, run by a Celery task (dashboard/tasks.py).

    The trace is kept with the run (a shared trace's name, or an uploaded CSV's text) so that a
    run can be read and re-run long after the upload; ``results`` is results.json as the CLI
    writes it; the plots are files under ``plot_dir()`` served by a view that checks the login.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)  # 0..1
    trace_name = models.CharField(max_length=255)
    trace_text = models.TextField(blank=True)  # an uploaded trace; empty for a shared one
    cluster_spec = models.CharField(max_length=1000)
    policies = models.JSONField(default=list)
    # gangsched's queue-order limit for this run (GANGSCHED_OVERTAKE_LIMIT_S); null: its default.
    overtake_limit_s = models.FloatField(null=True, blank=True)
    # What the engine is told of runtimes (manage.py simulate --runtimes; docs/forecasts.md).
    runtimes = models.CharField(
        max_length=16, choices=SimulationRuntimes.choices, default=SimulationRuntimes.ORACLE
    )
    results = models.JSONField(null=True, blank=True)
    plots = models.JSONField(default=list)  # file names under plot_dir()
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(progress__gte=0.0, progress__lte=1.0), name="simulationrun_progress_0_1"
            ),
            models.CheckConstraint(
                condition=models.Q(overtake_limit_s__isnull=True) | models.Q(overtake_limit_s__gte=0.0),
                name="simulationrun_overtake_limit_not_negative",
            ),
            models.CheckConstraint(
                condition=models.Q(runtimes__in=SimulationRuntimes.values),
                name="simulationrun_runtimes_known",
            ),
        ]

    def __str__(self) -> str:
        return f"simulation {self.pk}: {self.trace_name} on {self.cluster_spec} ({self.status})"

    @property
    def progress_pct(self) -> int:
        return round(self.progress * 100)

    @property
    def done(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED)
