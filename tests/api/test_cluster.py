"""GET /api/v1/nodes/, /api/v1/cluster/ and /api/v1/events/."""

from datetime import timedelta

from django.utils import timezone

from scheduler_core.models import Gang, GangEvent, Member, Node, SchedulingCycle

from .conftest import make_gang


def cluster():
    Node.objects.create(name="cpu-1", allocatable={"cpu": 8000, "memory": 32 * 2**30})
    Node.objects.create(name="cpu-2", allocatable={"cpu": 8000, "memory": 32 * 2**30}, unschedulable=True)
    Node.objects.create(name="gpu-1", allocatable={"cpu": 16000, "nvidia.com/gpu": 4}, ready=False)
    make_gang("ml", "train", pods=3)  # 1 CPU, 1Gi each
    Member.objects.filter(name="train-0").update(node="cpu-1", phase="Running")
    Member.objects.filter(name="train-1").update(node="cpu-1", phase="Succeeded")  # done: frees its room
    Member.objects.filter(name="train-2").update(node="cpu-2", phase="Pending")


def test_nodes_show_allocatable_used_pods_cordon_and_readiness(as_alice):
    cluster()
    nodes = {n["name"]: n for n in as_alice.get("/api/v1/nodes/").json()}
    assert nodes["cpu-1"]["used"] == {"cpu": 1000, "memory": 2**30}
    assert nodes["cpu-1"]["pods"] == 1
    assert (nodes["cpu-2"]["unschedulable"], nodes["cpu-2"]["pods"]) == (True, 1)
    assert (
        nodes["gpu-1"]["ready"],
        nodes["gpu-1"]["used"],
        nodes["gpu-1"]["allocatable"]["nvidia.com/gpu"],
    ) == (
        False,
        {},
        4,
    )


def test_the_cluster_summary_counts_only_schedulable_capacity_and_gangs_by_phase(as_alice, as_olga):
    cluster()
    make_gang("etl", "done", pods=1, submitter="bob")
    Gang.objects.filter(name="done").update(phase="Finished")
    body = as_alice.get("/api/v1/cluster/").json()
    assert body["nodes"] == {"total": 3, "ready": 2, "schedulable": 1}
    assert body["resources"]["cpu"] == {"capacity": 8000, "used": 2000, "free": 6000}
    assert body["resources"]["nvidia.com/gpu"] == {"capacity": 0, "used": 0, "free": 0}
    assert body["pods"] == 2
    # A submitter counts only their own gangs; an operator every gang.
    assert body["gangsByPhase"] == {"Pending": 1}
    assert as_olga.get("/api/v1/cluster/").json()["gangsByPhase"] == {"Pending": 1, "Finished": 1}


def test_pending_demand_is_the_latest_cycles_for_everyone(as_alice, as_olga):
    """What the last cycle left pending, cluster-wide like capacity (the overview's live chart)."""
    cluster()
    assert as_alice.get("/api/v1/cluster/").json()["pendingDemand"] == {}  # no cycle yet
    now = timezone.now()
    SchedulingCycle.objects.create(started_at=now - timedelta(seconds=5), pending_demand={"cpu": 9000})
    SchedulingCycle.objects.create(
        started_at=now, pending_demand={"cpu": 120_000, "memory": 512 * 2**30, "nvidia.com/gpu": 48}
    )
    SchedulingCycle.objects.create(started_at=now - timedelta(seconds=1), pending_demand={})

    expected = {"cpu": 120_000, "memory": 512 * 2**30, "nvidia.com/gpu": 48}
    assert as_alice.get("/api/v1/cluster/").json()["pendingDemand"] == expected
    assert as_olga.get("/api/v1/cluster/").json()["pendingDemand"] == expected


def test_each_bound_pod_takes_one_of_its_nodes_pods(as_alice):
    """Kubernetes' ``pods`` resource: no pod requests it, every bound active pod uses one."""
    cluster()
    Node.objects.filter(name="cpu-1").update(allocatable={"cpu": 8000, "memory": 32 * 2**30, "pods": 110})
    nodes = {n["name"]: n for n in as_alice.get("/api/v1/nodes/").json()}
    assert nodes["cpu-1"]["used"]["pods"] == 1
    assert "pods" not in nodes["cpu-2"]["used"]  # a node without the resource does not grow it
    body = as_alice.get("/api/v1/cluster/").json()
    assert body["resources"]["pods"] == {"capacity": 110, "used": 1, "free": 109}


def test_other_schedulers_pods_count_as_used(as_alice):
    cluster()
    Node.objects.filter(name="cpu-1").update(external_usage={"cpu": 3000})  # kube-scheduler's pods
    nodes = {n["name"]: n for n in as_alice.get("/api/v1/nodes/").json()}
    assert nodes["cpu-1"]["used"] == {"cpu": 4000, "memory": 2**30}
    assert nodes["cpu-1"]["external"] == {"cpu": 3000}
    assert nodes["cpu-1"]["pods"] == 1  # gangsched's own
    body = as_alice.get("/api/v1/cluster/").json()
    assert body["resources"]["cpu"] == {"capacity": 8000, "used": 5000, "free": 3000}


def test_events_are_those_of_visible_gangs_newest_first_filtered_by_gang_and_kind(as_alice, as_olga):
    mine = make_gang("ml", "train")
    make_gang("etl", "nightly", submitter="bob")
    GangEvent.objects.create(gang=mine, kind="explained", reason="waiting")

    assert [(e["gang"], e["kind"]) for e in as_alice.get("/api/v1/events/").json()["results"]] == [
        ("ml/train", "explained"),
        ("ml/train", "created"),
    ]
    assert len(as_olga.get("/api/v1/events/").json()["results"]) == 3
    by_gang = as_olga.get("/api/v1/events/", {"gang": "etl/nightly"}).json()["results"]
    assert [(e["gang"], e["kind"]) for e in by_gang] == [("etl/nightly", "created")]
    by_kind = as_olga.get("/api/v1/events/", {"kind": "explained"}).json()["results"]
    assert [e["reason"] for e in by_kind] == ["waiting"]
