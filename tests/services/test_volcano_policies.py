"""A Volcano Job's policies in the lifecycle: RestartJob bounded by maxRetry, AbortJob, TerminateJob,
and PodEvicted told apart from PodFailed."""

import pytest

from scheduler_core.cluster.simulated import DELETED_REASON
from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, GangEvent, GangEventKind, Member, MemberPhase
from scheduler_core.services.kubelet import kubelet_tick, pod_fail
from scheduler_core.services.lifecycle import failures_handle
from tests.cluster.world import NOW, bind_directly, later

from .test_lifecycle import running_gang

pytestmark = pytest.mark.django_db


def vcjob(**policy):
    train = running_gang(size=2, min_member=2)
    Gang.objects.filter(pk=train.pk).update(**policy)
    train.refresh_from_db()
    return train


def run_again(train):
    """The requeued gang is placed and runs again."""
    Gang.objects.filter(pk=train.pk).update(satisfied=True, phase=GangPhase.SCHEDULING.value)
    bind_directly(train, "cpu-a")
    kubelet_tick(now=NOW)


def test_restart_job_requeues_whole_gangs_until_max_retry_then_the_gang_fails():
    train = vcjob(failure_policy="RestartJob", max_retry=2)
    for attempt in (1, 2):
        pod_fail("ml", "train-0", "exit code 1", now=later(attempt))
        train.refresh_from_db()
        assert (train.phase, train.retries) == (GangPhase.PENDING.value, attempt)
        assert set(Member.objects.filter(gang=train).values_list("phase", flat=True)) == {MemberPhase.PENDING}
        run_again(train)
    pod_fail("ml", "train-1", "exit code 1", now=later(9))
    train.refresh_from_db()
    assert (train.phase, train.retries, train.message) == (
        GangPhase.FAILED.value,
        2,
        "maxRetry 2 exceeded (exit code 1)",
    )
    assert set(Member.objects.filter(gang=train).values_list("phase", flat=True)) == {MemberPhase.FAILED}
    assert (
        GangEvent.objects.get(gang=train, kind=GangEventKind.FAILED).reason
        == "maxRetry 2 exceeded (exit code 1)"
    )
    assert [e.reason.split(" (")[0] for e in GangEvent.objects.filter(gang=train, kind="restarted")] == [
        "RestartJob",
        "RestartJob",
    ]


def test_max_retry_zero_fails_at_the_first_failure():
    train = vcjob(failure_policy="RestartJob", max_retry=0)
    pod_fail("ml", "train-0", "oom", now=later(1))
    train.refresh_from_db()
    assert train.phase == GangPhase.FAILED.value and train.message == "maxRetry 0 exceeded (oom)"


@pytest.mark.parametrize(
    ("action", "phase", "kind"),
    [
        ("AbortJob", GangPhase.FAILED, GangEventKind.FAILED),
        ("TerminateJob", GangPhase.KILLED, GangEventKind.KILLED),
    ],
)
def test_abort_job_fails_and_terminate_job_kills_deleting_the_pods(action, phase, kind):
    train = vcjob(failure_policy=action)
    pod_fail("ml", "train-0", "oom", now=later(1))
    train.refresh_from_db()
    assert train.phase == phase.value and train.message == f"a member failed (oom): {action}"
    assert DELETED_REASON in Member.objects.get(name="train-1").annotations
    assert GangEvent.objects.filter(gang=train, kind=kind).exists()


def test_an_eviction_takes_the_pod_evicted_action():
    train = vcjob(failure_policy="AbortJob", eviction_policy="RestartJob", max_retry=3)
    Member.objects.filter(name="train-0").update(
        phase=MemberPhase.FAILED, annotations={DELETED_REASON: "evicted by an operator"}
    )
    assert failures_handle(now=later(2)) == [train.pk]
    train.refresh_from_db()
    assert (train.phase, train.retries) == (GangPhase.PENDING.value, 1)


def test_without_policies_the_restart_policy_decides_and_retries_stay_zero():
    train = vcjob(max_retry=1)
    pod_fail("ml", "train-0", "oom", now=later(1))
    train.refresh_from_db()
    assert (train.phase, train.retries) == (GangPhase.PENDING.value, 0)
