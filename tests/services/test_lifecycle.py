"""Restart policies: what a running gang does when members fail (kube-batch's QueueJob)."""

import pytest
from django.test import override_settings

from scheduler_core.cluster.simulated import DELETED_REASON
from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, GangEvent, GangEventKind, Member, MemberPhase, RestartPolicy
from scheduler_core.services.kubelet import kubelet_tick, pod_fail
from scheduler_core.services.lifecycle import FAILED_REASON, failures_handle
from tests.cluster.world import NOW, bind_directly, cpu_node, gang, later, member

pytestmark = pytest.mark.django_db


def running_gang(name="train", size=4, min_member=4, **fields):
    """A satisfied gang whose pods all run on cpu-a since NOW."""
    if not Member.objects.exists():
        cpu_node("cpu-a", cpu="64")
    train = gang(name, size=size, min_member=min_member, **fields)
    Gang.objects.filter(pk=train.pk).update(satisfied=True, phase=GangPhase.SCHEDULING.value)
    bind_directly(train, "cpu-a")
    kubelet_tick(now=NOW)
    train.refresh_from_db()
    assert train.phase == GangPhase.RUNNING.value
    return train


def phases(gang_obj):
    return sorted(Member.objects.filter(gang=gang_obj).values_list("name", "phase"))


def test_below_min_member_the_whole_gang_is_restarted():
    train = running_gang(size=4, min_member=4)

    pod_fail("ml", "train-1", "exit code 137", now=later(5))

    train.refresh_from_db()
    assert (train.phase, train.satisfied, train.wait_started, train.running) == (
        GangPhase.PENDING.value,
        False,
        None,
        0,
    )
    for pod in Member.objects.filter(gang=train):
        assert (pod.phase, pod.node, pod.reserved_node, pod.started_at, pod.finished_at) == (
            MemberPhase.PENDING,
            None,
            None,
            None,
            None,
        )
        assert FAILED_REASON not in pod.annotations
    event = GangEvent.objects.get(gang=train, kind=GangEventKind.RESTARTED)
    assert event.details["scope"] == "gang"
    assert "exit code 137" in event.reason


def test_at_or_above_min_member_only_the_failed_members_are_recreated():
    train = running_gang(size=4, min_member=3)

    pod_fail("ml", "train-3", "exit code 1", now=later(5))

    train.refresh_from_db()
    assert (train.phase, train.satisfied, train.running) == (GangPhase.RUNNING.value, True, 3)
    assert member("train-3").phase == MemberPhase.PENDING
    assert member("train-3").node is None
    assert member("train-0").phase == MemberPhase.RUNNING
    assert GangEvent.objects.get(gang=train, kind=GangEventKind.RESTARTED).details["scope"] == "failed"


def test_restart_failed_only_never_touches_the_members_still_running():
    train = running_gang(size=4, min_member=4, restart_policy=RestartPolicy.RESTART_FAILED_ONLY)

    pod_fail("ml", "train-0", "exit code 1", now=later(5))
    pod_fail("ml", "train-1", "exit code 1", now=later(5))

    assert phases(train) == [
        ("train-0", MemberPhase.PENDING),
        ("train-1", MemberPhase.PENDING),
        ("train-2", MemberPhase.RUNNING),
        ("train-3", MemberPhase.RUNNING),
    ]
    train.refresh_from_db()
    assert (train.phase, train.satisfied) == (GangPhase.RUNNING.value, True)


def test_never_fails_the_gang_and_deletes_what_still_runs():
    train = running_gang(size=3, min_member=3, restart_policy=RestartPolicy.NEVER)

    pod_fail("ml", "train-0", "exit code 2", now=later(5))

    train.refresh_from_db()
    assert (train.phase, train.failed, train.running) == (GangPhase.FAILED.value, 3, 0)
    assert {phase for _, phase in phases(train)} == {MemberPhase.FAILED}
    assert member("train-1").annotations[DELETED_REASON] == "gang ml/train failed"
    assert "exit code 2" in GangEvent.objects.get(gang=train, kind=GangEventKind.FAILED).reason
    # A failed gang is history: a second pass finds nothing to do.
    assert failures_handle(now=later(6)) == []


@override_settings(GANGSCHED_SIM_FAILURE_RATE=1.0)
def test_a_never_gang_fails_even_when_deleting_its_pods_fails():
    train = running_gang(size=2, min_member=2, restart_policy=RestartPolicy.NEVER)

    pod_fail("ml", "train-0", "exit code 2", now=later(5))

    train.refresh_from_db()
    assert train.phase == GangPhase.FAILED.value
    assert member("train-1").phase == MemberPhase.RUNNING  # runs to its end instead


def test_a_gang_not_yet_running_has_its_failed_members_recreated_whatever_the_policy():
    cpu_node("cpu-a")
    train = gang("train", size=3, restart_policy=RestartPolicy.NEVER)
    Member.objects.filter(name="train-0").update(phase=MemberPhase.FAILED, node="cpu-a")

    assert failures_handle(now=NOW) == [train.pk]

    train.refresh_from_db()
    assert train.phase == GangPhase.PENDING.value
    assert member("train-0").phase == MemberPhase.PENDING


def test_pods_deleted_through_the_backend_are_picked_up_by_the_next_tick():
    train = running_gang(size=2, min_member=2)
    Member.objects.filter(name="train-0").update(
        phase=MemberPhase.FAILED, annotations={DELETED_REASON: "evicted by an operator"}
    )

    counts = kubelet_tick(now=later(5))

    assert counts["restarted"] == 1
    assert "evicted by an operator" in GangEvent.objects.get(gang=train, kind=GangEventKind.RESTARTED).reason
    assert failures_handle(now=later(6)) == []


def test_a_lone_pod_that_fails_stays_failed():
    cpu_node("cpu-a")
    from scheduler_core.services.submit import pod_submit

    pod_submit(namespace="ml", name="solo", requests={"cpu": "1"})
    Member.objects.filter(name="solo").update(node="cpu-a")
    kubelet_tick(now=NOW)

    pod_fail("ml", "solo", "exit code 1", now=later(1))

    assert member("solo").phase == MemberPhase.FAILED


def test_a_never_gang_failed_by_a_lost_node_shows_its_final_counts():
    train = running_gang(size=2, min_member=2, restart_policy=RestartPolicy.NEVER)
    Member.objects.filter(name="train-0").update(node="gone")

    kubelet_tick(now=later(5))

    train.refresh_from_db()
    assert (train.phase, train.running, train.failed) == (GangPhase.FAILED.value, 0, 2)
