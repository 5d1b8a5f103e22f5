"""Retry and kill: one state change and one history record, however often they are pressed."""

import threading

import pytest
from django.db import connection

from scheduler_core.models import Gang, GangEvent, Member, Node
from scheduler_core.services.cycle import TIMEOUT_ANNOTATION
from scheduler_core.services.operator import GangActionError, gang_kill, gang_retry

pytestmark = pytest.mark.django_db


def timed_out_gang() -> Gang:
    gang = Gang.objects.create(namespace="ml", name="train", min_member=2, phase="TimedOut")
    for i in range(2):
        Member.objects.create(
            namespace="ml",
            name=f"train-{i}",
            gang=gang,
            requests={"cpu": 1000},
            annotations={TIMEOUT_ANNOTATION: "true", "keep": "me"},
        )
    return gang


def events(gang: Gang, kind: str) -> int:
    return GangEvent.objects.filter(gang=gang, kind=kind).count()


def test_retry_sends_a_timed_out_gang_back_to_the_queue_and_clears_the_timeout_mark():
    gang = gang_retry(gang=timed_out_gang(), by="alice")
    assert gang.phase == "Pending" and gang.wait_started is None
    assert all(m.annotations == {"keep": "me"} for m in gang.members.all())
    assert events(gang, "retried") == 1


def test_retry_of_a_running_gang_is_refused_with_the_reason():
    gang = Gang.objects.create(namespace="ml", name="ok", min_member=1, phase="Running")
    with pytest.raises(GangActionError, match="ml/ok is Running: only TimedOut or Failed"):
        gang_retry(gang=gang, by="alice")


def test_kill_deletes_running_pods_and_fails_pending_ones():
    Node.objects.create(name="n0", allocatable={"cpu": 8000})
    gang = Gang.objects.create(
        namespace="ml", name="job", min_member=2, phase="Running", satisfied=True,
        reason="InsufficientResources", message="short by 1", details={"short": 1},
    )  # fmt: skip
    Member.objects.create(namespace="ml", name="job-0", gang=gang, requests={}, node="n0", phase="Running")
    Member.objects.create(namespace="ml", name="job-1", gang=gang, requests={}, reserved_node="n0")
    gang = gang_kill(gang=gang, by="bob", reason="runaway")
    gang.refresh_from_db()
    assert gang.phase == "Killed"
    assert (gang.reason, gang.message, gang.details) == ("", "", {})  # no "why not placed" stays
    assert set(gang.members.values_list("phase", flat=True)) == {"Failed"}
    assert not gang.members.filter(reserved_node__isnull=False).exists()
    assert GangEvent.objects.get(gang=gang, kind="killed").reason == "killed by bob: runaway"
    with pytest.raises(GangActionError, match="cannot be killed"):
        gang_kill(gang=gang, by="bob")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("action", [gang_retry, gang_kill])
def test_ten_concurrent_presses_make_one_change_and_one_record(action):
    gang = timed_out_gang()
    outcomes: list[str] = []
    barrier = threading.Barrier(10)

    def press() -> None:
        try:
            barrier.wait()
            action(gang=Gang.objects.get(pk=gang.pk), by="operator")
            outcomes.append("changed")
        except GangActionError:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=press) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("changed") == 1 and outcomes.count("refused") == 9
    assert GangEvent.objects.filter(gang=gang, kind__in=["retried", "killed"]).count() == 1
