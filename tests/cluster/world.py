"""A small named cluster for the simulated-cluster and lifecycle tests, built through the
services (so the tests exercise the same path the demo does). ``NOW`` is pinned."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scheduler_core.models import Member
from scheduler_core.services.nodes import node_add
from scheduler_core.services.submit import gang_submit

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def later(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)


def cpu_node(name: str = "cpu-a", cpu: str = "8", pods: int | None = None, memory: str = "32Gi", **kwargs):
    allocatable = {"cpu": cpu, "memory": memory}
    if pods is not None:
        allocatable["pods"] = pods
    return node_add(name=name, allocatable=allocatable, **kwargs)


def pods(prefix: str, count: int, cpu: str = "1", duration: float | None = 60.0) -> list[dict]:
    return [
        {"name": f"{prefix}-{i}", "requests": {"cpu": cpu, "memory": "1Gi"}, "duration_seconds": duration}
        for i in range(count)
    ]


def gang(name: str = "train", size: int = 4, min_member: int | None = None, cpu: str = "1", **fields):
    return gang_submit(
        namespace="ml",
        name=name,
        min_member=size if min_member is None else min_member,
        pods=pods(name, size, cpu=cpu, duration=fields.pop("duration", 60.0)),
        **fields,
    )


def member(name: str, namespace: str = "ml") -> Member:
    return Member.objects.get(namespace=namespace, name=name)


def bind_directly(gang_obj, node: str) -> None:
    """Place every member of a gang on ``node`` as a cycle would have (no capacity checks)."""
    Member.objects.filter(gang=gang_obj).update(node=node)
