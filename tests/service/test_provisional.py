"""Pods that arrive before their PodGroup wait in a provisional gang the engine does not see."""

import pytest

from scheduler_core.models import Gang, Member, Node
from scheduler_core.services.cycle import cycle_run
from scheduler_core.snapshot.build import build_snapshot

pytestmark = pytest.mark.django_db


def test_a_provisional_gang_is_left_out_and_its_pods_are_not_scheduled():
    Node.objects.create(name="n0", allocatable={"cpu": 8000})
    gang = Gang.objects.create(namespace="ns", name="early", min_member=1, provisional=True)
    Member.objects.create(namespace="ns", name="early-0", gang=gang, requests={"cpu": 1000})
    snapshot = build_snapshot()
    assert [g.key for g in snapshot.gangs] == []
    assert [p.gang for p in snapshot.pods] == ["ns/early"]
    cycle_run(holder="test")
    assert Member.objects.get(name="early-0").node is None
    Gang.objects.filter(pk=gang.pk).update(provisional=False)  # the PodGroup arrived
    cycle_run(holder="test")
    assert Member.objects.get(name="early-0").node == "n0"
