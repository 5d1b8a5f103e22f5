"""Where each pending gang stands in the queue, as Kueue's visibility API counts it.

Kueue's ``PendingWorkload`` gives ``positionInClusterQueue``: the workload's index, from 0, in
its ClusterQueue's pending order, and ``positionInLocalQueue``: how many workloads of the same
LocalQueue (namespace and name) come before it in that same order
(``pkg/visibility/storage/pending_workloads_cq.go`` in kubernetes-sigs/kueue counts the second
while walking the first). Here:

- the order is the engine's (``engine/queue.py``: priority, least-work-first rank bounded by
  ``overtake_limit_s``, creation, key), over the units the next cycle would consider: gangs and
  gang groups (a group's gangs share its place) and pods scheduled alone, which take a place too;
- ``position_in_queue`` counts the units of the same engine queue before it (the queue a gang
  names, a Kueue LocalQueue already resolved to its ClusterQueue: Kueue's ClusterQueue position);
- ``position_in_local_queue`` counts those of the same local queue: the name the gang declared in
  its namespace (``local_queues``; by default the engine queue's name in the gang's namespace, so
  one queue name used in two namespaces is two local queues, as in Kueue);
- ``position_in_cluster`` counts every unit before it, whatever its queue. With a queue tree the
  engine interleaves the queues by fair share as it places, so this is the order within
  priorities and ranks, not a promise of turns; the forecast's times are what include the
  interleaving.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduler_core.engine.config import EngineConfig
from scheduler_core.engine.model import Snapshot
from scheduler_core.engine.queue import build_units, pods_by_gang


@dataclass(frozen=True, slots=True)
class Position:
    queue: str
    in_queue: int
    in_local_queue: int
    in_cluster: int


def positions(
    snapshot: Snapshot, config: EngineConfig, local_queues: Mapping[str, str] | None = None
) -> dict[str, Position]:
    """Gang key -> its position, for every gang in a pending unit."""
    gangs = {gang.key: gang for gang in snapshot.gangs}
    units = build_units(snapshot, config, gangs, pods_by_gang(snapshot))
    local_queues = local_queues or {}
    in_queue: dict[str, int] = {}
    in_local: dict[tuple[str, str], int] = {}
    found: dict[str, Position] = {}
    for index, unit in enumerate(units):
        if unit.is_gang:
            first = gangs[unit.gangs[0]]
            queue = first.queue
            local = (first.namespace, local_queues.get(first.key, queue))
        else:
            pod = unit.pods[0]
            queue = gangs[pod.gang].queue if pod.gang in gangs else pod.queue
            local = (pod.namespace, queue)
        ahead_in_queue = in_queue.get(queue, 0)
        ahead_in_local = in_local.get(local, 0)
        in_queue[queue] = ahead_in_queue + 1
        in_local[local] = ahead_in_local + 1
        for key in unit.gangs:
            found[key] = Position(gangs[key].queue, ahead_in_queue, ahead_in_local, index)
    return found
