"""Cluster specs, presets and the Alibaba node list (the sample in traces/)."""

import pytest

from scheduler_core.simulation import ClusterSpecError, load_cluster
from scheduler_core.simulation.trace_files import REPOSITORY_TRACES

ALIBABA = REPOSITORY_TRACES / "alibaba-openb-gpu-nodes-sample.csv"


def test_a_spec_with_several_groups():
    cluster = load_cluster("2x{cpu=64,memory=512Gi,nvidia.com/gpu=8} + 1x{cpu=500m,memory=1G}")
    assert len(cluster.nodes) == 3
    assert cluster.nodes[0].allocatable == {"cpu": 64_000, "memory": 512 * 2**30, "nvidia.com/gpu": 8}
    assert cluster.nodes[2].allocatable == {"cpu": 500, "memory": 10**9}
    assert len({node.name for node in cluster.nodes}) == 3
    assert cluster.capacity()["nvidia.com/gpu"] == 16


def test_the_n32g4_preset_is_the_tiresias_cluster():
    cluster = load_cluster("n32g4")
    assert len(cluster.nodes) == 32
    assert cluster.capacity() == {"cpu": 32 * 40_000, "memory": 32 * 256 * 2**30, "nvidia.com/gpu": 128}


def test_the_alibaba_node_list_labels_nodes_with_their_gpu_model():
    cluster = load_cluster(str(ALIBABA))
    assert len(cluster.nodes) == 122
    assert {node.labels["gpu-model"] for node in cluster.nodes} == {
        "G2",
        "G3",
        "P100",
        "T4",
        "V100M16",
        "V100M32",
    }
    first = cluster.nodes[0]
    assert first.name == "openb-node-0000"
    assert first.allocatable == {"cpu": 64_000, "memory": 262144 * 2**20, "nvidia.com/gpu": 2}
    assert first.labels == {
        "gpu-model": "P100",
        "kubernetes.io/hostname": "openb-node-0000",
        "topology.gangsched.io/rack": "rack-0000",
        "topology.gangsched.io/block": "block-000",
    }


def test_nodes_get_racks_of_eight_and_blocks_of_four_racks_in_list_order():
    # The rule of scheduler_core/simulation/rack_labels.py, on a spec of two groups
    # (racks continue across them).
    cluster = load_cluster("30x{cpu=1} + 10x{cpu=2}")
    rack = [node.labels["topology.gangsched.io/rack"] for node in cluster.nodes]
    block = [node.labels["topology.gangsched.io/block"] for node in cluster.nodes]
    assert rack[:8] == ["rack-0000"] * 8 and rack[8] == "rack-0001"
    assert rack[39] == "rack-0004" and rack.count("rack-0004") == 8
    assert block[31] == "block-000" and block[32] == "block-001"
    assert all(node.labels["kubernetes.io/hostname"] == node.name for node in cluster.nodes)
    alibaba = load_cluster(str(ALIBABA))
    assert len({node.labels["topology.gangsched.io/rack"] for node in alibaba.nodes}) == 16  # 122 / 8
    assert len({node.labels["topology.gangsched.io/block"] for node in alibaba.nodes}) == 4


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("", "the cluster spec is empty"),
        ("10{cpu=1}", "group 1 '10{cpu=1}' is not COUNTx{resource=amount,...}"),
        ("0x{cpu=1}", "group 1: the node count must be at least 1"),
        ("1x{cpu=1}+2x{cpu}", "group 2: 'cpu' is not resource=amount"),
        ("1x{cpu=lots}", "group 1: "),
        ("1x{cpu=1,cpu=2}", "group 1: cpu is given twice"),
        ("1x{nvidia.com/gpu=0.5}", "extended resources must be whole numbers"),
        ("1x{}", "group 1: no resources given"),
        ("/nowhere/nodes.csv", "cannot read the node list"),
        ("200000x{cpu=1}", "more than 100,000 nodes"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec, reason):
    with pytest.raises(ClusterSpecError) as caught:
        load_cluster(spec)
    assert reason in str(caught.value)


def test_a_node_csv_with_another_header_is_refused(tmp_path):
    path = tmp_path / "nodes.csv"
    path.write_text("name,cpu\nn1,4\n")
    with pytest.raises(
        ClusterSpecError, match="line 1: expected the header sn,cpu_milli,memory_mib,gpu,model"
    ):
        load_cluster(str(path))
    path.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,4000,x,1,T4\n")
    with pytest.raises(ClusterSpecError, match="line 2: cpu_milli, memory_mib and gpu must be whole numbers"):
        load_cluster(str(path))
