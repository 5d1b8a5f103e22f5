"""The sums migration 0019 keeps for the pages (scheduler_core/reads/tallies.py): each queue's bound and
waiting requests stay equal to a fresh sum over the members, through a gang's change of queue, pods
alone and a Kueue LocalQueue; the gang events per minute and submitter follow inserts, edits and
deletes; both are folded, aged out, and rebuilt by ``manage.py node_usage --repair``."""

from collections import Counter
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from scheduler_core.models import Gang, GangEvent, GangEventMinute, Member, Queue, QueueUsage
from scheduler_core.reads.node_usage import usage_compact
from scheduler_core.reads.queue_figures import queue_figures
from scheduler_core.reads.tallies import (
    POD_COUNT,
    event_counts,
    queue_charges,
    queue_charges_from_members,
    queue_drift,
    tallies_repair,
)
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.delete import gang_delete
from tests.loop.factories import GI, make_gang, make_nodes

pytestmark = pytest.mark.django_db


def in_step() -> dict:
    stored = queue_charges()
    assert stored == queue_charges_from_members()
    usage_compact()
    assert queue_charges() == stored and queue_drift() == {}
    return stored


def test_waiting_and_bound_pods_are_charged_to_their_gangs_queue():
    make_nodes(1, cpu=4)
    make_gang("ml/train", 3, cpu=1, queue="gpu")
    make_gang("ml/big", 2, cpu=8)  # cannot fit: stays waiting in "default"
    assert in_step() == {
        ("ml", "gpu", False): Counter({"cpu": 3000, "memory": 3 * GI, POD_COUNT: 3}),
        ("ml", "default", False): Counter({"cpu": 16000, "memory": 2 * GI, POD_COUNT: 2}),
    }
    cycle_run(holder="test")
    assert in_step()[("ml", "gpu", True)] == Counter({"cpu": 3000, "memory": 3 * GI, POD_COUNT: 3})
    Gang.objects.filter(name="train").update(queue="batch")  # a gang's queue changed: its pods move
    charges = in_step()
    assert ("ml", "gpu", True) not in charges and charges[("ml", "batch", True)][POD_COUNT] == 3
    gang = Gang.objects.get(name="train")
    gang.queue = "gpu"
    gang.save()  # every column written: the same move back
    assert in_step()[("ml", "gpu", True)][POD_COUNT] == 3
    gang_delete(namespace="ml", name="big")
    assert ("ml", "default", False) not in in_step()


def test_a_pod_alone_is_charged_to_its_own_queue_and_moves_with_it():
    Member.objects.create(namespace="web", name="solo", queue="batch", requests={"cpu": 500, "pods": 1})
    assert in_step() == {("web", "batch", False): Counter({"cpu": 500, "pods": 1, POD_COUNT: 1})}
    Member.objects.filter(name="solo").update(queue="gpu", node="n0")
    assert in_step() == {("web", "gpu", True): Counter({"cpu": 500, "pods": 1, POD_COUNT: 1})}
    Member.objects.filter(name="solo").update(phase="Succeeded")
    assert in_step() == {} and not QueueUsage.objects.exists()


def test_queue_figures_add_the_kept_sums_up_the_tree():
    top = Queue.objects.create(name="ml")
    Queue.objects.create(name="nlp", parent=top)
    make_nodes(1, cpu=4)
    make_gang("team/a", 2, cpu=1, queue="nlp")
    make_gang("team/b", 2, cpu=8, queue="nlp")
    cycle_run(holder="test")
    figures = queue_figures()
    assert figures["nlp"].used == {"cpu": 2000, "memory": 2 * GI}
    assert figures["nlp"].pending == {"cpu": 16000, "memory": 2 * GI} and figures["nlp"].pending_pods == 2
    assert figures["ml"].used == figures["nlp"].used and figures["ml"].pending_pods == 2


def test_pods_of_gangs_nobody_tries_are_stalled_not_pending(capsys):
    """A Hard-timed-out gang's pods still exist, Pending, but nothing places them until an
    operator retries the gang: the queue's pending demand must not count them (the Queues page
    once showed 31 GPUs pending where the waiting gangs asked for 12)."""
    top = Queue.objects.create(name="ml")
    Queue.objects.create(name="nlp", parent=top)
    make_gang("team/waits", 2, cpu=2, queue="nlp")
    timed_out = make_gang("team/timed-out", 3, cpu=4, queue="nlp")
    killed = make_gang("team/killed", 1, cpu=8, queue="nlp")
    Gang.objects.filter(pk=timed_out.pk).update(phase="TimedOut")
    Gang.objects.filter(pk=killed.pk).update(phase="Killed")
    figures = queue_figures()
    assert figures["nlp"].pending == {"cpu": 4000, "memory": 2 * GI} and figures["nlp"].pending_pods == 2
    assert figures["nlp"].stalled == {"cpu": 20000, "memory": 4 * GI} and figures["nlp"].stalled_pods == 4
    assert figures["ml"].pending == figures["nlp"].pending and figures["ml"].stalled_pods == 4
    call_command("describe", "queue", "nlp")
    out = capsys.readouterr().out
    assert "Pending:        cpu=4,memory=2Gi (2 pods)" in out
    assert "Stalled:        cpu=20,memory=4Gi (4 pods of timed-out or failed gangs)" in out
    Gang.objects.filter(pk=timed_out.pk).update(phase="Pending")  # retried: it waits again
    assert queue_figures()["nlp"].pending_pods == 5 and queue_figures()["nlp"].stalled_pods == 1


def test_drifted_queue_charges_are_found_and_repaired(capsys):
    make_gang("ml/train", 2, cpu=1)
    truth = in_step()
    QueueUsage.objects.create(namespace="ml", queue="default", bound=False, resource="cpu", amount=5)
    assert set(queue_drift()) == {("ml", "default", False)}
    with pytest.raises(CommandError, match="0 node\\(s\\) and 1 queue charge\\(s\\) drifted"):
        call_command("node_usage")
    assert "queue default (namespace ml, waiting): stored 2 pods, cpu 2005m" in capsys.readouterr().out
    call_command("node_usage", "--repair")
    assert queue_charges() == truth and queue_drift() == {}


def test_gang_events_are_counted_per_minute_and_submitter():
    now = timezone.now()
    minute = now.replace(second=0, microsecond=0)
    alice = make_gang("ml/a", 1, submitter="alice")
    bob = make_gang("ml/b", 1, submitter="bob")
    GangEvent.objects.bulk_create(
        [GangEvent(gang=alice, kind="created", created=now), GangEvent(gang=bob, kind="created", created=now),
         GangEvent(gang=bob, kind="bound", created=now),
         GangEvent(gang=bob, kind="bound", created=now - timedelta(hours=3))]  # too old to count
    )  # fmt: skip
    since = minute - timedelta(hours=1)
    kinds = ["created", "bound"]
    assert sorted(event_counts(since=since, kinds=kinds)) == [(minute, "bound", 1), (minute, "created", 2)]
    assert event_counts(since=since, kinds=kinds, submitter="alice") == [(minute, "created", 1)]
    GangEvent.objects.filter(gang=bob, kind="bound", created=now).update(created=now - timedelta(minutes=5))
    GangEvent.objects.filter(gang=alice).update(published_at=now)  # bookkeeping: counts the same
    assert (minute - timedelta(minutes=5), "bound", 1) in event_counts(since=since, kinds=kinds)
    GangEvent.objects.filter(gang=alice).delete()
    usage_compact()
    assert sorted(event_counts(since=since, kinds=kinds)) == [
        (minute - timedelta(minutes=5), "bound", 1),
        (minute, "created", 1),
    ]
    assert GangEventMinute.objects.count() == 2  # folded, zeros dropped
    GangEventMinute.objects.create(minute=minute - timedelta(hours=3), submitter="bob", kind="bound", n=1)
    GangEventMinute.objects.create(minute=minute, submitter="bob", kind="bound", n=7)  # drift
    usage_compact()
    assert GangEventMinute.objects.count() == 3  # the old minute aged out
    assert tallies_repair() == 3 + 2  # the waiting pods: cpu, memory, count; two minutes
    assert GangEventMinute.objects.count() == 2
