"""A small named world for engine tests: nodes, gangs and pods built in one line each.

Amounts are given in whole CPUs, GiB and GPUs and converted to the engine's canonical units.
"""

from __future__ import annotations

from scheduler_core.engine import Gang, GangGroup, Node, Pod, Snapshot

GI = 1 << 30
NOW = 1_000.0


def node(name: str, cpu: float = 4, memory: float = 16, gpu: int = 0, **kwargs) -> Node:
    allocatable = {"cpu": int(cpu * 1000), "memory": int(memory * GI)}
    if gpu:
        allocatable["nvidia.com/gpu"] = gpu
    return Node(name, allocatable, **kwargs)


def nodes(count: int, prefix: str = "n", **kwargs) -> tuple[Node, ...]:
    return tuple(node(f"{prefix}{i}", **kwargs) for i in range(count))


def requests(cpu: float = 1, memory: float = 1, gpu: int = 0) -> dict[str, int]:
    out = {"cpu": int(cpu * 1000), "memory": int(memory * GI)}
    if gpu:
        out["nvidia.com/gpu"] = gpu
    return out


def members(
    gang: str, count: int, cpu: float = 1, memory: float = 1, gpu: int = 0, start: int = 0, **kwargs
) -> tuple[Pod, ...]:
    namespace, name = gang.split("/")
    return tuple(
        Pod(namespace, f"{name}-{i}", requests(cpu, memory, gpu), gang=gang, **kwargs)
        for i in range(start, start + count)
    )


def gang(key: str, min_member: int, **kwargs) -> Gang:
    namespace, name = key.split("/")
    return Gang(namespace, name, min_member, **kwargs)


def pod(key: str, cpu: float = 1, memory: float = 1, gpu: int = 0, **kwargs) -> Pod:
    namespace, name = key.split("/")
    return Pod(namespace, name, requests(cpu, memory, gpu), **kwargs)


def snapshot(nodes=(), pods=(), gangs=(), groups=()) -> Snapshot:
    return Snapshot(tuple(nodes), tuple(pods), tuple(gangs), tuple(groups))


def group(key: str, *gangs: str) -> GangGroup:
    return GangGroup(key, tuple(gangs))


def bound(result) -> dict[str, str]:
    return {bind.pod: bind.node for bind in result.binds}


def bound_of(result, gang_key: str) -> list[str]:
    return sorted(bind.pod for bind in result.binds if bind.gang == gang_key)
