"""kubelet_tick: pods start, run their duration and end; gangs follow; ticks are idempotent."""

import pytest

from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, GangEvent, GangEventKind, Member, MemberPhase
from scheduler_core.services.kubelet import kubelet_tick, pod_fail
from scheduler_core.services.nodes import node_set_ready
from tests.cluster.world import NOW, bind_directly, cpu_node, gang, later, member

pytestmark = pytest.mark.django_db


def test_bound_pods_start_running_at_now_and_unbound_ones_wait():
    cpu_node("cpu-a")
    train = gang("train", size=2)
    Member.objects.filter(name="train-0").update(node="cpu-a")

    counts = kubelet_tick(now=NOW)

    assert counts["started"] == 1
    assert (member("train-0").phase, member("train-0").started_at) == (MemberPhase.RUNNING, NOW)
    assert member("train-1").phase == MemberPhase.PENDING
    train.refresh_from_db()
    assert train.running == 1
    assert train.schedule_start_time == NOW


def test_a_gang_runs_once_min_member_pods_run():
    cpu_node("cpu-a")
    train = gang("train", size=3, min_member=2)
    Gang.objects.filter(pk=train.pk).update(phase=GangPhase.SCHEDULING.value, satisfied=True)
    Member.objects.filter(name__in=["train-0", "train-1"]).update(node="cpu-a")

    kubelet_tick(now=NOW)

    train.refresh_from_db()
    assert (train.phase, train.running) == (GangPhase.RUNNING.value, 2)


def test_pods_succeed_when_their_duration_has_elapsed_and_free_the_node():
    cpu_node("cpu-a")
    train = gang("train", size=2, duration=30.0)
    bind_directly(train, "cpu-a")
    kubelet_tick(now=NOW)

    assert kubelet_tick(now=later(29))["succeeded"] == 0
    assert kubelet_tick(now=later(30))["succeeded"] == 2

    pod = member("train-0")
    assert (pod.phase, pod.finished_at, pod.node) == (MemberPhase.SUCCEEDED, later(30), "cpu-a")
    train.refresh_from_db()
    assert (train.phase, train.running, train.succeeded) == (GangPhase.FINISHED.value, 0, 2)
    assert GangEvent.objects.filter(gang=train, kind=GangEventKind.FINISHED).count() == 1


def test_a_pod_without_a_duration_runs_until_stopped():
    cpu_node("cpu-a")
    train = gang("train", size=1, duration=None)
    bind_directly(train, "cpu-a")
    kubelet_tick(now=NOW)

    kubelet_tick(now=later(10**6))

    assert member("train-0").phase == MemberPhase.RUNNING


def test_a_gang_expecting_more_members_is_not_finished_by_the_ones_it_has():
    cpu_node("cpu-a")
    train = gang("train", size=2, total_number=3, duration=1.0)
    bind_directly(train, "cpu-a")
    kubelet_tick(now=NOW)
    kubelet_tick(now=later(5))

    train.refresh_from_db()
    assert (train.succeeded, train.phase) == (2, GangPhase.RUNNING.value)


def test_a_second_tick_at_the_same_time_changes_nothing():
    cpu_node("cpu-a")
    train = gang("train", size=2, duration=30.0)
    bind_directly(train, "cpu-a")
    kubelet_tick(now=NOW)
    first = kubelet_tick(now=later(30))
    events = GangEvent.objects.count()
    updated = Gang.objects.get(pk=train.pk).updated

    second = kubelet_tick(now=later(30))

    assert first["succeeded"] == 2
    assert second == {"lost": 0, "started": 0, "succeeded": 0, "restarted": 0, "gangs": 0}
    assert GangEvent.objects.count() == events
    assert Gang.objects.get(pk=train.pk).updated == updated


def test_pods_on_a_node_that_is_not_ready_are_lost_and_their_gang_restarts():
    cpu_node("cpu-a")
    cpu_node("cpu-b")
    train = gang("train", size=2)
    Gang.objects.filter(pk=train.pk).update(satisfied=True)
    Member.objects.filter(name="train-0").update(node="cpu-a")
    Member.objects.filter(name="train-1").update(node="cpu-b")
    kubelet_tick(now=NOW)
    node_set_ready(name="cpu-b", ready=False)

    counts = kubelet_tick(now=later(5))

    assert (counts["lost"], counts["restarted"]) == (1, 1)
    assert set(Member.objects.values_list("phase", "node")) == {(MemberPhase.PENDING, None)}
    event = GangEvent.objects.get(gang=train, kind=GangEventKind.RESTARTED)
    assert "node lost" in event.reason


def test_a_pod_failed_on_request_goes_through_its_gang_restart_policy():
    cpu_node("cpu-a")
    train = gang("train", size=3, min_member=2)
    Gang.objects.filter(pk=train.pk).update(satisfied=True)
    bind_directly(train, "cpu-a")
    kubelet_tick(now=NOW)

    assert pod_fail("ml", "train-2", "OOMKilled", now=later(1)) is True

    # Two of three still run, min_member is 2: only the failed one is recreated.
    assert member("train-2").phase == MemberPhase.PENDING
    assert member("train-0").phase == MemberPhase.RUNNING
    assert "OOMKilled" in GangEvent.objects.get(kind=GangEventKind.RESTARTED).reason


def test_failing_a_pod_that_is_not_running_does_nothing():
    gang("train", size=1)

    assert pod_fail("ml", "train-0", "OOMKilled") is False
    assert pod_fail("ml", "ghost", "OOMKilled") is False
