"""Every topology format loads unmodified from its example in examples/topology/ into exactly
what docs/topology.md's tables say: Topology and HyperNode rows, and each gang's constraint on
its Gang fields; the bad examples are refused naming the field and write nothing."""

from pathlib import Path

import pytest

from scheduler_core.declarations import DeclarationError
from scheduler_core.models import Gang, HyperNode, Member, ResourceFlavor, Topology
from scheduler_core.reads.topology_domains import hypernode_label
from tests.declarations.conftest import apply_text

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).parents[3] / "examples" / "topology"


def apply_example(name: str):
    return apply_text((EXAMPLES / name).read_text())


def constraint(key: str) -> tuple[str, str, str]:
    gang = Gang.objects.get(namespace=key.split("/")[0], name=key.split("/")[1])
    return gang.topology_required, gang.topology_preferred, gang.topology_name


def test_kueue_topology_flavor_and_pod_group():
    result = apply_example("kueue-topology.yaml")

    assert result.lines[:2] == [
        "topology.kueue.x-k8s.io/default created",
        "resourceflavor.kueue.x-k8s.io/tas-flavor created",
    ]
    topology = Topology.objects.get()
    assert (topology.name, topology.source_format) == ("default", "kueue")
    assert topology.levels == [
        "cloud.provider.com/topology-block",
        "cloud.provider.com/topology-rack",
        "kubernetes.io/hostname",
    ]
    assert topology.declaration["spec"]["levels"][0] == {"nodeLabel": "cloud.provider.com/topology-block"}
    assert ResourceFlavor.objects.get().declaration["spec"]["topologyName"] == "default"
    assert constraint("ml/trainer") == ("cloud.provider.com/topology-rack", "", "")
    # Applied again: nothing changes.
    again = apply_example("kueue-topology.yaml")
    assert not again.changed


def test_kai_topology_and_annotated_pod_group():
    apply_example("kai-topology.yaml")

    topology = Topology.objects.get()
    assert (topology.name, topology.source_format) == ("cluster-topology", "kai")
    assert topology.levels[0] == "topology.kubernetes.io/zone"
    assert constraint("research/distributed-training") == (
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/rack",
        "cluster-topology",
    )
    assert Member.objects.filter(gang__name="distributed-training").count() == 3


def test_volcano_hypernodes_and_network_topology():
    result = apply_example("volcano-hypernodes.yaml")

    assert result.lines[:3] == [
        "hypernode.topology.volcano.sh/s0 created",
        "hypernode.topology.volcano.sh/s1 created",
        "hypernode.topology.volcano.sh/s2 created",
    ]
    assert list(HyperNode.objects.values_list("name", "tier")) == [("s0", 1), ("s1", 1), ("s2", 2)]
    assert HyperNode.objects.get(name="s1").members == [
        {"type": "Node", "selector": {"regexMatch": {"pattern": "^node-[23]$"}}}
    ]
    assert constraint("hpc/allreduce") == (hypernode_label(1), "", "")  # hard, highestTierAllowed 1
    assert constraint("hpc/nearby") == ("", hypernode_label(1), "")  # soft: as close as it fits


@pytest.mark.parametrize(
    ("name", "field", "reason"),
    [
        (
            "unknown-level.yaml",
            "documents[1].metadata.annotations.kueue.x-k8s.io/podset-required-topology",
            "unknown level cloud.provider.com/topology-zone: no topology has it",
        ),
        ("hypernode-cycle.yaml", "documents[0].spec.members[0]", "a cycle of HyperNodes: a -> b -> a"),
        ("duplicate-level.yaml", "spec.levels[1].nodeLabel", "listed twice"),
        ("hypernode-wrong-tier.yaml", "documents[1].spec.members[0]", "HyperNode spine is of tier 2"),
    ],
)
def test_bad_examples_are_refused_naming_the_field_and_write_nothing(name, field, reason):
    with pytest.raises(DeclarationError) as refused:
        apply_example(f"bad/{name}")

    assert refused.value.field == field
    assert reason in refused.value.reason
    assert not Topology.objects.exists()
    assert not HyperNode.objects.exists()
    assert not Gang.objects.exists()
    assert not Member.objects.exists()
