"""The incremental cluster state decides exactly what the plain computation over every node does.

``ClusterState`` (state.py) keeps the free capacity of the nodes a placement or a release touches
instead of recomputing ``alloc - used`` for every shape, and leaves out of bin-packing's
candidates the idle nodes it cannot reach and the blocks of nodes where no copy fits
(``candidates``); bin-packing looks for one node taking every copy by comparisons alone
(``placement.whole_fit``) or in nodes sorted by free capacity (``free_index.py``). They are
shortcuts, never policy: here every cycle runs as is, with blocks of 4 nodes, and with the
shortcuts replaced by the plain computation (every masked node, free capacity recomputed from
``used``), and the decisions must be the same, cycle after cycle, with completions, preemption,
reservations and queues.
"""

from __future__ import annotations

import contextlib
import dataclasses
from unittest import mock

import numpy as np
from hypothesis import given

from scheduler_core.engine import (
    EngineConfig,
    Gang,
    HeadOfLine,
    Node,
    Placement,
    Pod,
    Snapshot,
    Taint,
    Toleration,
    apply_result,
    run_cycle,
)
from scheduler_core.engine import session as session_module
from scheduler_core.engine import state as state_module
from scheduler_core.engine.state import ClusterState

from .cycles import advance, decisions
from .strategies import SETTINGS, Scenario, scenarios

GI = 2**30


@contextlib.contextmanager
def plain():
    """The engine without the shortcuts: every masked node, free capacity from ``used``."""
    with (
        mock.patch.object(session_module, "whole_fit", lambda *args: -1),
        mock.patch.object(ClusterState, "whole", lambda self, mask, request, need: None),
        mock.patch.object(ClusterState, "candidates", lambda self, mask, request, need: None),
        mock.patch.object(ClusterState, "free_at", lambda self, nodes: self.alloc[nodes] - self._used[nodes]),
        mock.patch.object(ClusterState, "free_all", lambda self: self.alloc - self._used),
    ):
        yield


def run(snapshot: Snapshot, now: float, config: EngineConfig, cycles: int) -> list[tuple]:
    out = []
    for _ in range(cycles):
        result = run_cycle(snapshot, now, config)
        out.append(decisions(result))
        snapshot = apply_result(snapshot, result, now)
        now += 37.0
        snapshot = advance(snapshot, now)
    return out


def assert_same(snapshot: Snapshot, now: float, config: EngineConfig, cycles: int) -> None:
    # Test clusters are small: narrowing is forced on (it starts at NARROW_FROM nodes, while
    # enough nodes are idle), and a second run has blocks of 4 nodes so that blocks where
    # nothing fits are left out too.
    with (
        mock.patch.object(state_module, "NARROW_FROM", 0),
        mock.patch.object(state_module, "IDLE_SHARE_TO_NARROW", 0.0),
    ):
        fast = run(snapshot, now, config, cycles)
        with mock.patch.object(state_module, "BLOCK", 4):
            small_blocks = run(snapshot, now, config, cycles)
    with plain():
        slow = run(snapshot, now, config, cycles)
    for index, (got, blocked, expected) in enumerate(zip(fast, small_blocks, slow, strict=True)):
        assert got == expected, f"cycle {index} differs"
        assert blocked == expected, f"cycle {index} differs with blocks of 4 nodes"


@SETTINGS
@given(scenarios())
def test_random_scenarios_decide_the_same(scenario: Scenario) -> None:
    assert_same(scenario.snapshot, scenario.now, scenario.config, cycles=4)


def _cluster(seed: int) -> Snapshot:
    """Two kinds of node, most of them idle (where the candidates are narrowed), zones,
    a tainted GPU kind; gangs and lone pods of mixed shapes, priorities and durations."""
    rng = np.random.default_rng(seed)
    taint = Taint("gpu", "present", "NoSchedule")
    nodes = []
    for i in range(60):
        gpu = i % 4 == 3
        alloc = {"cpu": 32_000, "memory": 128 * GI, "pods": 30}
        if gpu:
            alloc["gpu"] = 4
        labels = {"zone": f"z{int(rng.integers(3))}"}
        nodes.append(Node(f"n{i:02d}", alloc, labels, (taint,) if gpu else ()))
    pods, gangs = [], []
    for g in range(45):
        size = int(rng.choice([1, 1, 2, 3, 5, 8, 13, 40]))
        gpu = rng.random() < 0.2
        requests = {"cpu": int(rng.integers(1, 9)) * 1000, "memory": int(rng.integers(1, 17)) * GI}
        if gpu:
            requests["gpu"] = 1
        selector = {"zone": f"z{int(rng.integers(3))}"} if rng.random() < 0.25 else {}
        priority = int(rng.integers(0, 4))
        placement = Placement.SPREAD if rng.random() < 0.15 else Placement.BINPACK
        # Some gangs have a bigger launcher: two shapes, placed one after the other in a trial
        # that is undone when the second does not fit (the first's nodes turn idle again).
        launcher = {**requests, "cpu": 24_000, "memory": 96 * GI} if size > 1 and rng.random() < 0.4 else None
        gang = Gang("ns", f"g{g:02d}", size, created=float(g), priority=priority, placement=placement)
        gangs.append(gang)
        for j in range(size):
            pods.append(
                Pod(
                    "ns",
                    f"g{g:02d}-{j}",
                    launcher if launcher is not None and j == 0 else requests,
                    priority=priority,
                    created=float(g),
                    gang=gang.key,
                    node_selector=selector,
                    tolerations=(Toleration("gpu", "Exists", "", "NoSchedule"),) if gpu else (),
                    duration=float(rng.integers(30, 200)),
                )
            )
    # First in the queue and too big: its launcher is placed, then the whole trial is undone.
    big = Gang("ns", "big", 200, created=-1.0, priority=5)
    gangs.append(big)
    for j in range(200):
        shape = {"cpu": 30_000, "memory": 8 * GI} if j == 0 else {"cpu": 16_000, "memory": GI}
        pods.append(Pod("ns", f"big-{j}", shape, priority=5, created=-1.0, gang=big.key))
    return Snapshot(tuple(nodes), tuple(pods), tuple(gangs))


def test_mostly_idle_cluster_with_completions_decides_the_same() -> None:
    # Greedy head of line: a failed trial is undone and the next unit placed at once, with
    # nothing in between that recounts the state (the undo alone must put the nodes back).
    for seed in range(4):
        for config in (EngineConfig(), EngineConfig(head_of_line=HeadOfLine.NONE)):
            assert_same(_cluster(seed), 0.0, config, cycles=8)


def test_narrowing_leaves_out_idle_nodes() -> None:
    """What the shortcut is for: on an idle cluster a small gang is offered a node, not all."""
    snapshot = _cluster(0)
    state = ClusterState(dataclasses.replace(snapshot, pods=()))
    mask = np.ones(len(snapshot.nodes), dtype=bool)
    request = state.requests_vector({"cpu": 1000, "memory": GI})
    request[state.column["pods"]] = 1
    assert state.candidates(mask, request, 2) is None  # 60 nodes: too few to narrow
    with mock.patch.object(state_module, "NARROW_FROM", 0):
        chosen = state.candidates(mask, request, 2)
    assert chosen.tolist() == [0, 3]  # the first idle node of each kind


def test_a_busy_cluster_is_not_narrowed() -> None:
    """Below ``IDLE_SHARE_TO_NARROW`` idle nodes the nodes in use are most of the candidates:
    every node is looked at (whole-array placement), as on a small cluster."""
    snapshot = _cluster(0)
    state = ClusterState(dataclasses.replace(snapshot, pods=()))
    mask = np.ones(len(snapshot.nodes), dtype=bool)
    request = state.requests_vector({"cpu": 1000, "memory": GI})
    request[state.column["pods"]] = 1
    busy = int(len(snapshot.nodes) * (1 - state_module.IDLE_SHARE_TO_NARROW)) + 1
    state.take(np.arange(busy), np.ones(busy, np.int64), request)
    with mock.patch.object(state_module, "NARROW_FROM", 0):
        assert state.candidates(mask, request, 2) is None
        state.give(np.arange(busy), np.ones(busy, np.int64), request)
        assert state.candidates(mask, request, 2) is not None
