"""Kueue plain pod groups: label + total-count annotation, queue label; through apply and the API."""

import json

import pytest
from django.contrib.auth.models import User

from scheduler_core.declarations import manifests_apply
from scheduler_core.models import Gang, Member
from tests.api.conftest import _own_cache_prefix, client_for  # noqa: F401 (an autouse fixture)

from .conftest import EXAMPLES
from .test_formats import pod
from .test_volcano import run

pytestmark = pytest.mark.django_db

NAME, COUNT, QUEUE = (
    "kueue.x-k8s.io/pod-group-name",
    "kueue.x-k8s.io/pod-group-total-count",
    "kueue.x-k8s.io/queue-name",
)


def check_etl():
    gang = Gang.objects.get(namespace="team-a", name="etl")
    assert (gang.min_member, gang.total_number, gang.queue, gang.source_format, gang.provisional) == (
        3,
        3,
        "team-a-queue",
        "kueue",
        False,
    )
    assert gang.members.count() == 3 and gang.wait_seconds is None


def test_the_example_loads_through_manage_py_apply():
    run("apply", "-f", str(EXAMPLES / "kueue-pod-group.yaml"))
    check_etl()
    assert [row["source"] for row in json.loads(run("get", "gangs", "-A", "-o", "json"))] == ["kueue"]


def test_the_example_loads_through_the_api():
    client = client_for(User.objects.create_user("alice", password="alice-pass-123"))
    text = (EXAMPLES / "kueue-pod-group.yaml").read_text()
    response = client.post("/api/v1/manifests/", text, content_type="application/yaml")
    assert response.status_code == 201, response.content
    check_etl()


def test_the_total_count_is_required_and_pods_must_agree_on_it():
    with pytest.raises(ValueError, match="needs kueue.x-k8s.io/pod-group-total-count"):
        manifests_apply([pod("a", labels={NAME: "g"})])
    with pytest.raises(ValueError, match="declares gang ns/g differently"):
        manifests_apply(
            [
                pod("a", labels={NAME: "g"}, annotations={COUNT: "2"}),
                pod("b", labels={NAME: "g"}, annotations={COUNT: "3"}),
            ]
        )
    with pytest.raises(ValueError, match="expects 2 members in all"):
        manifests_apply([pod(f"p{i}", labels={NAME: "g"}, annotations={COUNT: "2"}) for i in range(3)])
    assert not Member.objects.exists()


def test_a_volcano_annotation_and_a_kueue_label_naming_one_gang_agree_on_the_queue():
    annotations = {COUNT: "1", "scheduling.k8s.io/group-name": "g", "scheduling.volcano.sh/queue-name": "q1"}
    with pytest.raises(ValueError, match="asks for queue 'q2'"):
        manifests_apply([pod("a", labels={NAME: "g", QUEUE: "q2"}, annotations=annotations)])
    manifests_apply([pod("a", labels={NAME: "g", QUEUE: "q1"}, annotations=annotations)])
    gang = Gang.objects.get(name="g")
    # Volcano's reader comes first, Kueue's declares the gang: one gang, Kueue's count, one queue.
    assert (gang.min_member, gang.queue, gang.source_format) == (1, "q1", "kueue")
