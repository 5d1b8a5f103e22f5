"""Queue trees for engine tests, on top of ``world.py``: amounts in whole CPUs, GiB and GPUs."""

from __future__ import annotations

import dataclasses

from scheduler_core.engine import Queue, Snapshot, apply_result, run_cycle

from .. import world
from ..world import GI, NOW

GPU = "nvidia.com/gpu"


def amounts(cpu: float | None = None, memory: float | None = None, gpu: int | None = None) -> dict[str, int]:
    out = {}
    if cpu is not None:
        out["cpu"] = int(cpu * 1000)
    if memory is not None:
        out["memory"] = int(memory * GI)
    if gpu is not None:
        out[GPU] = gpu
    return out


def queue(name: str, parent: str | None = None, *, guarantee=None, max=None, lending=None, **kwargs) -> Queue:
    return Queue(
        name,
        parent,
        guarantee=guarantee or {},
        max=max or {},
        lending_limit=lending or {},
        **kwargs,
    )


def with_queues(snapshot: Snapshot, *queues: Queue) -> Snapshot:
    return dataclasses.replace(snapshot, queues=tuple(queues))


def full_at_max(incoming: str, priority: int, q: Queue) -> Snapshot:
    """Queue ``q`` (max 4 GPUs) runs a priority-0 gang of 4 GPUs on an 8-GPU node; a gang of 2
    GPUs of ``priority`` (``incoming``, its key) arrives in it."""
    low = world.gang("ns/low", 4, queue=q.name, satisfied=True)
    running = world.members("ns/low", 4, gpu=1, node="n0", started=1.0)
    waiting = world.gang(incoming, 2, queue=q.name, priority=priority, created=5)
    pods = [*running, *world.members(incoming, 2, gpu=1, priority=priority)]
    return with_queues(world.snapshot([world.node("n0", cpu=32, memory=64, gpu=8)], pods, [low, waiting]), q)


def add(snapshot: Snapshot, pods=(), gangs=()) -> Snapshot:
    return dataclasses.replace(
        snapshot, pods=snapshot.pods + tuple(pods), gangs=snapshot.gangs + tuple(gangs)
    )


def cycles(snapshot: Snapshot, count: int, now: float = NOW, config=None):
    """Run ``count`` cycles applying each result; returns (results, final snapshot)."""
    results = []
    for i in range(count):
        result = run_cycle(snapshot, now + 10 * i, config)
        results.append(result)
        snapshot = apply_result(snapshot, result, now + 10 * i)
    return results, snapshot


def usage(snapshot: Snapshot, queue_name: str, resource: str = GPU) -> int:
    """What the pods of a leaf queue hold (bound or reserved) of ``resource``."""
    gangs = {gang.key: gang for gang in snapshot.gangs}
    total = 0
    for pod in snapshot.pods:
        if pod.node is None and pod.reserved_node is None:
            continue
        gang = gangs.get(pod.gang) if pod.gang is not None else None
        if (gang.queue if gang is not None else pod.queue) == queue_name:
            total += pod.requests.get(resource, 0)
    return total
