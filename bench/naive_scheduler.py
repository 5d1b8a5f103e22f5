"""The engine benchmark's baseline: a naive pod-at-a-time scheduler in plain Python.

Each pending pod, in priority order, scans every node, checks taints, the node selector and every
resource with dicts, and takes the most allocated node that fits (MostAllocated), for a fixed
time budget. ``engine.py`` reports its pods per second beside the engine's.
"""

from __future__ import annotations

import time

from scheduler_core.engine import Snapshot, Taint


def _tolerates(tolerations, taint: Taint) -> bool:
    for t in tolerations:
        if t.effect and t.effect != taint.effect:
            continue
        if t.key and t.key != taint.key:
            continue
        if t.operator == "Exists" or t.value == taint.value:
            return True
    return False


def naive_baseline(snapshot: Snapshot, budget_s: float) -> dict:
    """Pod at a time, every node scanned in Python, resources checked with dicts, MostAllocated."""
    nodes = list(snapshot.nodes)
    free = [dict(node.allocatable) for node in nodes]
    index = {node.name: i for i, node in enumerate(nodes)}
    for pod in snapshot.pods:
        if pod.node is not None:
            room = free[index[pod.node]]
            for resource, amount in pod.requests.items():
                room[resource] = room.get(resource, 0) - amount
            room["pods"] = room.get("pods", 0) - 1
    pending = sorted((p for p in snapshot.pods if p.pending), key=lambda p: (-p.priority, p.created, p.key))
    placed = attempted = 0
    started = time.perf_counter()
    for pod in pending:
        if time.perf_counter() - started > budget_s:
            break
        attempted += 1
        best, best_score = -1, -1.0
        for i, node in enumerate(nodes):
            if not node.ready or node.unschedulable:
                continue
            if any(
                t.effect in ("NoSchedule", "NoExecute") and not _tolerates(pod.tolerations, t)
                for t in node.taints
            ):
                continue
            if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
                continue
            room = free[i]
            if room.get("pods", 0) < 1:
                continue
            if any(room.get(r, 0) < a for r, a in pod.requests.items()):
                continue
            alloc = node.allocatable
            score = sum((alloc[r] - room[r] + pod.requests.get(r, 0)) / alloc[r] for r in ("cpu", "memory"))
            if score > best_score:
                best, best_score = i, score
        if best >= 0:
            room = free[best]
            for r, a in pod.requests.items():
                room[r] -= a
            room["pods"] -= 1
            placed += 1
    elapsed = time.perf_counter() - started
    return {
        "placed": placed,
        "attempted": attempted,
        "seconds": elapsed,
        "pods_per_second": placed / elapsed if elapsed else 0.0,
        "pending": len(pending),
    }
