"""Kueue's Topology-Aware Scheduling cases, re-expressed for gangsched's engine.

Each test cites the Kueue test it comes from (kubernetes-sigs/kueue). A Kueue workload's pod set
with ``podset-required-topology`` / ``podset-preferred-topology`` is a gang with a required or
preferred ``TopologyConstraint``; a ``Topology`` lists node-label levels, widest first.
"""

from __future__ import annotations

from scheduler_core.engine import Reason, Topology, TopologyConstraint, run_cycle

from ..world import NOW, bound_of, gang, members, pod
from .tworld import HOST, labelled, world

RACK = "cloud.provider.com/rack"
SINGLE = Topology("tas-single-level", (HOST,))
TWO_LEVEL = Topology("tas-two-level", (RACK, HOST))


def _pods(key: str, count: int, cpu: float, **kwargs):
    return members(key, count, cpu=cpu, memory=0, **kwargs)


# pkg/scheduler/scheduler_tas_test.go, TestScheduleForTAS, "workload required TAS gets scheduled"
def test_kueue_workload_required_tas_gets_scheduled():
    nodes = (labelled("x1", {}, cpu=1, memory=1),)
    snap = world(
        nodes,
        _pods("default/foo", 1, cpu=1),
        [gang("default/foo", 1, topology=TopologyConstraint(required=HOST))],
        topologies=(SINGLE,),
    )
    result = run_cycle(snap, NOW)
    assert {b.pod: b.node for b in result.binds} == {"default/foo-0": "x1"}


# pkg/scheduler/scheduler_tas_test.go, TestScheduleForTAS,
# "workload requests topology level which is not present in topology"
def test_kueue_workload_requests_topology_level_which_is_not_present_in_topology():
    nodes = (labelled("x1", {}, cpu=1, memory=1),)
    snap = world(
        nodes,
        _pods("default/foo", 1, cpu=1),
        [gang("default/foo", 1, topology=TopologyConstraint(required="cloud.com/non-existing"))],
        topologies=(SINGLE,),
    )
    result = run_cycle(snap, NOW)
    assert result.binds == []
    why = result.explanations["default/foo"]
    assert why.reason == Reason.TOPOLOGY_UNKNOWN
    assert "cloud.com/non-existing" in why.message


# pkg/scheduler/scheduler_tas_test.go, TestScheduleForTAS,
# "workload requests topology level which is only present in second flavor"
def test_kueue_topology_level_only_present_in_the_second_topology():
    custom = "cloud.com/custom-level"
    node = labelled("x1", {custom: "x1"}, cpu=1)
    snap = world(
        (node,),
        _pods("default/foo", 1, cpu=1),
        [gang("default/foo", 1, topology=TopologyConstraint(required=custom))],
        topologies=(SINGLE, Topology("tas-custom-topology", (custom,))),
    )
    assert bound_of(run_cycle(snap, NOW), "default/foo") == ["default/foo-0"]


# pkg/scheduler/scheduler_tas_test.go, TestScheduleForTAS,
# "workload does not get scheduled as it does not fit within the node capacity"
def test_kueue_workload_does_not_fit_within_the_node_capacity():
    nodes = (labelled("x1", {}, cpu=1, memory=1),)
    snap = world(
        nodes,
        _pods("default/foo", 2, cpu=1),
        [gang("default/foo", 2, topology=TopologyConstraint(required=HOST))],
        topologies=(SINGLE,),
    )
    result = run_cycle(snap, NOW)
    assert result.binds == []
    why = result.explanations["default/foo"]
    # Kueue: 'topology "tas-single-level" allows to fit only 1 out of 2 pod(s)'.
    assert why.reason == Reason.NO_DOMAIN_FITS
    assert "no hostname has 2 free cpu (best: hostname x1, 1 free)" in why.message
    assert why.details["best_members"] == 1


# pkg/scheduler/scheduler_tas_test.go, TestScheduleForTAS,
# "admits workload when nodes are partially empty; required" (and "; preferred")
def test_kueue_admits_workload_when_nodes_are_partially_empty():
    nodes = (
        labelled("x1", {RACK: "r1"}, cpu=0),
        labelled("x2", {RACK: "r1"}, cpu=1),
        labelled("x3", {RACK: "r1"}, cpu=1),
    )
    for constraint in (TopologyConstraint(required=RACK), TopologyConstraint(preferred=RACK)):
        snap = world(
            nodes,
            _pods("default/foo", 2, cpu=1),
            [gang("default/foo", 2, topology=constraint)],
            topologies=(TWO_LEVEL,),
        )
        assert sorted(b.node for b in run_cycle(snap, NOW).binds) == ["x2", "x3"]


# pkg/scheduler/scheduler_tas_test.go, TestScheduleForTASPreemption,
# "low priority workload is preempted even though there is enough capacity, but fragmented"
def test_kueue_low_priority_workload_is_preempted_when_capacity_is_fragmented():
    nodes = (labelled("x1", {}, cpu=5, memory=5), labelled("y1", {}, cpu=5, memory=5))
    mid = pod("default/mid-priority-admitted", cpu=4, memory=0, node="x1", started=NOW - 5, priority=2)
    low = pod("default/low-priority-admitted", cpu=4, memory=0, node="y1", started=NOW - 5, priority=1)
    snap = world(
        nodes,
        (mid, low, *_pods("default/foo", 2, cpu=1, priority=3)),
        [gang("default/foo", 2, priority=3, topology=TopologyConstraint(required=HOST))],
        topologies=(SINGLE,),
    )
    result = run_cycle(snap, NOW)
    # 1 CPU free on each node would hold the two pods, but they must share one node.
    assert [e.pod for e in result.evictions] == ["default/low-priority-admitted"]
    assert {r.node for r in result.reservations} == {"y1"}
    assert result.explanations["default/foo"].reason == Reason.PREEMPTING


# pkg/cache/scheduler/tas_flavor_snapshot_test.go, TestHasLevel, "required – invalid level",
# "preferred – invalid level" and "topology request empty": an unknown level is never honoured
# (the gang waits, saying so); an empty request is no constraint at all.
def test_kueue_has_level():
    levels = Topology("dummy", ("level-1", "level-2"))
    nodes = (labelled("x1", {"level-1": "a", "level-2": "b"}, cpu=1),)
    for constraint in (
        TopologyConstraint(required="invalid-level"),
        TopologyConstraint(preferred="invalid-level"),
    ):
        snap = world(
            nodes, _pods("ns/j", 1, cpu=1), [gang("ns/j", 1, topology=constraint)], topologies=(levels,)
        )
        assert run_cycle(snap, NOW).explanations["ns/j"].reason == Reason.TOPOLOGY_UNKNOWN
    for constraint in (
        TopologyConstraint(),
        TopologyConstraint(required="level-1"),
        TopologyConstraint(preferred="level-2"),
    ):
        snap = world(
            nodes, _pods("ns/j", 1, cpu=1), [gang("ns/j", 1, topology=constraint)], topologies=(levels,)
        )
        assert bound_of(run_cycle(snap, NOW), "ns/j") == ["ns/j-0"]


# pkg/cache/scheduler/tas_flavor_snapshot_test.go, TestSortedDomains, "BestFit: sliceCount
# descending" / "BestFit: podCount ascending as tiebreaker": among domains that fit, the one
# left fullest. Kueue sorts by what fits, most first, then picks the tightest; gangsched's best
# fit is the domain with the least left over once the gang is placed.
def test_kueue_best_fit_prefers_the_tightest_domain_that_fits():
    nodes = (
        labelled("a1", {RACK: "a"}, cpu=3),
        labelled("b1", {RACK: "b"}, cpu=1),
        labelled("c1", {RACK: "c"}, cpu=2),
    )
    snap = world(
        nodes,
        _pods("ns/j", 2, cpu=1),
        [gang("ns/j", 2, topology=TopologyConstraint(required=RACK))],
        topologies=(TWO_LEVEL,),
    )
    assert {b.node for b in run_cycle(snap, NOW).binds} == {"c1"}
