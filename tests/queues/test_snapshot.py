"""The snapshot's queue tree: empty without Queue rows (today's behaviour), else every queue with
its amounts; a gang's and a lone pod's queue resolved through a Kueue LocalQueue; the number of
queries does not grow with the number of queues."""

import pytest

from scheduler_core.engine import model as engine
from scheduler_core.models import Gang, LocalQueue, Member, Queue
from scheduler_core.snapshot import build as snapshot

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"


def test_no_queue_rows_is_an_empty_tree_and_everything_in_default():
    gang = Gang.objects.create(namespace="ml", name="g", min_member=1)
    Member.objects.create(namespace="ml", name="w", gang=gang)
    Member.objects.create(namespace="ml", name="alone")

    built = snapshot.build_snapshot()

    assert built.queues == ()
    assert {pod.queue for pod in built.pods} == {engine.DEFAULT_QUEUE}


def test_queue_rows_become_the_engines_tree():
    ml = Queue.objects.create(name="ml", guarantee={GPU: 8}, max={GPU: 16}, weight=2)
    Queue.objects.create(
        name="nlp", parent=ml, guarantee={GPU: 4}, lending_limit={GPU: 2}, reclaimable=False, open=False
    )

    assert snapshot.build_snapshot().queues == (
        engine.Queue("ml", None, {GPU: 8}, {GPU: 16}, {}, 2.0, True, True),
        engine.Queue("nlp", "ml", {GPU: 4}, {}, {GPU: 2}, 1.0, False, False),
    )


def test_a_local_queue_resolves_to_its_cluster_queue_for_gangs_and_lone_pods():
    cq = Queue.objects.create(name="cluster-a")
    LocalQueue.objects.create(namespace="team-a", name="main", cluster_queue=cq)
    gang = Gang.objects.create(namespace="team-a", name="g", min_member=1, queue="main")
    Member.objects.create(namespace="team-a", name="w", gang=gang)
    Member.objects.create(namespace="team-a", name="alone", queue="main")
    Member.objects.create(namespace="team-b", name="other", queue="main")  # no LocalQueue there

    built = snapshot.build_snapshot()

    assert [g.queue for g in built.gangs] == ["cluster-a"]
    assert {pod.key: pod.queue for pod in built.pods} == {
        "team-a/alone": "cluster-a",
        "team-a/w": engine.DEFAULT_QUEUE,  # a member is charged to its gang's queue
        "team-b/other": "main",
    }


def test_the_query_count_does_not_grow_with_queues(django_assert_num_queries):
    parent = Queue.objects.create(name="root")
    for index in range(20):
        cq = Queue.objects.create(name=f"q{index}", parent=parent)
        LocalQueue.objects.create(namespace=f"ns{index}", name="main", cluster_queue=cq)
    with django_assert_num_queries(7):  # 5, and the topologies and HyperNodes
        built = snapshot.build_snapshot()
    assert len(built.queues) == 21
