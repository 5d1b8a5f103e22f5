"""Node services: quantities in, canonical amounts stored; removal fails pods and restarts gangs."""

import pytest

from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, GangEvent, GangEventKind, Member, MemberPhase, Node
from scheduler_core.services.kubelet import kubelet_tick
from scheduler_core.services.nodes import node_add, node_cordon, node_remove, node_set_ready
from tests.cluster.world import NOW, bind_directly, cpu_node, gang, member

pytestmark = pytest.mark.django_db


def test_a_node_is_stored_in_canonical_units():
    node = node_add(
        name="gpu-a",
        allocatable={"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": 110},
        labels={"node-pool": "gpu"},
        taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
    )

    node.refresh_from_db()
    assert node.allocatable == {"cpu": 64000, "memory": 256 * 2**30, "nvidia.com/gpu": 8, "pods": 110}
    assert node.labels == {"node-pool": "gpu"}


def test_a_bad_quantity_names_the_node_and_the_resource():
    with pytest.raises(ValueError, match=r"node gpu-a: allocatable: .*'lots'.* for memory"):
        node_add(name="gpu-a", allocatable={"cpu": "64", "memory": "lots"})
    assert not Node.objects.exists()


def test_a_bad_taint_is_refused_with_the_node_name():
    with pytest.raises(ValueError, match="node cpu-a: .*effect"):
        node_add(name="cpu-a", allocatable={"cpu": "8"}, taints=[{"key": "x", "effect": "Sometimes"}])


def test_a_node_name_is_added_once():
    cpu_node("cpu-a")

    with pytest.raises(ValueError, match="node cpu-a already exists"):
        cpu_node("cpu-a")


def test_removing_a_node_fails_its_pods_and_restarts_their_gangs():
    cpu_node("cpu-a")
    cpu_node("cpu-b")
    train = gang("train", size=2)
    other = gang("other", size=1)
    Gang.objects.filter(pk=train.pk).update(satisfied=True)
    bind_directly(train, "cpu-a")
    bind_directly(other, "cpu-b")
    Member.objects.filter(name="other-0").update(node=None, reserved_node="cpu-a")
    kubelet_tick(now=NOW)

    assert node_remove(name="cpu-a") == 2

    assert not Node.objects.filter(name="cpu-a").exists()
    train.refresh_from_db()
    assert (train.phase, train.satisfied) == (GangPhase.PENDING.value, False)
    pods = set(Member.objects.filter(gang=train).values_list("phase", "node"))
    assert pods == {(MemberPhase.PENDING, None)}
    assert member("other-0").reserved_node is None
    assert "node removed" in GangEvent.objects.get(gang=train, kind=GangEventKind.RESTARTED).reason


def test_cordon_and_readiness_are_switches_on_the_node():
    cpu_node("cpu-a")

    assert node_cordon(name="cpu-a").unschedulable is True
    assert node_cordon(name="cpu-a", cordon=False).unschedulable is False
    assert node_set_ready(name="cpu-a", ready=False).ready is False


def test_an_unknown_node_is_named_in_the_error():
    with pytest.raises(ValueError, match="node nowhere does not exist"):
        node_remove(name="nowhere")
