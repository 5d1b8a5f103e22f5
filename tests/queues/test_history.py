"""The queue history (services/queue_history.py): each cycle's per-queue figures kept as one
sample per queue per minute, pruned past ``GANGSCHED_QUEUE_HISTORY_HOURS``; and reclaim recorded
in the victim gang's history with the queue the room went to."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from scheduler_core import tasks
from scheduler_core.models import GangEvent, QueueSample, SchedulingCycle
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.queue_history import queue_samples_prune, queue_samples_record
from scheduler_core.services.queues import queues_put
from tests.loop.factories import make_gang, make_nodes

from .conftest import spec

pytestmark = pytest.mark.django_db
AT = datetime(2026, 11, 25, 15, 30, 10, tzinfo=UTC)


def figures(usage: int, **extra) -> dict:
    return {
        "path": "ml/nlp",
        "parent": "ml",
        "leaf": True,
        "open": True,
        "weight": 1.0,
        "usage": {"cpu": usage},
        "guarantee": {"cpu": 4000},
        "fair_share": {"cpu": 6000},
        "max": {"cpu": 8000},
        "pending": {},
        "borrowed": {"cpu": max(usage - 4000, 0)},
        "lent": {},
        **extra,
    }


def test_a_cycle_keeps_each_queues_figures():
    make_nodes(2)  # 8 CPUs
    queues_put([spec("ml"), spec("nlp", parent="ml", guarantee={"cpu": 2000}), spec("cv", parent="ml")])
    make_gang("team/a", 3, queue="nlp")
    make_gang("team/b", 8, queue="cv")  # does not fit next to a: pending demand

    cycle_run(holder="test")

    cycle = SchedulingCycle.objects.get()
    samples = {s.queue: s for s in QueueSample.objects.all()}
    assert set(samples) == {"ml", "nlp", "cv", "default"}  # the implicit default queue too
    nlp = samples["nlp"]
    assert nlp.cycle == cycle and nlp.path == "ml/nlp" and nlp.open
    assert nlp.minute == cycle.started_at.replace(second=0, microsecond=0)
    assert nlp.usage["cpu"] == 3000 and nlp.guarantee == {"cpu": 2000}
    assert nlp.borrowed["cpu"] == 1000
    assert samples["cv"].pending["cpu"] == 8000
    assert samples["ml"].usage["cpu"] == 3000


def test_one_sample_per_queue_and_minute_the_last_cycle_of_the_minute_wins():
    first = SchedulingCycle.objects.create()
    queue_samples_record({"nlp": figures(1000)}, cycle=first, at=AT)
    row = QueueSample.objects.get()
    assert (row.cycle, row.created, row.usage) == (first, AT, {"cpu": 1000})

    # Same minute, same figures: the row is not written again.
    same = SchedulingCycle.objects.create()
    queue_samples_record({"nlp": figures(1000)}, cycle=same, at=AT + timedelta(seconds=20))
    row = QueueSample.objects.get()
    assert (row.cycle, row.created) == (first, AT)

    # Same minute, other figures: replaced, still one row.
    later = SchedulingCycle.objects.create()
    queue_samples_record({"nlp": figures(5000)}, cycle=later, at=AT + timedelta(seconds=40))
    row = QueueSample.objects.get()
    assert (row.cycle, row.usage, row.borrowed) == (later, {"cpu": 5000}, {"cpu": 1000})

    # The next minute: a row of its own.
    queue_samples_record({"nlp": figures(5000)}, cycle=later, at=AT + timedelta(seconds=60))
    assert QueueSample.objects.count() == 2


def test_the_history_is_bounded_by_the_window(settings):
    settings.GANGSCHED_QUEUE_HISTORY_HOURS = 2
    for minutes in range(0, 4 * 60, 30):  # four hours, every half hour
        queue_samples_record({"nlp": figures(minutes)}, cycle=None, at=AT - timedelta(minutes=minutes))
    assert QueueSample.objects.count() == 8

    assert queue_samples_prune(now=AT) == 4
    kept = sorted(QueueSample.objects.values_list("minute", flat=True))
    assert kept[0] >= AT - timedelta(hours=2) and len(kept) == 4
    assert queue_samples_prune(now=AT) == 0


def test_no_queues_no_history():
    make_nodes(1)
    make_gang("team/a", 1)
    cycle_run(holder="test")
    assert not QueueSample.objects.exists()


def test_reclaim_is_in_the_victims_history_with_the_queue_the_room_went_to():
    """Reclaim from a queue over its fair share: the shape of Kueue's
    ``pkg/scheduler/preemption/preemption_test.go`` case "reclaim quota from borrower" (a
    ClusterQueue within its nominal quota evicts a borrowing cohort member's workload),
    here checked in the victim gang's history."""
    make_nodes(2)  # 8 CPUs
    queues_put(
        [
            spec("root"),
            spec("research", parent="root", guarantee={"cpu": 4000}),
            spec("prod", parent="root", guarantee={"cpu": 4000}),
        ]
    )
    first = make_gang("lab/first", 4, queue="research")
    second = make_gang("lab/second", 4, queue="research")  # borrows prod's idle guarantee
    cycle_run(holder="test")
    assert first.members.filter(node__isnull=False).count() == 4
    assert second.members.filter(node__isnull=False).count() == 4

    make_gang("shop/urgent", 4, queue="prod", created=timezone.now())
    cycle_run(holder="test")

    event = GangEvent.objects.get(kind="preempted")
    assert event.gang in (first, second)
    assert event.details["reclaimedBy"] == "prod"
    assert event.details["scope"] == "gang" and len(event.details["taken"]) == 4
    assert "reclaimed by queue root/prod" in event.reason


def test_the_timeout_sweep_ages_the_history_out(settings):
    """The periodic sweep (Celery beat's ``timeout-sweep``) is what keeps the table bounded."""
    settings.GANGSCHED_QUEUE_HISTORY_HOURS = 1
    now = timezone.now()
    queue_samples_record({"nlp": figures(1000)}, cycle=None, at=now - timedelta(hours=3))
    queue_samples_record({"nlp": figures(2000)}, cycle=None, at=now)

    tasks.sweep_timeouts()

    assert list(QueueSample.objects.values_list("usage", flat=True)) == [{"cpu": 2000}]
