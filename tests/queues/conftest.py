"""Helpers for the queue tests: specs in a line, and no Celery worker needed for the wake-ups."""

import pytest

from scheduler_core.specs.queues import QueueSpec


def spec(name, parent=None, field="items[0]", **fields) -> QueueSpec:
    return QueueSpec(name=name, source_format="gangsched", field=field, parent=parent, **fields)


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    calls = []
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: calls.append(1) or True)
    return calls
