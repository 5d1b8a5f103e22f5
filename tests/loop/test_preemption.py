"""Preemption through the database and the simulated cluster: what is evicted, and the history.

The scheduling cycle (``cycle_run``, as a worker runs it) evicts through the backend; the
restart policy's sweep (``failures_handle``, run by the kubelet tick) recreates the pods it
deleted; the next cycle binds the preemptor on the room they left.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from scheduler_core import tasks
from scheduler_core.models import Gang, GangEvent, GangEventKind, Member, MemberPhase
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.lifecycle import failures_handle

from .factories import GI, make_gang, make_nodes
from .workers import Worker, wait_for

pytestmark = pytest.mark.django_db


def running(gang: Gang) -> list[str]:
    return sorted(
        gang.members.filter(node__isnull=False, phase__in=ACTIVE_MEMBER_PHASES).values_list("name", flat=True)
    )


def low_running(min_member: int) -> Gang:
    """batch/low, priority 0, runs 4 one-CPU pods on the one 4-CPU node; low-3 started last."""
    make_nodes(1, cpu=4)
    low = make_gang("batch/low", 4, cpu=1, min_member=min_member, priority=0)
    cycle_run(holder="test")
    now = timezone.now()
    for index, member in enumerate(low.members.order_by("name")):
        Member.objects.filter(pk=member.pk).update(started_at=now - timedelta(seconds=100 - index))
    assert len(running(low)) == 4
    return low


def urgent() -> Gang:
    gang = make_gang("prod/high", 2, cpu=1, priority=10)
    gang.members.update(priority=10)
    return gang


def preempted_events(gang: Gang) -> list[GangEvent]:
    return list(GangEvent.objects.filter(gang=gang, kind=GangEventKind.PREEMPTED).order_by("id"))


def test_a_two_pod_gang_evicts_the_two_youngest_elastic_members_and_records_them():
    low = low_running(min_member=1)
    high = urgent()
    cycle_run(holder="test")
    assert running(low) == ["low-0", "low-1"]
    deleted = low.members.filter(phase=MemberPhase.FAILED)
    assert sorted(deleted.values_list("name", flat=True)) == ["low-2", "low-3"]
    low.refresh_from_db()
    assert low.satisfied  # it keeps its minimum: not requeued
    [event] = preempted_events(low)
    assert event.details == {"scope": "elastic", "taken": ["batch/low-3", "batch/low-2"]}
    assert event.reason == (
        "preempted by prod/high (priority 10): elastic member above minMember 1 of gang batch/low, "
        "lowest priority (2 members: batch/low-3, batch/low-2)"
    )
    assert event.cycle is not None
    high.refresh_from_db()
    assert high.reason == "Preempting"
    assert "batch/low-3, batch/low-2 (elastic members above minMember 1 of gang batch/low" in high.message

    failures_handle()  # the restart policy recreates the two deleted pods, pending
    cycle_run(holder="test")
    cycle_run(holder="test")  # the recreated extras wait for free room: they never preempt
    assert running(high) == ["high-0", "high-1"]
    assert running(low) == ["low-0", "low-1"]
    assert len(preempted_events(low)) == 1
    assert sorted(
        low.members.filter(phase=MemberPhase.PENDING, node__isnull=True).values_list("name", flat=True)
    ) == [
        "low-2",
        "low-3",
    ]


def test_a_gang_that_cannot_keep_its_minimum_is_preempted_whole_and_its_history_says_so():
    low = low_running(min_member=3)
    high = urgent()
    cycle_run(holder="test")
    low.refresh_from_db()
    assert not low.satisfied and low.phase == "Pending"
    assert running(low) == []
    [event] = preempted_events(low)
    assert event.reason.startswith(
        "preempted by prod/high (priority 10): whole gang batch/low, lowest priority"
    )
    assert "4 members: batch/low-0, batch/low-1, batch/low-2, batch/low-3" in event.reason
    assert sorted(event.details["taken"]) == [f"batch/low-{i}" for i in range(4)]
    cycle_run(holder="test")
    assert running(high) == ["high-0", "high-1"]


@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_takes_only_the_elastic_members_the_preemptor_needs():
    """The same scenario (a two-pod gang, a four-pod elastic job) in a real worker process: its
    cycles evict, its kubelet tick recreates the deleted pods, and the preemptor binds; history
    names the members taken."""
    make_nodes(1, cpu=4)
    low = make_gang("batch/low", 4, cpu=1, min_member=1, priority=0)
    worker = Worker("w1")
    try:
        tasks.schedule.delay()
        wait_for(lambda: len(running(low)) == 4, what="batch/low to run")
        now = timezone.now()
        for index, member in enumerate(low.members.order_by("name")):
            Member.objects.filter(pk=member.pk).update(started_at=now - timedelta(seconds=100 - index))
        high = urgent()
        tasks.schedule.delay()
        wait_for(lambda: preempted_events(low), what="the preemption")

        def bound() -> bool:
            tasks.kubelet.delay()  # recreates the deleted pods; asks for a cycle: room was freed
            tasks.schedule.delay()
            return running(high) == ["high-0", "high-1"]

        wait_for(bound, timeout=40, interval=1.0, what="prod/high to bind")
    finally:
        worker.stop()
    assert running(low) == ["low-0", "low-1"]
    [event] = preempted_events(low)
    assert event.details["taken"] == ["batch/low-3", "batch/low-2"]
    assert "elastic member above minMember 1 of gang batch/low" in event.reason


def test_a_lone_pod_preempts_a_lone_pod_says_so_in_the_log_and_binds_on_its_nomination(caplog):
    """Two pods of no gang: the priority-10 one evicts the priority-0 one (the pod's annotation
    and the worker's log say why: no gang history holds it), is nominated on the room, and binds
    there in the cycle after the eviction."""
    make_nodes(1, cpu=4)
    requests = {"cpu": 4000, "memory": GI}
    Member.objects.create(namespace="batch", name="low", requests=requests, priority=0)
    cycle_run(holder="test")
    Member.objects.create(namespace="prod", name="high", requests=requests, priority=10)

    with caplog.at_level("INFO", logger="scheduler_core.services.cycle"):
        cycle_run(holder="test")

    low = Member.objects.get(name="low")
    assert low.phase == MemberPhase.FAILED and "preempted" in low.annotations["gangsched.io/deleted-reason"]
    assert any(record.getMessage().startswith("pod batch/low evicted: ") for record in caplog.records)
    assert Member.objects.get(name="high").reserved_node == "n0"

    cycle_run(holder="test")

    high = Member.objects.get(name="high")
    assert (high.node, high.reserved_node) == ("n0", None)
