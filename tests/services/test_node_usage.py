"""The per-node usage the database keeps (migration 0017's triggers, scheduler_core/reads/node_usage.py),
and the per-queue usage the same triggers keep (0019, scheduler_core/reads/tallies.py), stay equal to a
fresh sum over the members through every way a pod starts or stops holding its
node: binds, finishes, evictions, failures, kills, pod, gang and node deletion, bulk
inserts and hand-written updates; and drift, made by hand, is found and repaired."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from scheduler_core.models import Member, MemberPhase, NodeUsage, UsageMinute
from scheduler_core.reads.node_usage import (
    usage_by_node,
    usage_compact,
    usage_drift,
    usage_from_members,
    usage_repair,
    usage_total,
)
from scheduler_core.reads.tallies import queue_charges, queue_charges_from_members, queue_drift
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.delete import gang_delete, pod_delete
from scheduler_core.services.kubelet import kubelet_tick
from scheduler_core.services.lifecycle import failures_handle
from scheduler_core.services.nodes import node_remove
from scheduler_core.services.operator import gang_kill
from tests.loop.factories import GI, make_gang, make_nodes

pytestmark = pytest.mark.django_db


def in_step() -> dict:
    """The stored usage, checked against the members before and after folding its rows; the
    queues' too (migration 0019: the same triggers keep them)."""
    stored, queues = usage_by_node(), queue_charges()
    assert stored == usage_from_members() and queues == queue_charges_from_members()
    usage_compact()
    assert usage_by_node() == stored and usage_drift() == {}
    assert queue_charges() == queues and queue_drift() == {}
    return stored


def held(members) -> int:
    return members.filter(node__isnull=False, phase__in=["Pending", "Running"]).count()


def test_binds_and_finishes_are_counted_on_their_nodes():
    make_nodes(2, cpu=4)
    train = make_gang("ml/train", 6, cpu=1)
    assert in_step() == {}
    cycle_run(holder="test")
    used = in_step()
    assert sum(u["pods"] for u in used.values()) == 6
    assert usage_total() == {"cpu": 6000, "memory": 6 * GI, "pods": 6}
    now = timezone.now()
    kubelet_tick(now)  # Pending -> Running holds the same room: nothing appended
    assert in_step() == used
    train.members.filter(name__in=["train-0", "train-1"]).update(duration_seconds=1)
    kubelet_tick(now + timedelta(seconds=5))
    assert usage_total() == {"cpu": 4000, "memory": 4 * GI, "pods": 4}
    in_step()


def test_evictions_and_the_restart_policy_are_counted():
    make_nodes(1, cpu=4)
    low = make_gang("batch/low", 4, cpu=1, min_member=1, priority=0)
    cycle_run(holder="test")
    assert in_step() == {"n0": {"cpu": 4000, "memory": 4 * GI, "pods": 4}}
    high = make_gang("prod/high", 2, cpu=1, priority=10)
    high.members.update(priority=10)
    cycle_run(holder="test")  # evicts two of low's pods
    assert low.members.filter(phase=MemberPhase.FAILED).count() == 2
    assert in_step()["n0"]["pods"] == 2
    failures_handle()  # recreated, pending and unbound
    cycle_run(holder="test")
    assert in_step()["n0"]["pods"] == held(low.members) + held(high.members) == 4


def test_kills_and_deletion_of_pods_and_gangs_free_their_nodes():
    make_nodes(2, cpu=8)
    one = make_gang("ml/one", 3, cpu=1)
    make_gang("ml/two", 3, cpu=2)
    make_gang("ml/three", 2, cpu=1)
    cycle_run(holder="test")
    assert in_step() and usage_total()["pods"] == 8
    gang_kill(gang=one, by="olga")
    assert usage_total()["pods"] == 5
    in_step()
    make_gang("ml/four", 3, cpu=1)
    cycle_run(holder="test")  # binds on the room the killed gang left
    assert usage_total()["pods"] == 8
    in_step()
    pod_delete(namespace="ml", name="two-0")  # a Job's pod: failed and replaced, pending
    in_step()
    gang_delete(namespace="ml", name="three")  # its members go with it (a cascade)
    assert usage_total()["pods"] == held(Member.objects) > 0
    in_step()


def test_removing_a_node_frees_it():
    make_nodes(2, cpu=4)
    make_gang("ml/train", 8, cpu=1, min_member=1)
    cycle_run(holder="test")
    assert set(in_step()) == {"n0", "n1"}
    node_remove(name="n0")
    assert set(in_step()) == {"n1"}


def test_bulk_inserts_and_hand_written_updates_are_counted_too():
    """The Kubernetes mirror inserts pods already bound and updates rows in SQL; the triggers see
    statements, not services. A request that is no number is ignored, and the write goes on."""
    gang = make_gang("ml/train", 1)
    Member.objects.bulk_create(
        Member(namespace="ml", name=f"bound-{i}", gang=gang, node=f"k{i % 2}", phase=MemberPhase.RUNNING,
               requests={"cpu": 500, "nvidia.com/gpu": 1})
        for i in range(4)
    )  # fmt: skip
    assert in_step() == {"k0": {"cpu": 1000, "nvidia.com/gpu": 2, "pods": 2},
                         "k1": {"cpu": 1000, "nvidia.com/gpu": 2, "pods": 2}}  # fmt: skip
    Member.objects.filter(name="bound-0").update(requests={"cpu": 2000, "memory": "lots"})
    Member.objects.filter(name="bound-1").update(node="k0")
    assert in_step() == {"k0": {"cpu": 3000, "nvidia.com/gpu": 2, "pods": 3},
                         "k1": {"cpu": 500, "nvidia.com/gpu": 1, "pods": 1}}  # fmt: skip
    Member.objects.filter(name__startswith="bound-").update(phase=MemberPhase.SUCCEEDED)
    assert in_step() == {}


def test_folding_keeps_the_sums_and_leaves_one_row_per_node_and_resource():
    make_nodes(2, cpu=4)
    make_gang("ml/train", 6, cpu=1)
    cycle_run(holder="test")
    make_gang("ml/more", 2, cpu=1)
    cycle_run(holder="test")
    before = usage_by_node()
    usage_compact()
    assert usage_by_node() == before
    rows = list(NodeUsage.objects.values_list("node", "resource"))
    assert len(rows) == len(set(rows)) == sum(len(u) for u in before.values())
    Member.objects.update(phase=MemberPhase.SUCCEEDED)
    usage_compact()
    assert not NodeUsage.objects.exists()  # what sums to zero is dropped


def test_drift_made_by_hand_is_found_and_repaired(capsys):
    make_nodes(1, cpu=4)
    make_gang("ml/train", 2, cpu=1)
    cycle_run(holder="test")
    truth = in_step()
    NodeUsage.objects.create(node="n0", resource="cpu", amount=999)
    NodeUsage.objects.create(node="ghost", resource="pods", amount=3)
    assert set(usage_drift()) == {"n0", "ghost"}
    with pytest.raises(CommandError, match="2 node\\(s\\) and 0 queue charge\\(s\\) drifted"):
        call_command("node_usage")
    call_command("node_usage", "--repair")
    assert "node n0: stored cpu 2999m" in capsys.readouterr().out
    assert usage_by_node() == truth and usage_drift() == {}
    call_command("node_usage")
    assert "match the members" in capsys.readouterr().out
    assert usage_repair() == 3  # cpu, memory, pods of n0


def test_the_minutes_are_folded_and_aged_out():
    """The cluster's change per minute (the overview's last hour): the binds of a minute, summed
    over the nodes, are one row per resource once folded; minutes past two hours are deleted."""
    make_nodes(2, cpu=4)
    make_gang("ml/train", 3, cpu=1)
    cycle_run(holder="test")
    make_gang("ml/more", 2, cpu=2)
    cycle_run(holder="test")
    old = timezone.now() - timedelta(hours=3)
    UsageMinute.objects.create(minute=old.replace(second=0, microsecond=0), resource="cpu", amount=5)
    usage_compact()
    rows = list(UsageMinute.objects.values_list("resource", "amount"))
    assert sorted(rows) == [("cpu", 7000), ("memory", 5 * GI), ("pods", 5)]
