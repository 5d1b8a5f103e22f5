"""A cluster state carried from cycle to cycle decides exactly what one built afresh does.

``Carry`` (carry.py) lets ``run_cycle`` copy the request rows and nodes of the pods it saw last
cycle instead of rebuilding them. It is a shortcut, never policy: every cycle here runs twice,
with a carry kept across the cycles and without, and the decisions and the state's arrays must be
the same, cycle after cycle, while pods complete, arrive, get preempted and reserved, nodes
change and resources appear and disappear.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given

from scheduler_core.engine import Carry, EngineConfig, Node, Pod, Snapshot, apply_result, run_cycle
from scheduler_core.engine.session import Session
from scheduler_core.engine.state import ClusterState

from .cycles import advance, decisions
from .strategies import SETTINGS, Scenario, scenarios
from .test_incremental_state import _cluster

GI = 2**30


def assert_same_state(carried: ClusterState, fresh: ClusterState) -> None:
    assert carried.resources == fresh.resources
    assert carried.node_names == fresh.node_names
    for name in (
        "alloc",
        "pod_rows",
        "pod_where",
        "pod_pending",
        "pod_reserved",
        "pod_used",
        "used",
        "scale",
        "pod_terminating",
    ):
        assert np.array_equal(getattr(carried, name), getattr(fresh, name)), name
    assert np.array_equal(carried.pod_end, fresh.pod_end, equal_nan=True)  # backfilling's known ends
    # Gang codes are numbered in the order gangs were first seen, so they may differ; the gang
    # each code stands for may not.
    carried_gangs = [carried.gang_codes.keys[c] if c >= 0 else None for c in carried.pod_gang.tolist()]
    fresh_gangs = [fresh.gang_codes.keys[c] if c >= 0 else None for c in fresh.pod_gang.tolist()]
    assert carried_gangs == fresh_gangs == [pod.gang for pod in fresh.pods]


def run_both(snapshot: Snapshot, now: float, config: EngineConfig, steps) -> Carry:
    """Cycles with and without a carry; ``steps`` change the snapshot between cycles (a
    function of (snapshot, cycle index)) as the cluster and the submitters would."""
    carry = Carry()  # two carried builds a cycle: the state compared here, then the cycle's
    for index, step in enumerate(steps):
        snapshot = step(snapshot, index)
        carried = Session(snapshot, now, config, carry).state
        assert_same_state(carried, ClusterState(snapshot))
        expected = run_cycle(snapshot, now, config)
        got = run_cycle(snapshot, now, config, carry)
        assert decisions(got) == decisions(expected), f"cycle {index} differs"
        snapshot = advance(apply_result(snapshot, expected, now), now + 37.0)
        now += 37.0
    return carry


def unchanged(snapshot: Snapshot, _index: int) -> Snapshot:
    return snapshot


def arrivals(snapshot: Snapshot, index: int) -> Snapshot:
    """A few new lone pods, one of them asking for a resource no pod asked for before."""
    new = [Pod("late", f"p{index}-{j}", {"cpu": 2000, "memory": GI}, created=100.0 + index) for j in range(3)]
    if index == 2:
        new.append(Pod("late", f"fpga{index}", {"cpu": 1000, "example.com/fpga": 1}, created=100.0))
    return dataclasses.replace(snapshot, pods=snapshot.pods + tuple(new))


def node_change(snapshot: Snapshot, index: int) -> Snapshot:
    """Every third cycle the nodes are new objects (a node added)."""
    if index % 3 != 2:
        return snapshot
    extra = Node(f"extra{index}", {"cpu": 16_000, "memory": 64 * GI, "pods": 20})
    return dataclasses.replace(snapshot, nodes=snapshot.nodes + (extra,))


@SETTINGS
@given(scenarios())
def test_random_scenarios_decide_the_same_with_a_carry(scenario: Scenario) -> None:
    run_both(scenario.snapshot, scenario.now, scenario.config, [unchanged] * 4)


def test_completions_preemption_and_arrivals_decide_the_same() -> None:
    for seed in range(3):
        carry = run_both(_cluster(seed), 0.0, EngineConfig(), [arrivals] * 6)
        # The first cycle builds; a new resource (cycle 2) forces one more build, and so would
        # the cycle after the fpga pod is gone (test_a_resource_no_longer_named_drops_its_column).
        assert carry.rebuilt == 2, (carry.restored, carry.rebuilt)
        assert carry.restored == 12 - carry.rebuilt


def test_new_node_objects_start_again() -> None:
    carry = run_both(_cluster(1), 0.0, EngineConfig(), [node_change] * 6)
    assert carry.rebuilt == 3  # cycle 0, and after the nodes changed at cycles 2 and 5
    assert carry.restored == 9


def test_a_resource_no_longer_named_drops_its_column() -> None:
    nodes = (Node("a", {"cpu": 8000, "pods": 10}),)
    fpga = Pod("x", "fpga", {"cpu": 1000, "example.com/fpga": 0}, node="a")
    plain = Pod("x", "plain", {"cpu": 1000}, node="a")
    carry = Carry()
    first = ClusterState(Snapshot(nodes, (fpga, plain)), carry)
    assert "example.com/fpga" in first.resources
    second = ClusterState(Snapshot(nodes, (plain,)), carry)
    assert second.resources == ClusterState(Snapshot(nodes, (plain,))).resources
    assert "example.com/fpga" not in second.resources
    assert carry.rebuilt == 2


def test_carried_pods_keep_their_rows_and_nodes() -> None:
    """The pods seen last cycle are copied, not rebuilt: a new pod is the only one looked at."""
    snapshot = _cluster(0)
    carry = Carry()
    run_cycle(snapshot, 0.0, EngineConfig(), carry)
    late = Pod("late", "one", {"cpu": 3000, "memory": 2 * GI}, node=snapshot.nodes[5].name)
    state = ClusterState(dataclasses.replace(snapshot, pods=(late,) + snapshot.pods), carry)
    assert carry.restored == 1
    assert state.pod_where[0] == 5
    assert state.describe(state.pod_rows[0]) == {"cpu": 3000, "memory": 2 * GI}
    assert not state.pod_rows.flags.writeable and not state.alloc.flags.writeable
