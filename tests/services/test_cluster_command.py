"""`manage.py cluster`: the command-line way to change the simulated cluster at run time."""

import pytest
from django.core.management import CommandError, call_command

from scheduler_core.models import Member, Node

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("cluster", *args, stdout=out)
    return out.getvalue()


def test_nodes_are_added_cordoned_and_removed():
    assert "added" in run(
        "add-node",
        "n1",
        "--cpu",
        "8",
        "--memory",
        "32Gi",
        "--gpu",
        "2",
        "--label",
        "zone=a",
        "--taint",
        "gpu=yes:NoSchedule",
    )
    node = Node.objects.get(name="n1")
    assert node.allocatable == {"cpu": 8000, "memory": 32 << 30, "pods": 110, "nvidia.com/gpu": 2}
    assert node.labels == {"zone": "a"}
    assert node.taints == [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]
    run("cordon", "n1")
    assert Node.objects.get(name="n1").unschedulable
    run("uncordon", "n1")
    assert not Node.objects.get(name="n1").unschedulable
    run("remove-node", "n1")
    assert not Node.objects.filter(name="n1").exists()


def test_bad_input_is_a_clear_error():
    with pytest.raises(CommandError, match="memory"):
        run("add-node", "n1", "--cpu", "8", "--memory", "lots")
    with pytest.raises(CommandError, match="expected KEY"):
        run("add-node", "n1", "--cpu", "8", "--memory", "1Gi", "--taint", "nonsense")
    with pytest.raises(CommandError, match="not bound"):
        run("fail-pod", "ns/ghost")


def test_a_pod_can_be_failed_by_hand():
    Node.objects.create(name="n1", allocatable={"cpu": 4000})
    Member.objects.create(namespace="ns", name="p", requests={"cpu": 1000}, node="n1", phase="Running")
    assert "failed" in run("fail-pod", "ns/p")
    assert Member.objects.get(name="p").phase == "Failed"
