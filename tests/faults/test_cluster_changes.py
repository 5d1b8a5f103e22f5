"""The cluster changing under a waiting gang: a node removed, a pod deleted by someone else."""

import pytest

from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.models import BindJournal, BindState, Gang, Member, Node
from scheduler_core.services.delete import pod_delete
from scheduler_core.services.nodes import node_remove
from tests.loop.factories import GI, make_gang, make_nodes

from .invariants import assert_invariants
from .loop import Clock, settle, step

pytestmark = pytest.mark.django_db


def half_reserved() -> Gang:
    """A NonStrict gang of 3 holding reservations for 2 on n0, its third pod blocked by a busy n1."""
    make_nodes(2, cpu=2)
    Member.objects.create(namespace="x", name="busy", requests={"cpu": 2000}, node="n1", phase="Running")
    gang = make_gang("team/train", 3, cpu=1, mode="NonStrict")
    step(SimulatedCluster(failure_rate=0.0), Clock())
    assert Member.objects.filter(gang=gang, reserved_node="n0").count() == 2
    return gang


def bound(gang: Gang) -> int:
    return Member.objects.filter(gang=gang, node__isnull=False, phase__in=["Pending", "Running"]).count()


def test_a_node_removed_while_a_gang_is_half_reserved_frees_the_reservations():
    gang = half_reserved()
    node_remove(name="n0")
    assert not Member.objects.filter(reserved_node__isnull=False).exists()
    assert_invariants()
    Node.objects.create(name="n2", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110})
    settle(Clock())
    assert bound(gang) == 3


def test_a_reserved_pod_deleted_by_someone_else_is_replaced_and_the_gang_still_completes():
    gang = half_reserved()
    reserved = Member.objects.filter(gang=gang, reserved_node="n0").first()
    assert pod_delete(namespace="team", name=reserved.name, by="someone else") == "replaced"
    assert_invariants()
    Member.objects.filter(name="busy").update(phase="Succeeded")
    settle(Clock())
    assert bound(gang) == 3


def test_a_pod_deleted_while_its_gang_binds_are_journaled_leaves_no_partial_gang():
    """A worker died after journaling a gang's binds; then a member was deleted, which restarted
    the gang (requeued whole); then the recovery of the stale journal could bind only some of
    them. The requeued gang must not end up partially bound."""
    make_nodes(1, cpu=2)
    gang = make_gang("team/train", 3, cpu=1)
    Gang.objects.filter(pk=gang.pk).update(satisfied=True, phase="Scheduling")
    first, second, third = gang.members.order_by("name")
    for member, node in ((first, "n0"), (second, "n0"), (third, "gone-node")):
        BindJournal.objects.create(epoch=1, gang=gang, member=member, node=node)
    pod_delete(namespace="team", name=third.name, by="someone else")
    assert not Gang.objects.get(pk=gang.pk).satisfied  # requeued whole: 0/3 left
    step(SimulatedCluster(failure_rate=0.0), Clock())
    assert bound(gang) == 0
    assert not BindJournal.objects.filter(state=BindState.PENDING).exists()
