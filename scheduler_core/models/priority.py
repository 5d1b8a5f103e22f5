from django.db import models
from django.utils import timezone


class NamedPriority(models.Model):
    """What both kinds of priority class hold: a cluster-wide name and its value."""

    name = models.CharField(max_length=253, unique=True)
    value = models.IntegerField()
    description = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.value})"


class PriorityClass(NamedPriority):
    """``scheduling.k8s.io/v1 PriorityClass``, as applied by ``manage.py apply``.

    ``priorityClassName`` on pods, PodGroups and jobs resolves through these rows first (as
    Kubernetes' priority admission does), then ``settings.GANGSCHED_PRIORITY_CLASSES`` (the
    built-in defaults); a pod naming no class gets the ``global_default`` class's value, or 0.
    """

    global_default = models.BooleanField(default=False)

    class Meta(NamedPriority.Meta):
        verbose_name_plural = "priority classes"


class WorkloadPriorityClass(NamedPriority):
    """Kueue's ``WorkloadPriorityClass``, as applied by ``manage.py apply``.

    A row apart from PriorityClass because Kueue keeps its names apart: a workload's label
    ``kueue.x-k8s.io/priority-class`` names one of these, never a PriorityClass, and a class of
    each kind may share a name with different values. Its value is the gang's priority; the
    pods keep their own.
    """

    class Meta(NamedPriority.Meta):
        verbose_name_plural = "workload priority classes"
