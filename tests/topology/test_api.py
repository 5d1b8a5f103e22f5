"""The topology endpoints and the gang API's topology fields: everyone reads the
topologies with their domains; only operators apply Topology or HyperNode manifests (a
submitter gets the queues' refusal) or delete one; a gang job's constraint is validated with
the field named and shown on the gang."""

from pathlib import Path

import pytest

from scheduler_core.models import Gang, HyperNode, Member, Node, ResourceFlavor, Topology
from scheduler_core.reads.topology_domains import HYPERNODE_TOPOLOGY, hypernode_label
from tests.api.conftest import errors, job
from tests.declarations.conftest import apply_text

pytestmark = pytest.mark.django_db
EXAMPLES = Path(__file__).parents[2] / "examples" / "topology"
MANIFESTS = "/api/v1/manifests/"
GPU = "nvidia.com/gpu"


@pytest.fixture
def racks():
    """Two racks of two 8-GPU nodes in one block; one node in no rack; 3 GPUs used on r1-a."""
    Topology.objects.create(name="tas", levels=["block", "rack"], source_format="kueue")
    for name, labels in [
        ("r1-a", {"block": "b1", "rack": "r1"}),
        ("r1-b", {"block": "b1", "rack": "r1"}),
        ("r2-a", {"block": "b1", "rack": "r2"}),
        ("loose", {}),
    ]:
        Node.objects.create(name=name, labels=labels, allocatable={GPU: 8, "cpu": 32000})
    gang = Gang.objects.create(namespace="ml", name="g", min_member=1, phase="Running")
    Member.objects.create(
        namespace="ml", name="g-0", gang=gang, node="r1-a", phase="Running", requests={GPU: 3}
    )


def test_everyone_reads_topologies_with_their_domains(as_alice, racks):
    response = as_alice.get("/api/v1/topologies/")

    assert response.status_code == 200
    (tas,) = response.json()
    assert (tas["name"], tas["levels"], tas["sourceFormat"]) == ("tas", ["block", "rack"], "kueue")
    assert tas["domains"]["rack"] == {
        "domains": {
            "r1": {"nodes": 2, "allocatable": {GPU: 16, "cpu": 64000}, "free": {GPU: 13, "cpu": 64000}},
            "r2": {"nodes": 1, "allocatable": {GPU: 8, "cpu": 32000}, "free": {GPU: 8, "cpu": 32000}},
        },
        "outside": 1,
    }
    assert tas["domains"]["block"]["domains"]["b1"]["free"][GPU] == 21
    assert as_alice.get("/api/v1/topologies/tas/").json()["name"] == "tas"
    assert as_alice.get("/api/v1/topologies/nope/").status_code == 404


def test_hypernodes_are_listed_as_one_topology(as_alice):
    for index in range(4):
        Node.objects.create(name=f"node-{index}", allocatable={"cpu": 8000})
    apply_text((EXAMPLES / "volcano-hypernodes.yaml").read_text())

    (volcano,) = as_alice.get("/api/v1/topologies/").json()

    assert volcano["name"] == HYPERNODE_TOPOLOGY
    assert volcano["levels"] == [hypernode_label(2), hypernode_label(1)]
    assert volcano["domains"][hypernode_label(1)]["domains"]["s1"]["nodes"] == 2
    assert volcano["declaration"] == {"hypernodes": ["s0", "s1", "s2"]}


@pytest.mark.parametrize("name", ["kueue-topology.yaml", "kai-topology.yaml", "volcano-hypernodes.yaml"])
def test_a_submitter_may_not_apply_topology_manifests(as_alice, as_vera, name):
    for client in (as_alice, as_vera):
        response = client.post(MANIFESTS, (EXAMPLES / name).read_text(), content_type="application/yaml")
        assert response.status_code == 403
        assert "only operators may apply" in str(response.json())
    assert not Topology.objects.exists() and not HyperNode.objects.exists() and not Gang.objects.exists()


def test_an_operator_applies_them_and_a_bad_one_is_refused_naming_the_field(as_olga):
    response = as_olga.post(
        MANIFESTS, (EXAMPLES / "kueue-topology.yaml").read_text(), content_type="application/yaml"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["lines"][0] == "topology.kueue.x-k8s.io/default created"

    response = as_olga.post(
        MANIFESTS, (EXAMPLES / "bad" / "hypernode-cycle.yaml").read_text(), content_type="application/yaml"
    )
    assert response.status_code == 400
    assert errors(response) == [("documents[0].spec.members[0]", "a cycle of HyperNodes: a -> b -> a")]
    assert not HyperNode.objects.exists()


def test_only_operators_delete_and_not_while_a_flavor_names_it(as_alice, as_olga, racks):
    assert as_alice.delete("/api/v1/topologies/tas/").status_code == 403
    ResourceFlavor.objects.create(
        name="f", node_labels={"a": "b"}, declaration={"spec": {"topologyName": "tas"}}
    )
    response = as_olga.delete("/api/v1/topologies/tas/")
    assert response.status_code == 409
    assert errors(response) == [(None, "topology tas is the topologyName of ResourceFlavor f")]
    ResourceFlavor.objects.all().delete()
    assert as_olga.delete("/api/v1/topologies/tas/").status_code == 204
    assert not Topology.objects.exists()
    assert as_olga.delete("/api/v1/topologies/tas/").status_code == 404


def test_a_topology_active_gangs_use_is_not_deleted(as_olga, racks):
    Gang.objects.filter(name="g").update(topology_required="rack")
    response = as_olga.delete("/api/v1/topologies/tas/")
    assert response.status_code == 409
    assert "used by active gangs (ml/g)" in errors(response)[0][1]


def test_a_gang_job_with_a_constraint(as_alice, racks):
    response = as_alice.post(
        "/api/v1/gangs/",
        job(topologyRequired="block", topologyPreferred="rack", topologyName="tas"),
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["topologyRequired"], body["topologyPreferred"], body["topologyName"]) == (
        "block",
        "rack",
        "tas",
    )
    gang = Gang.objects.get(name="train")
    assert (gang.topology_required, gang.topology_preferred, gang.topology_name) == ("block", "rack", "tas")
    assert as_alice.get("/api/v1/gangs/ml/train/").json()["topologyPreferred"] == "rack"
    listed = as_alice.get("/api/v1/gangs/").json()["results"]
    assert {row["name"]: row["topologyRequired"] for row in listed}["train"] == "block"


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        ({"topologyRequired": "zone"}, "topologyRequired", "unknown level zone: no topology has it"),
        ({"topologyPreferred": "zone"}, "topologyPreferred", "unknown level zone"),
        ({"topologyRequired": "rack", "topologyName": "other"}, "topologyName", "topology other not found"),
        ({"topologyRequired": "rack", "topologyPreferred": "block"}, "topologyPreferred", "wider than"),
        ({"topologyRequired": "no such/key/x"}, "topologyRequired", "not a node-label key"),
        ({"topologyName": "tas"}, "topologyName", "names a topology but no level"),
    ],
)
def test_a_bad_constraint_is_refused_naming_the_field(as_alice, racks, fields, field, reason):
    response = as_alice.post("/api/v1/gangs/", job(**fields), format="json")

    assert response.status_code == 400
    ((got_field, got_reason),) = errors(response)
    assert got_field == field and reason in got_reason
    assert not Gang.objects.filter(name="train").exists()
