"""Driving the scheduling loop in-process for the fault tests: cycles, kubelet ticks, a clock."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.models import Gang, Member
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.kubelet import kubelet_tick

from .invariants import assert_invariants, pending_binds


class Clock:
    """The kubelet's clock: pods start and finish when a test says time has passed."""

    def __init__(self) -> None:
        self.now: datetime = timezone.now()

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


def step(backend: SimulatedCluster, clock: Clock, *, seconds: float = 10.0):
    """One cycle and one kubelet tick, with the invariants checked after each."""
    report = cycle_run(holder="faults", backend=backend)
    assert_invariants()
    kubelet_tick(now=clock.advance(seconds))
    assert_invariants()
    return report


def settle(clock: Clock, *, limit: int = 60) -> None:
    """Run cycles without faults until every gang is placed or done and the journal is empty."""
    backend = SimulatedCluster(failure_rate=0.0)
    for _ in range(limit):
        step(backend, clock)
        if not pending_binds() and not unplaced():
            assert_invariants(idle=True)
            return
    raise AssertionError(f"still unplaced after {limit} clean cycles: {unplaced()}")


def unplaced() -> list[str]:
    """Gangs still waiting (neither bound to minMember, nor done)."""
    waiting = []
    for gang in Gang.objects.filter(phase__in=["Pending", "Scheduling"]):
        held = Member.objects.filter(gang=gang, node__isnull=False).count()
        if held < gang.min_member:
            waiting.append(f"{gang.key} {held}/{gang.min_member}")
    return waiting
