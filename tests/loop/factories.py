"""Rows for scheduling-loop tests, in canonical units (milli-CPU, bytes, counts)."""

from __future__ import annotations

from scheduler_core.models import Gang, Member, Node

GI = 1 << 30


def make_nodes(count: int, cpu: int = 4, gpu: int = 0, prefix: str = "n") -> list[Node]:
    allocatable = {"cpu": cpu * 1000, "memory": 16 * GI, "pods": 110}
    if gpu:
        allocatable["nvidia.com/gpu"] = gpu
    return Node.objects.bulk_create(Node(name=f"{prefix}{i}", allocatable=allocatable) for i in range(count))


def make_gang(
    key: str, members: int, cpu: float = 1, min_member: int | None = None, owner: str | None = None, **fields
) -> Gang:
    """A gang and its pods; the pods are a Job's (recreated by their gang's restart policy)
    unless ``owner=""`` makes them bare Pods."""
    namespace, name = key.split("/")
    gang = Gang.objects.create(namespace=namespace, name=name, min_member=min_member or members, **fields)
    Member.objects.bulk_create(
        Member(
            namespace=namespace,
            name=f"{name}-{i}",
            gang=gang,
            requests={"cpu": int(cpu * 1000), "memory": GI},
            owner=f"job.batch/{name}" if owner is None else owner,
        )
        for i in range(members)
    )
    return gang


def bound_nodes(gang: Gang) -> list[str | None]:
    return sorted(m.node or "" for m in gang.members.all())
