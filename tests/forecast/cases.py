"""Small clusters for forecast tests: a running gang that ends at a known time, gangs behind it."""

from __future__ import annotations

import dataclasses

from scheduler_core.engine import GangPhase
from tests.engine.world import NOW, gang, members, nodes, snapshot


def running(key: str, count: int, *, cpu: float, started: float, duration: float | None, first: int = 0):
    """A satisfied gang of ``count`` pods bound to nodes n<first>.. from ``started``."""
    pods = tuple(
        dataclasses.replace(p, node=f"n{first + i}", started=started, duration=duration)
        for i, p in enumerate(members(key, count, cpu=cpu))
    )
    return gang(key, count, satisfied=True, phase=GangPhase.RUNNING), pods


def waiting(key: str, count: int, *, cpu: float, duration: float | None, created: float, **gang_fields):
    pods = members(key, count, cpu=cpu, duration=duration, created=created)
    return gang(key, count, created=created, **gang_fields), pods


def behind_one(ends_in: float = 300.0, duration: float | None = 400.0, waiting_duration: float = 100.0):
    """Two 4-CPU nodes full with a/run, estimated at ``duration`` s and expected to end ``ends_in``
    s after NOW (None: no estimate, 100 s in); b/wait needs both nodes."""
    started = NOW + ends_in - duration if duration is not None else NOW - 100.0
    run_gang, run_pods = running("a/run", 2, cpu=4, started=started, duration=duration)
    wait_gang, wait_pods = waiting("b/wait", 2, cpu=4, duration=waiting_duration, created=NOW - 10)
    return snapshot(nodes(2, cpu=4), run_pods + wait_pods, (run_gang, wait_gang))


def busy():
    """Eight 4-CPU nodes, four running gangs ending at different times, six gangs waiting."""
    pods, gangs = [], []
    for i, (ends_in, duration) in enumerate([(50, 400), (120, 200), (300, 900), (40, 100)]):
        gang, members = running(
            f"r/run{i}", 2, cpu=2, started=NOW + ends_in - duration, duration=duration, first=2 * i
        )
        gangs.append(gang)
        pods += members
    shapes = [(2, 4, 300), (1, 2, 60), (4, 1, 500), (3, 3, 100), (1, 4, 1000), (2, 1, 30)]
    for i, (count, cpu, duration) in enumerate(shapes):
        gang, members = waiting(f"w/g{i}", count, cpu=cpu, duration=float(duration), created=NOW - 50 + i)
        gangs.append(gang)
        pods += members
    return snapshot(nodes(8, cpu=4), pods, gangs)
