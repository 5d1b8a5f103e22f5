"""seed_cluster, submit_demo, ensure_operator, run as an operator would run them."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from scheduler_core.engine import run_cycle
from scheduler_core.models import Gang, Member, Node, Topology
from scheduler_core.snapshot.build import build_snapshot

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_seeding_builds_three_cpu_nodes_per_tainted_gpu_node():
    assert "Added 16 nodes" in run("seed_cluster")

    gpu = Node.objects.get(name="gpu-01")
    cpu = Node.objects.filter(name__startswith="cpu-")
    assert cpu.count() == 12
    assert all(node.labels["node-pool"] == "cpu" and node.taints == [] for node in cpu)
    assert gpu.allocatable["nvidia.com/gpu"] == 8
    assert {k: v for k, v in gpu.labels.items() if "/" not in k} == {"node-pool": "gpu", "gpu-model": "a100"}
    assert gpu.taints == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]


def test_the_demo_fleet_has_racks_of_four_two_to_a_block_and_the_demo_topology():
    """The rule docs/simulated-cluster.md states, per pool, by the node's number."""
    assert "topology demo: block > rack > host" in run("seed_cluster")

    where = {
        node.name: (node.labels["topology.gangsched.io/block"], node.labels["topology.gangsched.io/rack"])
        for node in Node.objects.all()
    }
    assert where["cpu-01"] == where["cpu-04"] == ("cpu-block-01", "cpu-rack-01")
    assert where["cpu-05"] == ("cpu-block-01", "cpu-rack-02")
    assert where["cpu-09"] == where["cpu-12"] == ("cpu-block-02", "cpu-rack-03")
    assert {where[f"gpu-0{i}"] for i in range(1, 5)} == {("gpu-block-01", "gpu-rack-01")}
    assert Node.objects.get(name="gpu-02").labels["kubernetes.io/hostname"] == "gpu-02"
    demo = Topology.objects.get(name="demo")
    assert demo.levels == [
        "topology.gangsched.io/block",
        "topology.gangsched.io/rack",
        "kubernetes.io/hostname",
    ]
    Topology.objects.filter(name="demo").update(levels=["topology.gangsched.io/rack"])
    assert "topology" not in run("seed_cluster", "--nodes", "20")  # an existing one is left alone
    assert Node.objects.get(name="gpu-05").labels["topology.gangsched.io/rack"] == "gpu-rack-02"
    assert Topology.objects.get(name="demo").levels == ["topology.gangsched.io/rack"]


def test_seeding_again_adds_only_missing_nodes_and_if_empty_adds_none():
    run("seed_cluster", "--nodes", "4")

    assert "Added 4 nodes" in run("seed_cluster", "--nodes", "8")  # cpu-04..06 and gpu-02
    assert "nothing to do" in run("seed_cluster", "--nodes", "100", "--if-empty")
    assert Node.objects.count() == 8


def test_the_demo_can_be_submitted_twice_under_new_names():
    run("submit_demo")
    out = run("submit_demo")

    assert "Demo run 2" in out
    assert Gang.objects.filter(namespace="demo").count() == 12
    assert Gang.objects.get(name="sweep-r2").mode == "NonStrict"
    assert Gang.objects.get(name="notebook-r1").style == "Soft"


def test_the_demo_fits_the_seeded_cluster_except_the_gang_meant_not_to():
    run("seed_cluster")
    run("submit_demo")

    result = run_cycle(build_snapshot(), now=0.0)

    bound_gangs = {bind.gang for bind in result.binds}
    assert {"demo/etl-r1", "demo/analytics-r1", "demo/llm-train-r1"} <= bound_gangs
    assert "demo/too-big-r1" not in bound_gangs
    assert "demo/too-big-r1" in result.explanations
    gpu_pods = Member.objects.filter(requests__has_key="nvidia.com/gpu")
    placed = {bind.pod: bind.node for bind in result.binds}
    assert all(placed[p.key].startswith("gpu-") for p in gpu_pods if p.key in placed)


def test_an_operator_is_created_once_with_a_printed_password():
    out = run("ensure_operator", "--port", "9000")

    assert "Sign in at http://127.0.0.1:9000/ as operator" in out
    password = out.split("password: ", 1)[1].split()[0]
    assert get_user_model().objects.get(username="operator").check_password(password)
    assert "nothing to do" in run("ensure_operator")


def test_an_operator_password_can_be_set():
    run("ensure_operator")

    run("ensure_operator", "--password", "correct-horse")

    assert get_user_model().objects.get(username="operator").check_password("correct-horse")
