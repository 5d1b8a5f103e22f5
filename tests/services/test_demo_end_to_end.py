"""The seeded cluster and the demo, driven by real scheduling cycles and kubelet ticks."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, GangEventKind
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.kubelet import kubelet_tick

pytestmark = pytest.mark.django_db


def phase(name):
    return Gang.objects.get(namespace="demo", name=name).phase


def test_the_demo_runs_to_completion_except_the_gang_too_big_to_fit():
    call_command("seed_cluster", stdout=StringIO())
    call_command("submit_demo", stdout=StringIO())
    start = timezone.now()

    report = cycle_run(holder="test")
    kubelet_tick(now=start)

    assert report.ran and report.pods_bound > 0
    assert phase("llm-train-r1") == GangPhase.RUNNING.value
    assert phase("etl-r1") == GangPhase.RUNNING.value

    for step in range(1, 8):  # seven minutes of simulated time, a cycle after each tick
        kubelet_tick(now=start + timedelta(minutes=step))
        cycle_run(holder="test")
    kubelet_tick(now=start + timedelta(minutes=10))

    for name in ("etl-r1", "analytics-r1", "llm-train-r1", "sweep-r1"):
        assert phase(name) == GangPhase.FINISHED.value, name
    too_big = Gang.objects.get(name="too-big-r1")
    assert too_big.phase in (GangPhase.PENDING.value, GangPhase.SCHEDULING.value)
    assert too_big.reason and too_big.message
    assert too_big.events.filter(kind=GangEventKind.EXPLAINED).exists()
