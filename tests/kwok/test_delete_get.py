"""``manage.py delete`` and ``manage.py get pods|nodes``, with real scheduling cycles."""

import pytest
from django.core.management.base import CommandError

from scheduler_core.models import Gang, Member, Node
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.kubelet import kubelet_tick

from .conftest import manage, manage_json, write

pytestmark = pytest.mark.django_db

NODES = """
apiVersion: v1
kind: List
items:
%s
"""
NODE = """
- apiVersion: v1
  kind: Node
  metadata: {name: %s, labels: {zone: a}}
  status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
"""

GANG = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train, namespace: team-a}
spec: {minMember: %(min)d}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: team-a}
spec:
  parallelism: %(pods)d
  template:
    metadata: {labels: {scheduling.x-k8s.io/pod-group: train}}
    spec:
      schedulerName: gangsched
      containers: [{name: c, image: x, resources: {requests: {cpu: "2", memory: 1Gi}}}]
"""


def nodes_yaml(*names: str) -> str:
    return NODES % "".join(NODE % name for name in names)


def running(tmp_path, nodes=("n1", "n2"), pods=4, min_member=4) -> Gang:
    manage("apply", "-f", write(tmp_path, nodes_yaml(*nodes), "nodes.yaml"))
    manage("apply", "-f", write(tmp_path, GANG % {"min": min_member, "pods": pods}, "gang.yaml"))
    cycle_run(holder="test")
    kubelet_tick()
    gang = Gang.objects.get(name="train")
    assert gang.phase == "Running", gang.message
    return gang


def test_get_pods_and_nodes_as_json(tmp_path):
    running(tmp_path)
    pods = manage_json("get", "pods", "-n", "team-a")
    assert [p["name"] for p in pods] == [f"train-{i}" for i in range(4)]
    assert {p["gang"] for p in pods} == {"train"}
    assert {p["phase"] for p in pods} == {"Running"}
    assert {p["node"] for p in pods} == {"n1", "n2"}
    assert set(pods[0]) >= {"namespace", "name", "gang", "phase", "node"}
    assert manage_json("get", "pods", "-n", "other") == []
    nodes = manage_json("get", "nodes")
    assert [n["name"] for n in nodes] == ["n1", "n2"]
    assert nodes[0]["allocatable"] == {"cpu": "4", "memory": "16Gi", "pods": "110"}
    assert nodes[0]["used"] == {"cpu": "4", "memory": "2Gi", "pods": 2} | {"pods": "2"}
    assert nodes[0]["pods"] == 2 and nodes[0]["unschedulable"] is False
    table = manage("get", "nodes")
    assert table.split("\n")[0].split() == ["NAME", "STATUS", "PODS", "CPU", "MEMORY", "GPU"]
    assert "4/4" in table
    assert "train-0" in manage("get", "pods", "-A", "-o", "wide")


def test_deleting_a_pod_frees_its_node_and_its_gang_replaces_it(tmp_path):
    gang = running(tmp_path, nodes=("n1", "n2", "n3"), pods=4, min_member=3)
    node = Member.objects.get(name="train-1").node
    out = manage("delete", "pod", "team-a/train-1")
    assert out.strip() == 'pod "train-1" deleted from team-a namespace (replaced)'
    pod = Member.objects.get(name="train-1")
    assert pod.phase == "Pending" and pod.node is None  # recreated by the gang's policy
    assert next(n for n in manage_json("get", "nodes") if n["name"] == node)["pods"] == 1
    assert Member.objects.filter(gang=gang, phase="Running").count() == 3
    cycle_run(holder="test")
    assert Member.objects.get(name="train-1").node is not None  # placed again


def test_deleting_a_pod_below_min_member_restarts_the_whole_gang(tmp_path):
    running(tmp_path)
    out = manage("delete", "pod", "train-0", "-n", "team-a")
    assert "(gang restarted)" in out
    assert set(Member.objects.values_list("phase", "node")) == {("Pending", None)}
    assert all(n["pods"] == 0 for n in manage_json("get", "nodes"))


def test_deleting_a_node_fails_its_pods_and_their_gang_reschedules_them(tmp_path):
    gang = running(tmp_path, nodes=("n1", "n2", "n3"))
    assert manage("delete", "node", "n1").strip() == 'node "n1" deleted (2 pods failed)'
    assert not Node.objects.filter(name="n1").exists()
    assert not Member.objects.filter(node="n1").exists()
    gang.refresh_from_db()
    assert gang.phase == "Pending"  # 2 of 4 left, below minMember: the gang is requeued whole
    cycle_run(holder="test")
    assert Member.objects.filter(gang=gang, node__in=["n2", "n3"]).count() == 4


def test_deleting_a_gang_deletes_its_pods(tmp_path):
    running(tmp_path)
    out = manage("delete", "gang", "team-a/train").strip().split("\n")
    assert out[0] == 'gang "train" deleted from team-a namespace (4 pods)'
    assert len(out) == 5
    assert not Gang.objects.exists() and not Member.objects.exists()
    assert all(n["used"] == {"pods": "0"} for n in manage_json("get", "nodes"))


def test_delete_f_deletes_the_objects_of_a_manifest(tmp_path):
    running(tmp_path)
    out = manage("delete", "-f", str(tmp_path / "gang.yaml"))
    assert 'podgroup.scheduling.x-k8s.io "train" deleted from team-a namespace (4 pods)' in out
    assert not Gang.objects.exists() and not Member.objects.exists()
    out = manage("delete", "-f", str(tmp_path / "nodes.yaml"))
    assert out.split("\n")[:2] == ['node "n1" deleted', 'node "n2" deleted']
    assert not Node.objects.exists()


def test_deleting_what_does_not_exist_is_an_error_unless_ignored(tmp_path):
    with pytest.raises(CommandError, match='pod "nope" not found in namespace default'):
        manage("delete", "pod", "nope")
    with pytest.raises(CommandError, match='node "nope" not found'):
        manage("delete", "node", "nope")
    manage("delete", "gang", "x/nope", "--ignore-not-found")
