"""The snapshot's topologies: none without rows; each Topology row as the engine's
Topology; Volcano's HyperNodes as one ``volcano-hypernodes`` topology whose levels are their
tiers, highest first, and whose synthetic labels each node carries; a gang's constraint fields
as its TopologyConstraint (None when blank), in both the bulk build and ``gang_to_engine``."""

from pathlib import Path

import pytest

from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.declarations.documents import documents_parse
from scheduler_core.engine import model as engine
from scheduler_core.models import Gang, HyperNode, Node, Topology
from scheduler_core.reads.topology_domains import HYPERNODE_TOPOLOGY, hypernode_label, node_domain_labels
from scheduler_core.snapshot import build as snapshot

pytestmark = pytest.mark.django_db
EXAMPLES = Path(__file__).parents[2] / "examples" / "topology"


def test_no_topology_rows_no_topologies_and_no_constraints():
    Node.objects.create(name="n1", labels={"rack": "r1"})
    Gang.objects.create(namespace="ml", name="g", min_member=1)

    built = snapshot.build_snapshot()

    assert built.topologies == ()
    assert built.nodes[0].labels == {"rack": "r1"}
    assert built.gangs[0].topology is None


def test_topology_rows_and_a_gangs_constraint():
    Topology.objects.create(name="tas", levels=["block", "rack", "kubernetes.io/hostname"])
    gang = Gang.objects.create(
        namespace="ml", name="g", min_member=2, topology_required="block", topology_preferred="rack"
    )

    built = snapshot.build_snapshot()

    assert built.topologies == (engine.Topology("tas", ("block", "rack", "kubernetes.io/hostname")),)
    expected = engine.TopologyConstraint(required="block", preferred="rack", topology=None)
    assert built.gangs[0].topology == expected
    assert snapshot.gang_to_engine(gang, None).topology == expected


def test_hypernodes_become_tier_labels_and_one_topology():
    """Volcano's user guide tree: s0 {node-0, node-1}, s1 {node-2, node-3} under s2."""
    for index in range(5):
        Node.objects.create(name=f"node-{index}", labels={"zone": "a"})
    manifests_apply(documents_parse((EXAMPLES / "volcano-hypernodes.yaml").read_text()))

    built = snapshot.build_snapshot()

    assert built.topologies == (
        engine.Topology(HYPERNODE_TOPOLOGY, (hypernode_label(2), hypernode_label(1))),
    )
    labels = {node.name: node.labels for node in built.nodes}
    host = "kubernetes.io/hostname"  # a simulated node without it gets its name, as from the kubelet
    assert labels["node-0"] == {
        host: "node-0",
        "zone": "a",
        hypernode_label(1): "s0",
        hypernode_label(2): "s2",
    }
    assert labels["node-3"] == {
        host: "node-3",
        "zone": "a",
        hypernode_label(1): "s1",
        hypernode_label(2): "s2",
    }
    assert labels["node-4"] == {host: "node-4", "zone": "a"}  # in no HyperNode: in no domain
    allreduce = next(g for g in built.gangs if g.name == "allreduce")
    assert allreduce.topology == engine.TopologyConstraint(required=hypernode_label(1))
    # The pages and the API read the same mapping.
    assert node_domain_labels(Node.objects.all())["node-1"][hypernode_label(1)] == "s0"


def test_label_match_and_overlaps_go_to_the_first_by_name():
    Node.objects.create(name="gpu-1", labels={"rack": "r1"})
    Node.objects.create(name="gpu-2", labels={"rack": "r2"})
    by_label = {"labelMatch": {"matchLabels": {"rack": "r1"}, "matchExpressions": []}}
    everything = {"regexMatch": {"pattern": "gpu"}}
    HyperNode.objects.create(name="b-all", tier=1, members=[{"type": "Node", "selector": everything}])
    HyperNode.objects.create(name="a-r1", tier=1, members=[{"type": "Node", "selector": by_label}])

    labels = node_domain_labels(Node.objects.all())

    assert labels["gpu-1"][hypernode_label(1)] == "a-r1"
    assert labels["gpu-2"][hypernode_label(1)] == "b-all"


def test_the_number_of_queries_does_not_grow_with_hypernodes(django_assert_max_num_queries):
    for index in range(20):
        Node.objects.create(name=f"n{index}")
        HyperNode.objects.create(
            name=f"h{index}",
            tier=1,
            members=[{"type": "Node", "selector": {"exactMatch": {"name": f"n{index}"}}}],
        )
    with django_assert_max_num_queries(8):
        built = snapshot.build_snapshot()
    assert {node.name: node.labels for node in built.nodes}["n3"][hypernode_label(1)] == "h3"


def test_a_hostname_level_gives_every_node_its_hostname_label():
    Node.objects.create(name="sim-1")
    Node.objects.create(name="real-1", labels={"kubernetes.io/hostname": "real-1.example"})
    assert [node.labels for node in snapshot.build_snapshot().nodes] == [
        {"kubernetes.io/hostname": "real-1.example"},
        {},  # no topology has the level: labels as stored
    ]
    Topology.objects.create(name="tas", levels=["rack", "kubernetes.io/hostname"])

    labels = {node.name: node.labels for node in snapshot.build_snapshot().nodes}

    assert labels == {
        "real-1": {"kubernetes.io/hostname": "real-1.example"},
        "sim-1": {"kubernetes.io/hostname": "sim-1"},
    }
