"""Running the engine cycle after cycle on plain data, and what the property tests check on it."""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict

from scheduler_core.engine import Gang, Node, Pod, Snapshot, TransitionKind, apply_result, run_cycle

from .strategies import Scenario


def overcommitted(snapshot: Snapshot) -> list[str]:
    """Every (node, resource) where bound pods plus held reservations exceed allocatable."""
    used: dict[str, Counter] = defaultdict(Counter)
    for pod in snapshot.pods:
        where = pod.node if pod.node is not None else (pod.reserved_node if pod.pending else None)
        if where is None:
            continue
        used[where].update(pod.requests)
        used[where]["pods"] += 1
    problems = []
    for node in snapshot.nodes:
        for resource, amount in used[node.name].items():
            if resource == "pods" and "pods" not in node.allocatable:
                continue
            allocatable = node.allocatable.get(resource, 0)
            if amount > allocatable:
                problems.append(f"{node.name} {resource}: {amount} > {allocatable}")
    return problems


def advance(snapshot: Snapshot, now: float) -> Snapshot:
    """Pods whose declared duration has elapsed complete and leave the snapshot."""
    pods = tuple(
        pod
        for pod in snapshot.pods
        if not (
            pod.node is not None
            and pod.started is not None
            and pod.duration is not None
            and pod.started + pod.duration <= now
        )
    )
    return dataclasses.replace(snapshot, pods=pods)


def trajectory(scenario: Scenario, cycles: int, step: float = 37.0):
    """Yield (snapshot before, result, snapshot after, now) for consecutive cycles."""
    snapshot, now = scenario.snapshot, scenario.now
    for _ in range(cycles):
        result = run_cycle(snapshot, now, scenario.config)
        after = apply_result(snapshot, result, now)
        yield snapshot, result, after, now
        now += step
        snapshot = advance(after, now)


def gang_priority(snapshot: Snapshot, gang: Gang) -> int:
    if gang.priority is not None:
        return gang.priority
    return max((pod.priority for pod in snapshot.pods if pod.gang == gang.key), default=0)


def satisfied_now(result, key: str) -> bool:
    return TransitionKind.SATISFIED in result.transitions_of(key)


def fell_back(gang: Gang, result) -> bool:
    return gang.fallen_back or TransitionKind.FELL_BACK in result.transitions_of(gang.key)


def check_binds_sane(before: Snapshot, result) -> None:
    pods = {pod.key: pod for pod in before.pods}
    nodes = {node.name: node for node in before.nodes}
    counts = Counter(bind.pod for bind in result.binds)
    assert not [key for key, n in counts.items() if n > 1], f"pods bound twice in one cycle: {counts}"
    for bind in result.binds:
        assert bind.pod in pods and pods[bind.pod].pending, f"{bind} is not a pending pod"
        assert bind.node in nodes and nodes[bind.node].ready, f"{bind} is not on a ready node"


def decisions(result) -> tuple:
    """Everything a cycle decided and said, to compare two ways of computing it."""
    return (
        result.binds,
        result.reservations,
        result.releases,
        result.evictions,
        result.transitions,
        sorted(result.explanations.items()),
        result.pods_considered,
        result.pending_demand,
        result.queues,
    )


def short_behind_the_head() -> Snapshot:
    """Two 4-CPU nodes, half full until 600; a head that needs both nodes whole, and behind it a
    gang of three 2-CPU pods, of which the nodes take two: short of room behind the head."""
    gi = 2**30
    nodes = tuple(Node(f"n{i}", {"cpu": 4000, "memory": 8 * gi, "pods": 110}) for i in range(2))
    pods = tuple(
        Pod("ml", f"r{i}", {"cpu": 2000}, node=f"n{i}", started=0.0, duration=600.0) for i in range(2)
    )
    pods += tuple(Pod("ml", f"h{i}", {"cpu": 4000}, gang="ml/head", created=1.0) for i in range(2))
    pods += tuple(
        Pod("ml", f"b{i}", {"cpu": 2000}, gang="ml/behind", created=2.0, duration=60.0) for i in range(3)
    )
    gangs = (Gang("ml", "head", min_member=2, created=1.0), Gang("ml", "behind", min_member=3, created=2.0))
    return Snapshot(nodes=nodes, pods=pods, gangs=gangs)


def both_ways(scenario: Scenario, monkeypatch, owner, name: str, off, cycles: int = 4) -> int:
    """Run ``cycles`` cycles of ``scenario`` with the shortcut ``owner.name`` replaced by ``off``
    (which always answers None: no shortcut) and as it is; they must decide and explain the same.
    Returns how many times the shortcut answered."""
    shortcut = getattr(owner, name)
    answered = 0

    def counting(*args):
        nonlocal answered
        found = shortcut(*args)
        answered += found is not None
        return found

    snapshot, now = scenario.snapshot, scenario.now
    for _ in range(cycles):
        monkeypatch.setattr(owner, name, off)
        tried = run_cycle(snapshot, now, scenario.config)
        monkeypatch.setattr(owner, name, counting)
        result = run_cycle(snapshot, now, scenario.config)
        assert decisions(result) == decisions(tried)
        snapshot = advance(apply_result(snapshot, result, now), now + 37.0)
        now += 37.0
    monkeypatch.setattr(owner, name, shortcut)
    return answered
