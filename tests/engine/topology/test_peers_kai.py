"""KAI-Scheduler's topology cases, re-expressed for gangsched's engine.

Each test cites the KAI-Scheduler test it comes from (NVIDIA/KAI-Scheduler). A KAI ``Topology``
lists node-label levels, widest first, as gangsched's does; a pod group's
``topology-required-placement`` / ``topology-preferred-placement`` is the gang's required or
preferred level. Nodes here have one GPU per task unless the case says otherwise.
"""

from __future__ import annotations

import dataclasses

from scheduler_core.engine import (
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Reason,
    Topology,
    TopologyConstraint,
    run_cycle,
)

from ..world import NOW, bound, bound_of, gang, members
from .tworld import labelled, world

RACK = "k8s.io/rack"
SPINE = "k8s.io/spine"
ZONE = "k8s.io/zone"


def running(key: str, node: str):
    return members(key, 1, gpu=1, node=node, started=NOW - 5), gang(key, 1, satisfied=True)


def pending(key: str, count: int, constraint: TopologyConstraint, **kwargs):
    return members(key, count, gpu=1, **kwargs), gang(key, count, topology=constraint)


# pkg/scheduler/actions/allocate/allocateTopology_test.go,
# "Required topology level - schedule all tasks on the same rack"
def test_kai_required_rack_schedules_all_tasks_on_the_same_rack():
    topology = Topology("cluster-topology", (RACK,))
    nodes = tuple(labelled(f"node{i}", {RACK: f"rack{1 + i // 2}"}, gpu=1) for i in range(4))
    busy, busy_gang = running("ns/running_job0", "node0")
    pods, job = pending("ns/pending_job0", 2, TopologyConstraint(required=RACK, topology="cluster-topology"))
    result = run_cycle(world(nodes, (*busy, *pods), [busy_gang, job], topologies=(topology,)), NOW)
    assert sorted(bound(result).values()) == ["node2", "node3"]


# pkg/scheduler/actions/allocate/allocateTopology_test.go,
# "Required topology level - could not schedule on first domain due to affinity, goes to next"
def test_kai_required_rack_skips_the_rack_where_affinity_rules_a_task_out():
    topology = Topology("cluster-topology", (RACK,))
    marker = "kai.test/affinity"
    nodes = (
        labelled("node0", {RACK: "rack1"}, gpu=1),
        labelled("node1", {RACK: "rack1"}, gpu=1),
        labelled("node2", {RACK: "rack2", marker: "affinity1"}, gpu=1),
        labelled("node3", {RACK: "rack2", marker: "affinity1"}, gpu=1),
    )
    term = NodeSelectorTerm((NodeSelectorRequirement(marker, "In", ("affinity1",)),))
    pods = (
        *members("ns/pending_job0", 1, gpu=1, affinity=(term,)),
        *members("ns/pending_job0", 1, gpu=1, start=1),
    )
    job = gang("ns/pending_job0", 2, topology=TopologyConstraint(required=RACK))
    result = run_cycle(world(nodes, pods, [job], topologies=(topology,)), NOW)
    assert sorted(bound(result).values()) == ["node2", "node3"]


# pkg/scheduler/actions/allocate/allocateTopology_test.go,
# "Required topology with multiple levels - job remains pending as no available rack can be found"
def test_kai_job_remains_pending_as_no_available_rack_can_be_found():
    topology = Topology("cluster-topology", (RACK, SPINE))
    nodes = (
        labelled("node0", {RACK: "rack1", SPINE: "spine1"}, gpu=2),
        labelled("node1", {RACK: "rack1", SPINE: "spine2"}, gpu=2),
        labelled("node2", {RACK: "rack2", SPINE: "spine1"}, gpu=2),
        labelled("node3", {RACK: "rack2", SPINE: "spine2"}, gpu=2),
    )
    busy0, g0 = running("ns/running_job0", "node0")
    busy1, g1 = running("ns/running_job1", "node2")
    pods, job = pending("ns/pending_job0", 4, TopologyConstraint(required=RACK))
    result = run_cycle(world(nodes, (*busy0, *busy1, *pods), [g0, g1, job], topologies=(topology,)), NOW)
    assert bound_of(result, "ns/pending_job0") == []
    why = result.explanations["ns/pending_job0"]
    # KAI: "node-group rack1 can allocate only 3 of 4 required pods" (and rack2 alike).
    assert why.reason == Reason.NO_DOMAIN_FITS
    assert "no rack has 4 free nvidia.com/gpu (best: rack rack1, 3 free)" in why.message
    assert why.details["best_members"] == 3


# pkg/scheduler/actions/allocate/allocateTopology_test.go,
# "Preferred topology - schedule job even if preferred constraint can't be met"
def test_kai_preferred_rack_schedules_even_when_no_rack_holds_the_job():
    topology = Topology("cluster-topology", (RACK,))
    nodes = (labelled("node0", {RACK: "rack1"}, gpu=2), labelled("node1", {RACK: "rack2"}, gpu=2))
    busy0, g0 = running("ns/running_job0", "node0")
    busy1, g1 = running("ns/running_job1", "node1")
    pods, job = pending("ns/pending_job0", 2, TopologyConstraint(preferred=RACK))
    result = run_cycle(world(nodes, (*busy0, *busy1, *pods), [g0, g1, job], topologies=(topology,)), NOW)
    assert sorted(b.node for b in result.binds) == ["node0", "node1"]


# pkg/scheduler/actions/allocate/allocateTopology_test.go,
# "Bin Packing - allocate on domain with least free resources (most occupied)"
def test_kai_bin_packing_allocates_on_the_most_occupied_spine():
    topology = Topology("cluster-topology", (ZONE, SPINE, RACK))
    nodes = tuple(
        labelled(f"node{i}", {ZONE: "zone1", SPINE: f"spine{1 + i // 4}", RACK: f"rack{1 + i // 2}"}, gpu=1)
        for i in range(8)
    )
    busy = members("ns/running_job0", 3, gpu=1, started=NOW - 5)
    busy = tuple(dataclasses.replace(p, node=f"node{i}") for i, p in enumerate(busy))
    pods, job = pending("ns/pending_job0", 1, TopologyConstraint(preferred=SPINE))
    snap = world(
        nodes, (*busy, *pods), [gang("ns/running_job0", 3, satisfied=True), job], topologies=(topology,)
    )
    assert bound(run_cycle(snap, NOW)) == {"ns/pending_job0-0": "node3"}


# pkg/scheduler/actions/allocate/allocateTopology_test.go,
# "Combined preferred and required topology constraints - preferred level respected when possible"
def test_kai_required_rack_preferred_spine_uses_the_fewest_spines():
    topology = Topology("cluster-topology", (RACK, SPINE))
    nodes = tuple(labelled(f"node{i}", {RACK: "rack1", SPINE: f"spine{1 + i // 2}"}, gpu=1) for i in range(8))
    pods, job = pending("ns/pending_job0", 3, TopologyConstraint(required=RACK, preferred=SPINE))
    snap = world(nodes, pods, [job], topologies=(topology,))
    landed = {int(node.removeprefix("node")) // 2 for node in bound(run_cycle(snap, NOW)).values()}
    assert len(landed) == 2  # 3 tasks on 2 spines, not 3


# pkg/scheduler/plugins/topology/job_filtering_test.go,
# "mixed task statuses with required constraint - choose zone with existing pods"
def test_kai_required_zone_follows_the_running_pods():
    topology = Topology("test-topology", ("zone",))
    nodes = (labelled("node1", {"zone": "zone1"}, gpu=2), labelled("node2", {"zone": "zone2"}, gpu=3))
    pods = (
        *members("ns/test-job", 1, gpu=1, node="node2", started=NOW - 5),
        *members("ns/test-job", 2, gpu=1, start=1),
    )
    job = gang("ns/test-job", 3, topology=TopologyConstraint(required="zone"))
    result = run_cycle(world(nodes, pods, [job], topologies=(topology,)), NOW)
    assert sorted(bound(result).values()) == ["node2", "node2"]


# pkg/scheduler/plugins/topology/job_filtering_test.go, "required placement not found in
# topology" and "preferred placement not found in topology"
def test_kai_placement_level_not_found_in_the_named_topology():
    topology = Topology("test-topology", ("zone", "rack"))
    nodes = (labelled("node1", {"zone": "z", "rack": "r"}, gpu=1),)
    for constraint in (
        TopologyConstraint(required="nonexistent", topology="test-topology"),
        TopologyConstraint(preferred="nonexistent", topology="test-topology"),
    ):
        pods, job = pending("ns/j", 1, constraint)
        why = run_cycle(world(nodes, pods, [job], topologies=(topology,)), NOW).explanations["ns/j"]
        assert why.reason == Reason.TOPOLOGY_UNKNOWN
        assert "topology 'test-topology' has no level 'nonexistent'" in why.message
