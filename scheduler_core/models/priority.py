from django.db import models
from django.utils import timezone


class PriorityClass(models.Model):
    """``scheduling.k8s.io/v1 PriorityClass``, as applied by ``manage.py apply``.

    ``priorityClassName`` on pods, PodGroups and jobs resolves through these rows first (as
    Kubernetes' priority admission does), then ``settings.GANGSCHED_PRIORITY_CLASSES`` (the
    built-in defaults); a pod naming no class gets the ``global_default`` class's value, or 0.
    """

    name = models.CharField(max_length=253, unique=True)
    value = models.IntegerField()
    global_default = models.BooleanField(default=False)
    description = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "priority classes"

    def __str__(self) -> str:
        return f"{self.name} ({self.value})"
