"""Cluster-wide objects known by their name alone (priority classes of both kinds, Topology,
HyperNode, ResourceFlavor): one way to write their rows, so that every apply answers as
``kubectl apply`` does and two applies of one object never both create it.

Imports nothing of scheduler_core: the caller passes the model."""

from __future__ import annotations

from typing import Any

CREATED, CONFIGURED, UNCHANGED = "created", "configured", "unchanged"


def named_row_put(model: Any, name: str, fields: dict[str, Any]) -> str:
    """The row locked first: a concurrent apply of the same object waits, then compares."""
    row = model.objects.select_for_update().filter(name=name).first()
    if row is None:
        model.objects.create(name=name, **fields)
        return CREATED
    if all(getattr(row, key) == value for key, value in fields.items()):
        return UNCHANGED
    for key, value in fields.items():
        setattr(row, key, value)
    row.save()
    return CONFIGURED
