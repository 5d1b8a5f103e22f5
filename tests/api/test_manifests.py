"""POST /api/v1/manifests/: the reference manifests load through the API as YAML or JSON and produce
the expected gangs; bad manifests are 400 with the field, oversized ones 413; nothing half-made."""

import json

import pytest
import yaml

from scheduler_core.models import Gang, GangGroup, Member
from tests.reference import REFERENCE

from .conftest import errors

URL = "/api/v1/manifests/"

# manifest -> (gang key, minMember, pods of that gang) for every gang it produces
EXPECTED = {
    "scheduler-plugins-podgroup.yaml": [("team-a/trainer", 4, 4)],
    "koordinator-gang-group.yaml": [("ns-a/gang-ps", 2, 2), ("ns-b/gang-worker", 2, 2)],
    "legacy-label.yaml": [("data/etl", 3, 3)],
    "minavailable-job.yaml": [("hpc/mpi-allreduce", 3, 4)],
    "yunikorn-spark.yaml": [
        ("spark/spark-pi-0001-spark-driver", 1, 1),
        ("spark/spark-pi-0001-spark-executor", 3, 3),  # 1 executor + 2 YuniKorn placeholders
    ],
}


def test_every_reference_manifest_is_covered():
    assert sorted(p.name for p in REFERENCE.glob("*.yaml")) == sorted(EXPECTED)


def gangs_in_db() -> list[tuple]:
    return sorted((g.key, g.min_member, g.members.count()) for g in Gang.objects.all())


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("content_type", ["application/yaml", "text/yaml"])
def test_a_reference_manifest_as_yaml_produces_its_gangs(as_alice, name, content_type):
    response = as_alice.post(URL, (REFERENCE / name).read_text(), content_type=content_type)

    assert response.status_code == 201, response.content
    body = response.json()
    assert sorted(g["key"] for g in body["gangs"]) == [key for key, _, _ in EXPECTED[name]]
    assert {g["submitter"] for g in body["gangs"]} == {"alice"}
    assert body["lines"] and all(line.endswith(" created") for line in body["lines"])
    assert body["pods"] == sum(pods for _, _, pods in EXPECTED[name])
    assert gangs_in_db() == sorted(EXPECTED[name])
    # The submitter sees what they applied.
    listed = as_alice.get("/api/v1/gangs/").json()["results"]
    assert sorted(g["key"] for g in listed) == [key for key, _, _ in EXPECTED[name]]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_reference_manifest_as_json_produces_the_same_gangs(as_alice, name):
    documents = [doc for doc in yaml.safe_load_all((REFERENCE / name).read_text()) if doc]
    text = "\n".join(json.dumps(doc) for doc in documents)  # a JSON stream, as kubectl -o json prints
    response = as_alice.post(URL, text, content_type="application/json")
    assert response.status_code == 201, response.content
    assert gangs_in_db() == sorted(EXPECTED[name])


def test_the_gang_group_of_the_koordinator_manifest_is_created(as_alice):
    as_alice.post(
        URL, (REFERENCE / "koordinator-gang-group.yaml").read_text(), content_type="application/yaml"
    )
    assert GangGroup.objects.get().members == ["ns-a/gang-ps", "ns-b/gang-worker"]
    progress = as_alice.get("/api/v1/gangs/ns-a/gang-ps/").json()["groupProgress"]
    assert [p["gang"] for p in progress] == ["ns-a/gang-ps", "ns-b/gang-worker"]


def test_all_reference_manifests_in_one_body(as_alice):
    text = "\n---\n".join((REFERENCE / name).read_text() for name in sorted(EXPECTED))
    response = as_alice.post(URL, text, content_type="application/yaml")
    assert response.status_code == 201, response.content
    assert gangs_in_db() == sorted(gang for gangs in EXPECTED.values() for gang in gangs)


BAD_PODGROUP = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: good, namespace: team-a}
spec: {minMember: 1}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: bad, namespace: team-a}
spec: {minMember: 0}
"""


def test_a_refused_document_names_its_field_and_nothing_of_the_others_remains(as_alice):
    response = as_alice.post(URL, BAD_PODGROUP, content_type="application/yaml")
    assert response.status_code == 400
    [(field, reason)] = errors(response)
    assert field.endswith("spec.minMember") and "out of range" in reason
    assert not Gang.objects.exists() and not Member.objects.exists()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("kind: [unclosed", "not valid YAML"),
        ('{"apiVersion": "v1", "kind": "Pod", "x": NaN}', "not valid JSON"),
        ("   ", "empty"),
    ],
)
def test_text_that_is_not_a_manifest_is_a_400_on_the_body(as_alice, text, words):
    response = as_alice.post(URL, text, content_type="application/yaml")
    assert response.status_code == 400
    [(field, reason)] = errors(response)
    assert field == "body" and words in reason


def test_quantity_traps_in_a_manifest_are_refused(as_alice):
    # Unquoted 1_000 is the YAML 1.1 integer 1000 (as go-yaml reads it too); quoted it is a quantity.
    for value in ("NaN", ".inf", '"1_000"', "1e999999999", "-1"):
        text = (
            "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
            f"metadata: {{name: pg, namespace: ns}}\nspec: {{minMember: 1, minResources: {{cpu: {value}}}}}\n"
        )
        response = as_alice.post(URL, text, content_type="application/yaml")
        assert response.status_code == 400, (value, response.content)
        assert errors(response)[0][0] == "spec.minResources.cpu"
    assert not Gang.objects.exists()


def test_a_manifest_over_the_size_limit_is_413_on_the_body(as_alice, settings):
    settings.GANGSCHED_MAX_MANIFEST_BYTES = 100
    text = (REFERENCE / "scheduler-plugins-podgroup.yaml").read_text()
    response = as_alice.post(URL, text, content_type="application/yaml")
    assert response.status_code == 413
    [(field, reason)] = errors(response)
    assert field == "body" and "over the limit of 100 bytes" in reason
    assert not Gang.objects.exists()


def test_other_media_types_are_415(as_alice):
    response = as_alice.post(URL, "kind: Pod", content_type="text/plain")
    assert response.status_code == 415
    assert errors(response)[0][0] is None


def test_manifests_count_against_the_submission_throttle(as_alice, settings):
    settings.GANGSCHED_SUBMIT_RATE = "1/min"
    text = (REFERENCE / "legacy-label.yaml").read_text()
    assert as_alice.post(URL, text, content_type="application/yaml").status_code == 201
    assert as_alice.post(URL, text, content_type="application/yaml").status_code == 429
