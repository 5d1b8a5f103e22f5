"""Volcano's network-topology-aware cases (HyperNodes), re-expressed for gangsched.

Each test cites the Volcano test it comes from (volcano-sh/volcano). A HyperNode tree becomes
one synthetic node label per tier (``scheduler_core.reads.topology_domains.hypernode_label``), and a
topology of those labels, the highest tier widest; a job's ``networkTopology`` with mode hard
and ``highestTierAllowed`` N is a required constraint at tier N, mode soft a preferred one at
tier 1 (the tightest), widening up to the whole cluster.
"""

from __future__ import annotations

from scheduler_core.engine import Reason, Topology, TopologyConstraint, run_cycle
from scheduler_core.reads.topology_domains import hypernode_label

from ..world import NOW, bound_of, gang, members
from .tworld import labelled, world


def hypernodes(tree: dict[str, tuple[int, tuple[str, ...]]], cpu: float, memory: float):
    """Nodes and a topology from ``{hypernode: (tier, members)}`` (members: nodes or hypernodes)."""
    tiers = sorted({tier for tier, _ in tree.values()}, reverse=True)
    parent = {member: name for name, (_, children) in tree.items() for member in children}
    leaves = [m for _, children in tree.values() for m in children if m not in tree]
    nodes = []
    for leaf in leaves:
        labels, up = {}, parent.get(leaf)
        while up is not None:
            labels[hypernode_label(tree[up][0])] = up
            up = parent.get(up)
        nodes.append(labelled(leaf, labels, cpu=cpu, memory=memory))
    topology = Topology("volcano-hypernodes", tuple(hypernode_label(t) for t in tiers))
    return tuple(nodes), topology


#: s0 = {s0-n1, s0-n2}, s1 = {s1-n3, s1-n4} at tier 1, s2 = {s0, s1} at tier 2.
TWO_TIERS = {
    "s0": (1, ("s0-n1", "s0-n2")),
    "s1": (1, ("s1-n3", "s1-n4")),
    "s2": (2, ("s0", "s1")),
}


def hard(tier: int) -> TopologyConstraint:
    return TopologyConstraint(required=hypernode_label(tier))


def soft() -> TopologyConstraint:
    return TopologyConstraint(preferred=hypernode_label(1))


def job(count: int, min_available: int, constraint: TopologyConstraint):
    pods = members("c1/pg1", count, cpu=2, memory=4)
    return pods, [gang("c1/pg1", min_available, topology=constraint)]


# pkg/scheduler/actions/allocate/allocate_test.go, TestAllocateWithNetWorkTopologies,
# "hard network topology constrain, can not allocate job when cross highestTierAllowed tier"
def test_volcano_hard_cannot_allocate_across_the_highest_tier_allowed():
    nodes, topology = hypernodes(TWO_TIERS, cpu=2, memory=4)
    pods, gangs = job(3, 3, hard(1))
    result = run_cycle(world(nodes, pods, gangs, topologies=(topology,)), NOW)
    assert result.binds == []
    why = result.explanations["c1/pg1"]
    assert why.reason == Reason.NO_DOMAIN_FITS
    assert "no tier-1 HyperNode has 6 free cpu (best: tier-1 HyperNode s0, 4 free)" in why.message


# pkg/scheduler/actions/allocate/allocate_test.go, TestAllocateWithNetWorkTopologies,
# "hard network topology constrain, can allocate job when highestTierAllowed not reached"
def test_volcano_hard_allocates_within_a_higher_tier():
    nodes, topology = hypernodes(TWO_TIERS, cpu=2, memory=4)
    pods, gangs = job(3, 3, hard(2))
    result = run_cycle(world(nodes, pods, gangs, topologies=(topology,)), NOW)
    assert len(bound_of(result, "c1/pg1")) == 3


# pkg/scheduler/actions/allocate/allocate_test.go, TestAllocateWithNetWorkTopologies,
# "hard network topology constrain, can allocate job when minavailable < replicas"
# (and "... when multi hyperNodes are available")
def test_volcano_hard_allocates_within_one_hypernode_when_min_available_is_below_replicas():
    nodes, topology = hypernodes(TWO_TIERS, cpu=2, memory=4)
    pods, gangs = job(2, 1, hard(1))
    snap = world(nodes, pods, gangs, topologies=(topology,))
    result = run_cycle(snap, NOW)
    assert len(result.binds) == 2
    assert len({b.node.split("-")[0] for b in result.binds}) == 1  # one tier-1 HyperNode


# pkg/scheduler/actions/allocate/allocate_test.go, TestAllocateWithNetWorkTopologies,
# "soft network topology constrain, can allocate job when resources are enough"
def test_volcano_soft_allocates_across_hypernodes_when_none_holds_the_job():
    nodes, topology = hypernodes(TWO_TIERS, cpu=2, memory=4)
    pods, gangs = job(3, 3, soft())
    result = run_cycle(world(nodes, pods, gangs, topologies=(topology,)), NOW)
    assert len(result.binds) == 3


# pkg/scheduler/actions/allocate/allocate_test.go, TestHyperNodeBinpackWithNetWorkTopologies,
# "hard network topology constrain, allocate task to node under LCAHyperNode": four whole-node
# tasks under a tier-2 HyperNode of three tier-1 ones land 2 + 2 in two tier-1 HyperNodes.
def test_volcano_binpack_uses_the_fewest_tier_1_hypernodes():
    tree = {
        "s0": (1, ("s0-n1", "s0-n2")),
        "s1": (1, ("s1-n3", "s1-n4")),
        "s2": (1, ("s2-n5", "s2-n6")),
        "s3": (2, ("s0", "s1", "s2")),
    }
    nodes, topology = hypernodes(tree, cpu=4, memory=8)
    pods = members("c1/pg1", 4, cpu=4, memory=8)
    result = run_cycle(world(nodes, pods, [gang("c1/pg1", 4, topology=hard(2))], topologies=(topology,)), NOW)
    assert len(result.binds) == 4
    per = sorted(sum(1 for b in result.binds if b.node.startswith(name)) for name in ("s0", "s1", "s2"))
    assert per == [0, 2, 2]


# pkg/scheduler/plugins/network-topology-aware/network_topology_aware_test.go,
# TestNetworkTopologyAwareNodeScore, "Tasks in job rescheduled, score nodes according to node
# hypernode LCA hyperNode tier": a rescheduled task goes as close to its job's running tasks
# as it can: their tier-1 HyperNode s3 is full, so s4 (same tier-2 s1), not s5 or s6.
def test_volcano_rescheduled_task_lands_nearest_its_running_tasks():
    tree = {
        "s3": (1, ("s3-n1", "s3-n2")),
        "s4": (1, ("s4-n1", "s4-n2")),
        "s5": (1, ("s5-n1", "s5-n2")),
        "s6": (1, ("s6-n1", "s6-n2")),
        "s1": (2, ("s3", "s4")),
        "s2": (2, ("s5", "s6")),
        "s0": (3, ("s1", "s2")),
    }
    nodes, topology = hypernodes(tree, cpu=2, memory=4)
    running = (
        *members("c1/pg1", 1, cpu=2, memory=4, node="s3-n1", started=NOW - 5),
        *members("c1/pg1", 1, cpu=2, memory=4, node="s3-n2", started=NOW - 5, start=1),
    )
    pending = members("c1/pg1", 1, cpu=2, memory=4, start=2)
    gangs = [gang("c1/pg1", 1, satisfied=True, topology=soft())]
    result = run_cycle(world(nodes, (*running, *pending), gangs, topologies=(topology,)), NOW)
    assert [b.node.split("-")[0] for b in result.binds] == ["s4"]
