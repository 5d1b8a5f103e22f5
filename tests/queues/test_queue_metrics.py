"""``/metrics``' queue families (dashboard/queue_metrics.py): each queue's latest sample per
resource, max only where limited, the open state, and reclaim evictions by victim queue and by
the queue the room went to."""

from datetime import timedelta

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from scheduler_core.models import GangEvent, LocalQueue, Queue
from scheduler_core.services.queue_history import queue_samples_record
from tests.cast import make_gang
from tests.security.test_metrics import scrape

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"


def sample(usage: int, **extra) -> dict:
    return {
        "path": "ml/nlp",
        "open": True,
        "usage": {GPU: usage, "cpu": 4000},
        "guarantee": {GPU: 4},
        "fair_share": {GPU: 6},
        "max": {GPU: 8},
        "pending": {GPU: 2},
        "borrowed": {GPU: max(usage - 4, 0)},
        "lent": {},
        **extra,
    }


def test_each_queue_reports_its_latest_sample(client):
    ml = Queue.objects.create(name="ml")
    Queue.objects.create(name="nlp", parent=ml, guarantee={GPU: 4}, max={GPU: 8})
    now = timezone.now()
    queue_samples_record({"nlp": sample(3)}, cycle=None, at=now - timedelta(minutes=2))
    queue_samples_record(
        {"nlp": sample(5), "ml": {"path": "ml", "open": False, "usage": {GPU: 5}}}, cycle=None, at=now
    )
    queue_samples_record({"gone": sample(1)}, cycle=None, at=now)  # no such queue any more

    samples = scrape(client)

    def value(name, queue, resource=None):
        labels = (("queue", queue),) if resource is None else (("queue", queue), ("resource", resource))
        return samples[(name, labels)]

    assert value("gangsched_queue_usage", "nlp", GPU) == 5
    assert value("gangsched_queue_usage", "nlp", "cpu") == 4000
    assert value("gangsched_queue_guarantee", "nlp", GPU) == 4
    assert value("gangsched_queue_guarantee", "nlp", "cpu") == 0  # named by another figure: 0
    assert value("gangsched_queue_fair_share", "nlp", GPU) == 6
    assert value("gangsched_queue_max", "nlp", GPU) == 8
    assert value("gangsched_queue_pending", "nlp", GPU) == 2
    assert value("gangsched_queue_borrowed", "nlp", GPU) == 1
    assert value("gangsched_queue_lent", "nlp", GPU) == 0
    assert value("gangsched_queue_open", "nlp") == 1
    assert value("gangsched_queue_open", "ml") == 0
    assert ("gangsched_queue_max", (("queue", "ml"), ("resource", GPU))) not in samples  # unlimited
    assert not any(labels and labels[0] == ("queue", "gone") for _name, labels in samples)


def test_reclaim_evictions_are_counted_by_victim_queue_and_by_whom(client):
    cq = Queue.objects.create(name="research")
    Queue.objects.create(name="prod")
    LocalQueue.objects.create(namespace="lab", name="main", cluster_queue=cq)
    first = make_gang("lab", "first", queue="main")
    second = make_gang("lab", "second", queue="main")
    for gang in (first, second, first):
        GangEvent.objects.create(
            gang=gang, kind="preempted", details={"scope": "gang", "reclaimedBy": "prod"}
        )
    GangEvent.objects.create(gang=second, kind="preempted", details={"scope": "gang"})  # a preemption

    samples = scrape(client)

    key = ("gangsched_queue_reclaim_evictions_total", (("queue", "research"), ("reclaimed_by", "prod")))
    assert samples[key] == 3
    assert (
        sum(v for (name, _), v in samples.items() if name == "gangsched_queue_reclaim_evictions_total") == 3
    )


def test_without_queues_the_families_are_empty(client):
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1")
    families = {f.name: f for f in text_string_to_metric_families(response.content.decode())}
    assert families["gangsched_queue_usage"].samples == []
    assert families["gangsched_queue_reclaim_evictions"].samples == []
