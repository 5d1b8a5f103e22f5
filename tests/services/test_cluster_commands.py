"""seed_cluster, submit_demo, ensure_operator, run as an operator would run them."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from scheduler_core.engine import run_cycle
from scheduler_core.models import Gang, Member, Node
from scheduler_core.snapshot import build_snapshot

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
    assert all(node.labels == {"node-pool": "cpu"} and node.taints == [] for node in cpu)
    assert gpu.allocatable["nvidia.com/gpu"] == 8
    assert gpu.labels == {"node-pool": "gpu", "gpu-model": "a100"}
    assert gpu.taints == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]


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

    assert "http://127.0.0.1:9000/admin/" in out
    password = out.split("password: ", 1)[1].split()[0]
    assert get_user_model().objects.get(username="operator").check_password(password)
    assert "nothing to do" in run("ensure_operator")


def test_an_operator_password_can_be_set():
    run("ensure_operator")

    run("ensure_operator", "--password", "correct-horse")

    assert get_user_model().objects.get(username="operator").check_password("correct-horse")
