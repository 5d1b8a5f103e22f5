"""A small cluster with a queue of gangs for the stored forecasts' tests: one node of 8 CPUs that
a running gang of alice's fills for ten minutes, and three gangs waiting behind it, alice's,
bob's and alice's again, each needing the whole node for a minute (declared durations, so the
forecasts are exact: "declared" has the narrowest spread)."""

from __future__ import annotations

import time

from django.utils import timezone

from scheduler_core.models import Gang, Member
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.submit import gang_submit
from tests.cluster.world import cpu_node


def submit(name: str, submitter: str, *, duration: float = 60.0, namespace: str = "ml") -> Gang:
    return gang_submit(
        namespace=namespace,
        name=name,
        min_member=2,
        pods=[
            {"name": f"{name}-{i}", "requests": {"cpu": "4", "memory": "1Gi"}, "duration_seconds": duration}
            for i in range(2)
        ],
        submitter=submitter,
    )


def queue_world() -> dict[str, Gang]:
    """``running`` bound by a real cycle; ``first`` (alice), ``second`` (bob), ``third`` (alice)
    waiting, in that order."""
    cpu_node("cpu-a", cpu="8")
    running = submit("running", "alice", duration=600.0)
    bind(running)
    Member.objects.filter(gang=running).update(phase="Running", started_at=timezone.now())
    gangs = {"running": running}
    for name, submitter in (("first", "alice"), ("second", "bob"), ("third", "alice")):
        gangs[name] = submit(name, submitter)
        time.sleep(0.01)  # distinct creation times: queue order is creation order here
    return gangs


def bind(gang: Gang, timeout: float = 60.0) -> None:
    """Cycles until both of ``gang``'s pods are bound. The submission asks for a cycle, so where
    a Celery worker runs (the browser tests'), its cycle may hold the lease or bind them first;
    ``timeout`` is only a safety net."""
    deadline = time.monotonic() + timeout
    while Member.objects.filter(gang=gang, node__isnull=True).exists():
        assert time.monotonic() < deadline, f"{gang.namespace}/{gang.name} was not bound in {timeout:.0f}s"
        if not cycle_run(holder="test").ran:
            time.sleep(0.1)
