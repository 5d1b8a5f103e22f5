"""Positions in the queue as Kueue's visibility API counts them (PendingWorkload's
positionInClusterQueue and positionInLocalQueue, from 0)."""

from __future__ import annotations

from scheduler_core.engine import EngineConfig
from scheduler_core.forecast import positions
from tests.engine.world import NOW, gang, members, nodes, snapshot

FIFO = EngineConfig(overtake_limit_s=0)  # Kueue's StrictFIFO: priority, then creation


def _world(*specs):
    """(namespace/name, queue, priority, created) -> a one-pod gang each."""
    gangs, pods = [], []
    for key, queue, priority, created in specs:
        gangs.append(gang(key, 1, queue=queue, priority=priority, created=created))
        pods += members(key, 1, created=created, priority=priority)
    return snapshot(nodes(1), pods, gangs)


def test_two_local_queues_of_one_cluster_queue():
    """kubernetes-sigs/kueue pkg/visibility/storage/pending_workloads_cq_test.go,
    TestPendingWorkloadsInCQ, "single ClusterQueue and two LocalQueue setup with four workloads
    and default query parameters": high priority first, then creation; each LocalQueue counts
    its own."""
    snap = _world(
        ("ns/lqA-high-prio", "cq-a", 100, NOW),
        ("ns/lqA-low-prio", "cq-a", 0, NOW),
        ("ns/lqB-high-prio", "cq-a", 100, NOW + 1),
        ("ns/lqB-low-prio", "cq-a", 0, NOW + 1),
    )
    local = {
        "ns/lqA-high-prio": "lq-a",
        "ns/lqA-low-prio": "lq-a",
        "ns/lqB-high-prio": "lq-b",
        "ns/lqB-low-prio": "lq-b",
    }
    found = {key: (p.in_queue, p.in_local_queue) for key, p in positions(snap, FIFO, local).items()}
    assert found == {
        "ns/lqA-high-prio": (0, 0),
        "ns/lqB-high-prio": (1, 0),
        "ns/lqA-low-prio": (2, 1),
        "ns/lqB-low-prio": (3, 1),
    }


def test_one_local_queue_name_in_two_namespaces_is_two_local_queues():
    """Same test, "same LocalQueue name reused across different namespaces reports position
    within each namespace's own LocalQueue"."""
    snap = _world(("ns/a", "cq-a", 100, NOW), ("ns-b/b", "cq-a", 100, NOW + 1))
    local = {"ns/a": "lq-a", "ns-b/b": "lq-a"}
    found = {key: (p.in_queue, p.in_local_queue) for key, p in positions(snap, FIFO, local).items()}
    assert found == {"ns/a": (0, 0), "ns-b/b": (1, 0)}


def test_the_cluster_position_counts_every_queue_and_the_queue_position_its_own():
    snap = _world(("ns/a", "cq-a", 0, NOW), ("ns/b", "cq-b", 0, NOW + 1), ("ns/c", "cq-a", 0, NOW + 2))
    found = positions(snap, FIFO)
    assert [(found[k].in_cluster, found[k].in_queue) for k in ("ns/a", "ns/b", "ns/c")] == [
        (0, 0),
        (1, 0),
        (2, 1),
    ]
    assert found["ns/c"].queue == "cq-a"


def test_least_work_first_orders_positions_as_the_engine_does():
    """Within a priority the engine serves less work first (bounded): so do the positions."""
    gangs = [gang("ns/long", 1, created=NOW), gang("ns/short", 1, created=NOW + 1)]
    pods = members("ns/long", 1, duration=3000.0, created=NOW) + members(
        "ns/short", 1, duration=10.0, created=NOW + 1
    )
    found = positions(snapshot(nodes(1), pods, gangs), EngineConfig())
    assert (found["ns/short"].in_cluster, found["ns/long"].in_cluster) == (0, 1)
