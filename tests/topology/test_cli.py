"""``manage.py get topologies``, ``describe topology`` and ``delete -f`` of topology manifests,
as kubectl would print them."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from scheduler_core.models import Gang, HyperNode, Node, ResourceFlavor, Topology

pytestmark = pytest.mark.django_db
EXAMPLES = Path(__file__).parents[2] / "examples" / "topology"
GPU = "nvidia.com/gpu"


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def applied():
    for index in range(4):
        Node.objects.create(
            name=f"node-{index}",
            labels={"cloud.provider.com/topology-rack": f"r{index // 2}"},
            allocatable={GPU: 8},
        )
    run("apply", "-f", str(EXAMPLES / "kueue-topology.yaml"))
    run("apply", "-f", str(EXAMPLES / "volcano-hypernodes.yaml"))


def test_get_topologies(applied):
    lines = run("get", "topologies").splitlines()

    assert lines[0].split() == ["NAME", "LEVELS", "SOURCE-FORMAT", "DOMAINS"]
    assert lines[1].split() == [
        "default",
        "cloud.provider.com/topology-block",
        ">",
        "cloud.provider.com/topology-rack",
        ">",
        "kubernetes.io/hostname",
        "kueue",
        "0/2/4",  # every node has its hostname (its name, where the label is missing)
    ]
    assert lines[2].split()[0] == "volcano-hypernodes"
    assert lines[2].split()[-1] == "1/2"
    rows = json.loads(run("get", "topo", "-o", "json"))
    assert [row["name"] for row in rows] == ["default", "volcano-hypernodes"]


def test_describe_topology(applied):
    text = run("describe", "topology", "default")

    assert "Levels:         cloud.provider.com/topology-block > cloud.provider.com/topology-rack" in text
    assert "  cloud.provider.com/topology-rack: 2 domains, 0 nodes in none" in text
    assert "    r0: 2 nodes; nvidia.com/gpu 16/16" in text
    detail = json.loads(run("describe", "topologies", "volcano-hypernodes", "-o", "json"))
    assert detail["domains"]["topology.gangsched.io/volcano-hypernode-tier-2"]["domains"]["s2"]["nodes"] == 4
    with pytest.raises(CommandError, match="topology nope not found"):
        run("describe", "topology", "nope")


def test_delete_f_removes_the_gangs_then_the_topology(applied):
    out = run("delete", "-f", str(EXAMPLES / "volcano-hypernodes.yaml"))

    assert 'hypernode.topology.volcano.sh "s2" deleted' in out
    assert not HyperNode.objects.exists()
    run("delete", "-f", str(EXAMPLES / "kueue-topology.yaml"))
    assert not Topology.objects.exists()


def test_delete_f_keeps_a_topology_a_flavor_or_active_gangs_use(applied, tmp_path):
    Gang.objects.create(
        namespace="ml", name="busy", min_member=1, topology_required="cloud.provider.com/topology-rack"
    )
    topology_only = (EXAMPLES / "kueue-topology.yaml").read_text().split("---")[0]
    path = tmp_path / "topology-only.yaml"
    path.write_text(topology_only)
    with pytest.raises(
        CommandError, match="topology default is the topologyName of ResourceFlavor tas-flavor"
    ):
        run("delete", "-f", str(path))
    ResourceFlavor.objects.all().delete()
    with pytest.raises(CommandError, match=r"used by active gangs \(ml/"):
        run("delete", "-f", str(path))
    assert Topology.objects.filter(name="default").exists()
