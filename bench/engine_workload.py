"""The synthetic clusters and gangs of the engine benchmark (``engine.py``), with fixed seeds.

Nodes: 80% CPU nodes, 20% tainted GPU nodes, in four zones. Gangs: heavy-tailed sizes (most
small, a few of up to 1,024 members). ``throughput_snapshot`` is an empty cluster and a backlog;
``busy_cluster`` a partly full one (running gangs with known durations, so backfilling has
shadow times to compute), which ``latency_snapshot`` gives a fresh set of pending gangs.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from scheduler_core.engine import (  # noqa: E402
    Gang,
    GangMode,
    GangPhase,
    Node,
    Pod,
    Queue,
    Snapshot,
    Taint,
    Toleration,
    Topology,
    TopologyConstraint,
)

GI = 2**30
GPU = "nvidia.com/gpu"
GPU_TAINT = Taint(GPU, "present", "NoSchedule")
GPU_TOLERATION = (Toleration(GPU, "Exists", "", "NoSchedule"),)
ZONES = ("zone-a", "zone-b", "zone-c", "zone-d")


def build_nodes(count: int, rng: np.random.Generator) -> list[Node]:
    """80% CPU nodes {64 cpu, 256Gi, 110 pods}, 20% tainted GPU nodes {96 cpu, 768Gi, 8 GPUs}."""
    nodes = []
    gpu_nodes = max(1, count // 5)
    cpu_alloc = {"cpu": 64_000, "memory": 256 * GI, "pods": 110}
    gpu_alloc = {"cpu": 96_000, "memory": 768 * GI, GPU: 8, "pods": 110}
    for i in range(count):
        gpu = i % 5 == 4 and i // 5 < gpu_nodes
        zone = ZONES[int(rng.integers(len(ZONES)))]
        labels = {"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": f"node-{i:05d}"}
        if gpu:
            labels["nvidia.com/gpu.product"] = "A100-SXM4-80GB" if rng.random() < 0.5 else "H100-SXM5-80GB"
            nodes.append(Node(f"node-{i:05d}", gpu_alloc, labels, (GPU_TAINT,)))
        else:
            labels["node.kubernetes.io/instance-type"] = "m6i.16xlarge"
            nodes.append(Node(f"node-{i:05d}", cpu_alloc, labels))
    return nodes


_SIZE_CLASS_WEIGHTS = 0.5 ** np.arange(11) / (0.5 ** np.arange(11)).sum()


def gang_size(rng: np.random.Generator, cap: int = 1024) -> int:
    """Heavy-tailed: a size in [2^k, 2^(k+1)) with P(k) ~ 0.5^k, k in 0..10, at most ``cap``.

    Half the gangs are single pods, yet every size class holds about the same number of pods.
    """
    k = int(rng.choice(11, p=_SIZE_CLASS_WEIGHTS))
    return min(int(rng.integers(2**k, 2 ** (k + 1))), cap)


def gang_sizes(total: int, rng: np.random.Generator, cap: int = 1024) -> list[int]:
    """Gang sizes drawn until they add up to ``total`` pods (the last one is cut to fit)."""
    sizes = []
    left = total
    while left > 0:
        size = min(gang_size(rng, cap), left)
        sizes.append(size)
        left -= size
    return sizes


def make_gang_pods(
    index: int, size: int, rng: np.random.Generator, created: float, prefix: str = "job"
) -> tuple[Gang, list[Pod]]:
    """One pending gang and its members; GPU gangs (about 1 in 8) ask for one GPU per member."""
    namespace = f"team-{index % 8}"
    name = f"{prefix}-{index:05d}"
    gpu = rng.random() < 0.125
    requests = {"cpu": int(rng.integers(1, 9)) * 1000, "memory": int(rng.integers(1, 33)) * GI}
    if gpu:
        requests[GPU] = 1
    priority = int(rng.integers(0, 4))
    duration = float(rng.integers(60, 3600))
    mode = GangMode.NON_STRICT if rng.random() < 0.2 else GangMode.STRICT
    min_member = size if rng.random() < 0.8 else max(1, int(size * 0.75))
    gang = Gang(
        namespace=namespace,
        name=name,
        min_member=min_member,
        total_number=size,
        mode=mode,
        wait_seconds=600.0,
        created=created,
        priority=priority,
    )
    pods = [
        Pod(
            namespace=namespace,
            name=f"{name}-{j}",
            requests=requests,
            priority=priority,
            created=created,
            gang=gang.key,
            tolerations=GPU_TOLERATION if gpu else (),
            duration=duration,
        )
        for j in range(size)
    ]
    return gang, pods


def throughput_snapshot(nodes: int, pods: int, seed: int) -> Snapshot:
    rng = np.random.default_rng(seed)
    node_list = build_nodes(nodes, rng)
    gangs, all_pods = [], []
    for index, size in enumerate(gang_sizes(pods, rng)):
        gang, members = make_gang_pods(index, size, rng, created=float(index))
        gangs.append(gang)
        all_pods.extend(members)
    return Snapshot(nodes=tuple(node_list), pods=tuple(all_pods), gangs=tuple(gangs))


def busy_cluster(nodes: int, seed: int, fill: float, now: float) -> tuple[list[Node], list[Gang], list[Pod]]:
    """Nodes with running gangs (known durations) taking about ``fill`` of the CPU.

    Each member lands on a random node where it fits, so free capacity ends up scattered in
    holes of various sizes, as in a cluster that has been running for a while.
    """
    rng = np.random.default_rng(seed)
    node_list = build_nodes(nodes, rng)
    free = {n.name: dict(n.allocatable) for n in node_list}
    cpu_nodes = [n.name for n in node_list if GPU not in n.allocatable]
    gpu_nodes = [n.name for n in node_list if GPU in n.allocatable]
    target = fill * sum(n.allocatable["cpu"] for n in node_list)
    used = 0.0
    gangs, pods = [], []
    index = misses = 0
    while used < target and misses < 50:
        size = gang_size(rng, cap=64)
        gang, members = make_gang_pods(index, size, rng, created=-1.0 - index, prefix="running")
        requests = members[0].requests
        pool = gpu_nodes if GPU in requests else cpu_nodes
        placed: list[str] = []
        for _ in range(size):
            for name in (pool[i] for i in rng.integers(len(pool), size=8)):
                room = free[name]
                if room["pods"] >= 1 and all(room.get(r, 0) >= a for r, a in requests.items()):
                    for r, a in requests.items():
                        room[r] -= a
                    room["pods"] -= 1
                    placed.append(name)
                    break
        if len(placed) < size:  # give the room back and try another gang
            for name in placed:
                for r, a in requests.items():
                    free[name][r] += a
                free[name]["pods"] += 1
            misses += 1
            continue
        started = now - float(rng.integers(0, int(members[0].duration)))
        members = [
            dataclasses.replace(p, node=n, started=started) for p, n in zip(members, placed, strict=True)
        ]
        gangs.append(dataclasses.replace(gang, satisfied=True, phase=GangPhase.RUNNING))
        pods.extend(members)
        used += requests["cpu"] * size
        index += 1
    return node_list, gangs, pods


def latency_snapshot(
    base: tuple[list[Node], list[Gang], list[Pod]], gangs: int, seed: int, cap: int
) -> Snapshot:
    node_list, running_gangs, running_pods = base
    rng = np.random.default_rng(seed)
    new_gangs, new_pods = [], []
    sizes = [gang_size(rng, cap) for _ in range(gangs)]
    for index, size in enumerate(sizes):
        gang, members = make_gang_pods(index, size, rng, created=float(index), prefix=f"pending{seed}")
        new_gangs.append(gang)
        new_pods.extend(members)
    return Snapshot(
        nodes=tuple(node_list),
        pods=tuple(running_pods) + tuple(new_pods),
        gangs=tuple(running_gangs) + tuple(new_gangs),
    )


def queue_tree(count: int, nodes: list[Node] | tuple[Node, ...]) -> tuple[tuple[Queue, ...], list[str]]:
    """A 3-level tree with ``count`` leaves (``--queues``): about cbrt(count) top-level queues,
    as many inner queues under each, the leaves spread under those. The cluster's capacity is
    guaranteed to the leaves in equal parts (an inner queue is guaranteed its children's sum);
    weights 1 to 3 by position, every queue reclaimable. Returns the queues and the leaf names.
    """
    top = max(1, round(count ** (1 / 3)))
    capacity: dict[str, int] = {}
    for node in nodes:
        for name, amount in node.allocatable.items():
            if name != "pods":
                capacity[name] = capacity.get(name, 0) + amount
    share = {name: amount // count for name, amount in capacity.items()}
    inner = [f"q{t}-{m}" for t in range(top) for m in range(top)]
    leaves = [f"{inner[i % len(inner)]}-{i}" for i in range(count)]
    under: dict[str, int] = {}
    for leaf in leaves:
        parent = leaf.rsplit("-", 1)[0]
        under[parent] = under.get(parent, 0) + 1
    queues = [
        Queue(
            f"q{t}",
            guarantee={n: a * sum(under.get(f"q{t}-{m}", 0) for m in range(top)) for n, a in share.items()},
        )
        for t in range(top)
    ]
    queues += [
        Queue(name, name.split("-")[0], guarantee={n: a * under.get(name, 0) for n, a in share.items()})
        for name in inner
    ]
    queues += [
        Queue(leaf, leaf.rsplit("-", 1)[0], guarantee=dict(share), weight=float(1 + i % 3))
        for i, leaf in enumerate(leaves)
    ]
    return tuple(queues), leaves


def with_queue_tree(snapshot: Snapshot, count: int) -> Snapshot:
    """The snapshot with ``queue_tree(count)`` and its gangs assigned to the leaves round-robin."""
    if not count:
        return snapshot
    queues, leaves = queue_tree(count, snapshot.nodes)
    gangs = tuple(dataclasses.replace(g, queue=leaves[i % len(leaves)]) for i, g in enumerate(snapshot.gangs))
    return dataclasses.replace(snapshot, gangs=gangs, queues=queues)


#: ``--topology-levels``: node-label keys, widest first; N levels are the last N of these.
TOPOLOGY_LEVELS = ("example.com/block", "example.com/rack", "kubernetes.io/hostname")
NODES_PER_RACK = 16
RACKS_PER_BLOCK = 8


def with_topology(snapshot: Snapshot, levels: int) -> Snapshot:
    """The snapshot on a cluster with ``levels`` topology levels (``--topology-levels``).

    Nodes in their order: 16 nodes a rack, 8 racks a block (128 nodes), labels
    ``example.com/block`` = ``block-<n>``, ``example.com/rack`` = ``rack-<n>``, and the hostname
    level (already on every node). Levels: 1 = rack, 2 = block and rack, 3 = block, rack and
    hostname. Pending gangs of 2 or more members, by their order in the snapshot: the first of
    every three requires one block and prefers one rack, the second prefers one rack, the third
    is unconstrained (so two thirds are constrained, one third required); with 1 level there is
    no block, and the first also only prefers a rack.
    """
    if not levels:
        return snapshot
    block, rack, host = TOPOLOGY_LEVELS
    keys = {1: (rack,), 2: (block, rack), 3: (block, rack, host)}[levels]
    nodes = []
    for i, node in enumerate(snapshot.nodes):
        index = i // NODES_PER_RACK
        labels = dict(node.labels)
        labels[rack] = f"rack-{index:03d}"
        if block in keys:
            labels[block] = f"block-{index // RACKS_PER_BLOCK:02d}"
        nodes.append(dataclasses.replace(node, labels=labels))
    constraints = (
        TopologyConstraint(required=block if block in keys else None, preferred=rack),
        TopologyConstraint(preferred=rack),
        None,
    )
    gangs, multi = [], 0
    for gang in snapshot.gangs:
        if not gang.satisfied and (gang.total_number or gang.min_member) >= 2:
            gang = dataclasses.replace(gang, topology=constraints[multi % 3])
            multi += 1
        gangs.append(gang)
    return dataclasses.replace(
        snapshot, nodes=tuple(nodes), gangs=tuple(gangs), topologies=(Topology("bench", keys),)
    )
