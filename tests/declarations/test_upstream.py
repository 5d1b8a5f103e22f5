"""Upstream Kubernetes: Workload v1alpha1 (podGroups, workloadRef with replica keys) and
v1alpha2 (podGroupTemplates, runtime PodGroup, schedulingGroup); pods waiting for their group."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from scheduler_core.declarations import manifests_apply
from scheduler_core.declarations.provisional import provisional_gangs_promote
from scheduler_core.models import Gang, Member
from scheduler_core.snapshot.build import build_snapshot
from tests.api.conftest import _own_cache_prefix, client_for  # noqa: F401 (an autouse fixture)

from .conftest import EXAMPLES, apply_text
from .test_volcano import run

pytestmark = pytest.mark.django_db


def upstream_pod(name, **spec):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
            **spec,
        },
    }


def check_sweep():
    assert sorted((g.name, g.min_member, g.mode, g.members.count()) for g in Gang.objects.all()) == [
        ("sweep-report", 1, "NonStrict", 1),  # basic: pod by pod
        ("sweep-trial", 2, "Strict", 0),
        ("sweep-trial-a", 2, "Strict", 2),
        ("sweep-trial-b", 2, "Strict", 2),
    ]
    assert {g.source_format for g in Gang.objects.all()} == {"workload-v1alpha1"}
    assert Gang.objects.get(name="sweep-trial-a").declaration["replicaOf"] == "ml/sweep-trial"


def test_v1alpha1_replica_keys_split_a_pod_group_into_gangs_through_manage_py_apply():
    out = run("apply", "-f", str(EXAMPLES / "workload-v1alpha1.yaml"))
    assert "workload.scheduling.k8s.io/sweep created" in out
    check_sweep()
    rows = json.loads(run("get", "gangs", "-A", "-o", "json"))
    assert {row["source"] for row in rows} == {"workload-v1alpha1"}


def test_v1alpha1_through_the_api():
    client = client_for(User.objects.create_user("alice", password="alice-pass-123"))
    text = (EXAMPLES / "workload-v1alpha1.yaml").read_text()
    response = client.post("/api/v1/manifests/", text, content_type="application/yaml")
    assert response.status_code == 201, response.content
    check_sweep()


def test_v1alpha1_pods_before_their_workload_wait_then_join_their_replica_gangs():
    ref = {"name": "sweep", "podGroup": "trial", "podGroupReplicaKey": "a"}
    manifests_apply([upstream_pod("early-0", workloadRef=ref), upstream_pod("early-1", workloadRef=ref)])
    gang = Gang.objects.get(name="sweep-trial-a")
    assert gang.provisional and gang.provisional_until is None
    assert gang.message == "waiting for Workload ml/sweep (scheduling.k8s.io/v1alpha1) to be created"
    assert provisional_gangs_promote(timezone.now() + timedelta(days=30)) == 0  # upstream waits
    apply_text((EXAMPLES / "workload-v1alpha1.yaml").read_text().split("---")[0])
    gang.refresh_from_db()
    assert not gang.provisional and gang.min_member == 2 and gang.message == ""
    # A replica key arriving after its Workload takes the pod group's policy at once.
    manifests_apply([upstream_pod("late-0", workloadRef=ref | {"podGroupReplicaKey": "c"})])
    late = Gang.objects.get(name="sweep-trial-c")
    assert not late.provisional and late.min_member == 2 and late.members.count() == 1


def check_pretrain():
    gang = Gang.objects.get(name="pretrain-workers")
    assert (gang.min_member, gang.source_format, gang.provisional, gang.members.count()) == (
        4,
        "podgroup-v1alpha2",
        False,
        4,
    )
    assert Gang.objects.count() == 1  # the Workload's templates are not gangs


def test_v1alpha2_podgroup_and_scheduling_group_through_manage_py_apply_and_the_api():
    out = run("apply", "-f", str(EXAMPLES / "podgroup-v1alpha2.yaml"))
    assert "podgroup.scheduling.k8s.io/pretrain-workers created" in out
    check_pretrain()
    Gang.objects.all().delete()
    client = client_for(User.objects.create_user("alice", password="alice-pass-123"))
    text = (EXAMPLES / "podgroup-v1alpha2.yaml").read_text()
    response = client.post("/api/v1/manifests/", text, content_type="application/yaml")
    assert response.status_code == 201, response.content
    check_pretrain()


def test_a_pod_naming_a_missing_podgroup_is_not_scheduled_and_says_why():
    manifests_apply([upstream_pod("orphan", schedulingGroup={"podGroupName": "nowhere"})])
    gang = Gang.objects.get(name="nowhere")
    assert gang.provisional and gang.provisional_until is None
    assert build_snapshot().gangs == ()  # the engine does not see it: its pod is held
    text = run("describe", "gang", "ml/nowhere")
    assert (
        "WaitingForMembers: waiting for PodGroup ml/nowhere (scheduling.k8s.io/v1alpha2) to be created"
        in text
    )
    assert provisional_gangs_promote(timezone.now() + timedelta(days=30)) == 0
    apply_text(
        "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: nowhere, namespace: ml}\n"
        "spec: {schedulingPolicy: {gang: {minCount: 1}}}\n"
    )
    gang.refresh_from_db()
    assert (
        not gang.provisional
        and gang.message == ""
        and [g.key for g in build_snapshot().gangs] == ["ml/nowhere"]
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "kind: PodGroup\nmetadata: {name: x}\nspec: {schedulingPolicy: {}}",
            "exactly one of gang and basic",
        ),
        (
            "kind: PodGroup\nmetadata: {name: x}\nspec: {schedulingPolicy: {gang: {minCount: 0}}}",
            "out of range",
        ),
        ("kind: Workload\nmetadata: {name: x}\nspec: {podGroups: []}", "at least one pod group"),
    ],
)
def test_upstream_values_are_checked(text, words):
    version = "v1alpha2" if "PodGroup" in text else "v1alpha1"
    with pytest.raises(ValueError, match=words):
        apply_text(f"apiVersion: scheduling.k8s.io/{version}\n{text}\n")


def test_a_spec_reference_and_a_label_naming_different_gangs_are_an_error():
    pod = upstream_pod("two", schedulingGroup={"podGroupName": "a"})
    pod["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": "b"}
    with pytest.raises(ValueError, match="names gang ml/b but spec.schedulingGroup names gang ml/a"):
        manifests_apply([pod])
    assert not Member.objects.exists()
