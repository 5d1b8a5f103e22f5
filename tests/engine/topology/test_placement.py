"""Topology-aware placement: one domain per constrained gang, best fit, widening."""

from scheduler_core.engine import EngineConfig, Reason, Topology, TopologyConstraint, run_cycle

from ..world import NOW, bound_of, gang, members, pod
from .tworld import BLOCK, HOST, RACK, domains_of, fleet, labelled, preferred, required, world


def test_a_required_gang_lands_in_one_rack_the_best_fitting_one():
    # r0 has 2 nodes (16 GPUs), r1 and r2 have 4 (32): 16 GPUs fit r0 exactly, leaving the big
    # racks whole for big gangs.
    nodes = fleet("b0:r1=4,r0=2 b1:r2=4")
    snap = world(nodes, members("t/a", 2, gpu=8), [gang("t/a", 2, topology=required(RACK))])
    result = run_cycle(snap, NOW)
    assert len(bound_of(result, "t/a")) == 2
    assert domains_of(snap, result, "t/a", RACK) == {("b0", "r0")}


def test_best_fit_counts_what_is_free_not_the_rack_size():
    nodes = fleet("b0:r0=4,r1=4")
    busy = [pod(f"x/busy-{i}", gpu=8, node=f"r1-h{i}") for i in range(2)]
    snap = world(nodes, (*busy, *members("t/a", 2, gpu=8)), [gang("t/a", 2, topology=required(RACK))])
    result = run_cycle(snap, NOW)
    assert domains_of(snap, result, "t/a", RACK) == {("b0", "r1")}


def test_a_required_gang_no_rack_can_hold_waits_and_says_which_rack_came_closest():
    nodes = fleet("b0:r0=4,r1=3")
    snap = world(nodes, members("t/a", 5, gpu=8), [gang("t/a", 5, topology=required(RACK))])
    result = run_cycle(snap, NOW)
    assert result.binds == []
    why = result.explanations["t/a"]
    assert why.reason == Reason.NO_DOMAIN_FITS
    assert "no rack has 40 free nvidia.com/gpu (best: rack r0, 32 free)" in why.message
    assert why.details["best_domain"] == "r0"
    assert why.details["level"] == RACK


def test_without_the_constraint_the_same_gang_spreads_over_racks():
    nodes = fleet("b0:r0=4,r1=3")
    snap = world(nodes, members("t/a", 5, gpu=8), [gang("t/a", 5)])
    assert len(bound_of(run_cycle(snap, NOW), "t/a")) == 5


def test_engine_config_topology_off_ignores_constraints():
    nodes = fleet("b0:r0=4,r1=3")
    snap = world(nodes, members("t/a", 5, gpu=8), [gang("t/a", 5, topology=required(RACK))])
    result = run_cycle(snap, NOW, EngineConfig(topology=False))
    assert len(bound_of(result, "t/a")) == 5


def test_preferred_takes_the_smallest_rack_that_fits():
    nodes = fleet("b0:r0=4,r1=2 b1:r2=3")
    snap = world(nodes, members("t/a", 3, gpu=8), [gang("t/a", 3, topology=preferred(RACK))])
    result = run_cycle(snap, NOW)
    assert domains_of(snap, result, "t/a", RACK) == {("b1", "r2")}


def test_preferred_widens_to_one_block_then_to_the_whole_cluster():
    nodes = fleet("b0:r0=2,r1=2 b1:r2=2,r3=1")
    snap = world(nodes, members("t/a", 3, gpu=8), [gang("t/a", 3, topology=preferred(RACK))])
    result = run_cycle(snap, NOW)
    # No rack holds 3; both blocks do: b1 (3 nodes) leaves nothing over, b0 (4) one node.
    assert domains_of(snap, result, "t/a", BLOCK) == {("b1",)}
    big = world(nodes, members("t/b", 6, gpu=8), [gang("t/b", 6, topology=preferred(RACK))])
    result = run_cycle(big, NOW)
    assert len(bound_of(result, "t/b")) == 6
    assert len(domains_of(big, result, "t/b", BLOCK)) == 2


def test_inside_a_wider_domain_the_gang_uses_the_fewest_racks():
    nodes = fleet("b0:r0=1,r1=3,r2=2")
    snap = world(nodes, members("t/a", 5, gpu=8), [gang("t/a", 5, topology=preferred(RACK))])
    result = run_cycle(snap, NOW)
    # r1 (3) + r2 (2): two racks, not three.
    assert domains_of(snap, result, "t/a", RACK) == {("b0", "r1"), ("b0", "r2")}


def test_required_block_preferred_rack_stays_in_the_block_and_prefers_a_rack():
    nodes = fleet("b0:r0=2,r1=2 b1:r2=4")
    both = TopologyConstraint(required=BLOCK, preferred=RACK)
    snap = world(nodes, members("t/a", 2, gpu=8), [gang("t/a", 2, topology=both)])
    result = run_cycle(snap, NOW)
    assert len(domains_of(snap, result, "t/a", RACK)) == 1
    wide = world(nodes, members("t/b", 4, gpu=8), [gang("t/b", 4, topology=both)])
    result = run_cycle(wide, NOW)
    assert domains_of(wide, result, "t/b", RACK) == {("b1", "r2")}
    too_big = world(nodes, members("t/c", 5, gpu=8), [gang("t/c", 5, topology=both)])
    result = run_cycle(too_big, NOW)
    assert result.binds == []
    assert result.explanations["t/c"].reason == Reason.NO_DOMAIN_FITS
    assert "no block has" in result.explanations["t/c"].message


def test_a_rack_name_reused_in_two_blocks_is_two_racks():
    nodes = (
        labelled("a", {BLOCK: "b0", RACK: "r0"}, gpu=8),
        labelled("b", {BLOCK: "b1", RACK: "r0"}, gpu=8),
    )
    snap = world(nodes, members("t/a", 2, gpu=8), [gang("t/a", 2, topology=required(RACK))])
    result = run_cycle(snap, NOW)
    assert result.explanations["t/a"].reason == Reason.NO_DOMAIN_FITS


def test_nodes_without_the_level_label_are_in_no_domain():
    nodes = (labelled("a", {}, gpu=8), labelled("b", {}, gpu=8), labelled("c", {RACK: "r0"}, gpu=8))
    snap = world(nodes, members("t/a", 2, gpu=8), [gang("t/a", 2, topology=required(RACK))])
    assert run_cycle(snap, NOW).binds == []
    one = world(nodes, members("t/b", 1, gpu=8), [gang("t/b", 1, topology=required(RACK))])
    assert {b.node for b in run_cycle(one, NOW).binds} == {"c"}


def test_an_unknown_level_makes_the_gang_wait_naming_it():
    nodes = fleet("b0:r0=2")
    snap = world(nodes, members("t/a", 1, gpu=8), [gang("t/a", 1, topology=required("example.com/pod"))])
    result = run_cycle(snap, NOW)
    assert result.binds == []
    why = result.explanations["t/a"]
    assert why.reason == Reason.TOPOLOGY_UNKNOWN
    assert "'example.com/pod'" in why.message
    no_topology = world(
        nodes, members("t/a", 1, gpu=8), [gang("t/a", 1, topology=required(RACK))], topologies=()
    )
    assert run_cycle(no_topology, NOW).explanations["t/a"].reason == Reason.TOPOLOGY_UNKNOWN
    named = required(RACK, topology="other")
    wrong = world(nodes, members("t/a", 1, gpu=8), [gang("t/a", 1, topology=named)])
    assert "topology 'other'" in run_cycle(wrong, NOW).explanations["t/a"].message


def test_a_named_topology_uses_its_own_levels():
    zone = "topology.kubernetes.io/zone"
    nodes = (
        labelled("a", {zone: "z1", RACK: "r0"}, gpu=8),
        labelled("b", {zone: "z1", RACK: "r1"}, gpu=8),
        labelled("c", {zone: "z2", RACK: "r2"}, gpu=8),
    )
    topologies = (Topology("racks", (RACK, HOST)), Topology("zones", (zone, RACK, HOST)))
    by_zone = world(
        nodes,
        members("t/a", 2, gpu=8),
        [gang("t/a", 2, topology=TopologyConstraint(required=zone))],
        topologies=topologies,
    )
    assert len(bound_of(run_cycle(by_zone, NOW), "t/a")) == 2
    by_rack = world(
        nodes,
        members("t/a", 2, gpu=8),
        [gang("t/a", 2, topology=required(RACK, topology="racks"))],
        topologies=topologies,
    )
    assert run_cycle(by_rack, NOW).binds == []


def test_running_members_anchor_new_ones_to_their_rack():
    nodes = fleet("b0:r0=4,r1=2")
    running = members("t/a", 1, gpu=8, node="r0-h0", started=NOW - 5)
    pending = members("t/a", 2, gpu=8, start=1)
    snap = world(nodes, (*running, *pending), [gang("t/a", 3, topology=required(RACK))])
    result = run_cycle(snap, NOW)
    # r1 would be the best fit for 2 alone; the running member keeps them in r0.
    assert {b.node.split("-")[0] for b in result.binds} == {"r0"}


def test_each_gang_of_a_group_gets_its_own_domain_and_the_group_may_span_racks():
    from ..world import group

    nodes = fleet("b0:r0=2,r1=2")
    gangs = [
        gang("t/a", 2, group="t/g", topology=required(RACK)),
        gang("t/b", 2, group="t/g", topology=required(RACK)),
    ]
    pods = (*members("t/a", 2, gpu=8), *members("t/b", 2, gpu=8))
    snap = world(nodes, pods, gangs, [group("t/g", "t/a", "t/b")])
    result = run_cycle(snap, NOW)
    assert len(result.binds) == 4
    assert len(domains_of(snap, result, "t/a", RACK)) == 1
    assert len(domains_of(snap, result, "t/b", RACK)) == 1
    assert domains_of(snap, result, "t/a", RACK) != domains_of(snap, result, "t/b", RACK)


def test_a_gang_of_two_shapes_needs_a_rack_for_both():
    nodes = (
        labelled("a", {RACK: "r0"}, gpu=8),
        labelled("b", {RACK: "r0"}, cpu=32),
        labelled("c", {RACK: "r1"}, gpu=8),
        labelled("d", {RACK: "r1"}, gpu=8),
    )
    pods = (*members("t/a", 2, gpu=8), *members("t/a", 1, cpu=16, start=2))
    snap = world(nodes, pods, [gang("t/a", 3, topology=required(RACK))])
    result = run_cycle(snap, NOW)
    assert result.binds == []
    assert result.explanations["t/a"].reason == Reason.NO_DOMAIN_FITS


def test_a_rack_outside_every_block_is_not_a_rack_of_a_required_block():
    # Found by the property "a required gang is never split": a node with a rack label but no
    # block label is in no block, so a gang that must stay in one block never lands there.
    nodes = (labelled("a", {BLOCK: "b0", RACK: "r0"}, cpu=1), labelled("b", {RACK: "r0"}, cpu=8))
    both = TopologyConstraint(required=BLOCK, preferred=RACK)
    snap = world(nodes, members("t/a", 2, cpu=1), [gang("t/a", 2, topology=both)])
    result = run_cycle(snap, NOW)
    assert result.binds == []
    assert result.explanations["t/a"].reason == Reason.NO_DOMAIN_FITS


def test_a_spread_gang_spreads_inside_its_rack():
    from scheduler_core.engine import Placement

    nodes = fleet("b0:r0=3,r1=2", cpu=8)
    snap = world(
        nodes,
        members("t/a", 2, cpu=1),
        [gang("t/a", 2, placement=Placement.SPREAD, topology=required(RACK))],
    )
    placed = {b.node for b in run_cycle(snap, NOW).binds}
    # r1 is the best fit (the smaller rack); spread, the two members take its two nodes.
    assert placed == {"r1-h0", "r1-h1"}


def test_with_topology_off_an_unknown_level_is_ignored_too():
    nodes = fleet("b0:r0=2")
    snap = world(nodes, members("t/a", 1, gpu=8), [gang("t/a", 1, topology=required("example.com/pod"))])
    result = run_cycle(snap, NOW, EngineConfig(topology=False))
    assert bound_of(result, "t/a") == ["t/a-0"]


def test_shapes_that_fit_a_rack_apart_but_not_together_bind_nothing():
    """A Strict gang of two shapes whose members each fit the only rack, but not all four at
    once (9 GiB on 8): counting each shape on its own said 4 placeable, and the gang was marked
    satisfied with nothing bound, its members then bound one by one below min_member. Found by
    test_properties.test_the_gang_rules_hold_with_topology."""
    nodes = fleet("b0:r0=1", cpu=4, gpu=0, memory=8)
    pods = (*members("t/a", 2, cpu=0.25, memory=0.5), *members("t/a", 2, cpu=0.25, memory=4, start=2))
    snap = world(nodes, pods, [gang("t/a", 4, topology=required(RACK))])
    for _ in range(3):  # a gang marked satisfied would bind what fits in the next cycle
        result = run_cycle(snap, NOW)
        assert result.binds == []
        assert all(t.gang != "t/a" or t.kind.value != "satisfied" for t in result.transitions)
        assert result.explanations["t/a"].reason == Reason.NO_DOMAIN_FITS
