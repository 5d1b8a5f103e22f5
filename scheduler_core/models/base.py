"""Helpers shared by the model modules."""

from __future__ import annotations

import enum

from django.db import models


def enum_choices(values: type[enum.Enum]) -> list[tuple[str, str]]:
    """Django choices from one of the engine's str enums: stored and shown as the enum's value."""
    return [(member.value, member.value) for member in values]


def choices_constraint(field: str, choices, name: str) -> models.CheckConstraint:
    """A database CHECK that ``field`` holds one of ``choices`` (Django checks choices only in
    forms; rows written by services and bulk updates are kept honest here)."""
    values = [value for value, _label in choices]
    return models.CheckConstraint(condition=models.Q(**{f"{field}__in": values}), name=name)


class AppendOnlyModel(models.Model):
    """A record that is written once: ``save()`` on an existing row raises.

    History must say what happened when it happened; a correction is a new row. Bulk
    ``QuerySet.update()`` is still possible for bookkeeping columns (the publisher's
    ``published_at``), which is why this guards ``save()`` only.
    """

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise TypeError(f"{type(self).__name__} is append-only; write a new row instead")
        super().save(*args, **kwargs)
