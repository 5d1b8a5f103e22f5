"""Node, Namespace and PriorityClass manifests through ``manage.py apply -f``."""

import pytest
from django.core.management.base import CommandError

from scheduler_core.models import Gang, Member, Node, PriorityClass

from .conftest import NODES, manage, write

pytestmark = pytest.mark.django_db


def test_node_manifests_create_nodes(tmp_path):
    out = manage("apply", "-f", write(tmp_path, NODES))
    assert out.split("\n")[:2] == ["node/kwok-a created", "node/kwok-b created"]
    a, b = Node.objects.get(name="kwok-a"), Node.objects.get(name="kwok-b")
    assert a.allocatable == {"cpu": 64000, "memory": 256 * 2**30, "nvidia.com/gpu": 8, "pods": 110}
    assert a.labels == {"gpu-model": "V100M32", "zone": "a"}
    assert a.taints == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    assert not a.unschedulable
    assert b.allocatable == {"cpu": 32000, "memory": 128 * 2**30}  # capacity stands in


def test_reapplying_a_node_updates_labels_taints_cordon_and_capacity(tmp_path):
    manage("apply", "-f", write(tmp_path, NODES))
    assert "node/kwok-a unchanged" in manage("apply", "-f", write(tmp_path, NODES))
    changed = """
apiVersion: v1
kind: Node
metadata: {name: kwok-a, labels: {gpu-model: A100}}
spec: {unschedulable: true}
status: {allocatable: {cpu: "128", memory: 1Ti}}
"""
    assert manage("apply", "-f", write(tmp_path, changed, "b.yaml")).strip() == "node/kwok-a configured"
    a = Node.objects.get(name="kwok-a")
    assert a.unschedulable and a.labels == {"gpu-model": "A100"} and a.taints == []
    assert a.allocatable == {"cpu": 128000, "memory": 2**40}
    uncordon = changed.replace("unschedulable: true", "unschedulable: false")
    manage("apply", "-f", write(tmp_path, uncordon, "c.yaml"))
    assert not Node.objects.get(name="kwok-a").unschedulable


def test_a_node_without_resources_or_with_a_bad_quantity_is_refused(tmp_path):
    with pytest.raises(CommandError, match="status.allocatable"):
        manage("apply", "-f", write(tmp_path, "apiVersion: v1\nkind: Node\nmetadata: {name: x}\n"))
    bad = "apiVersion: v1\nkind: Node\nmetadata: {name: x}\nstatus: {allocatable: {cpu: lots}}\n"
    with pytest.raises(CommandError, match=r"status.allocatable.cpu"):
        manage("apply", "-f", write(tmp_path, bad))
    assert not Node.objects.exists()


def test_an_unknown_kind_is_refused_naming_it_and_nothing_is_created(tmp_path):
    text = NODES + "---\napiVersion: v1\nkind: Secret\nmetadata: {name: cfg}\ndata: {a: b}\n"
    with pytest.raises(CommandError, match="does not read Secret of v1"):
        manage("apply", "-f", write(tmp_path, text))
    # A ConfigMap is read only when it is YuniKorn's yunikorn-configs (docs/queue-manifests.md).
    text = NODES + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n"
    with pytest.raises(CommandError, match=r"metadata.name: gangsched reads only the ConfigMap"):
        manage("apply", "-f", write(tmp_path, text))
    assert not Node.objects.exists()


def test_a_namespace_is_accepted(tmp_path):
    text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n"
    assert manage("apply", "-f", write(tmp_path, text)).strip() == "namespace/team-a created"


POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s, namespace: team-a}
spec:
  schedulerName: gangsched
  %(extra)s
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""


def pod(name: str, extra: str = "") -> str:
    return POD % {"name": name, "extra": extra}


def test_priority_class_names_resolve_through_applied_priority_classes(tmp_path):
    classes = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: gold}
value: 5000
description: paying customers
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 7000
"""
    # In one file, as kubectl applies it in order: the class first, then its users.
    users = [pod("p1", "priorityClassName: gold"), pod("p2", "priorityClassName: high")]
    text = "---".join([classes, *users])
    out = manage("apply", "-f", write(tmp_path, text))
    assert "priorityclass.scheduling.k8s.io/gold created" in out
    assert PriorityClass.objects.get(name="gold").description == "paying customers"
    assert Member.objects.get(name="p1").priority == 5000
    assert Member.objects.get(name="p2").priority == 7000  # the applied class wins over settings
    # The settings table still holds the built-in defaults.
    manage("apply", "-f", write(tmp_path, pod("p3", "priorityClassName: low"), "p3.yaml"))
    assert Member.objects.get(name="p3").priority == -100
    manage("apply", "-f", write(tmp_path, pod("p4", "priority: 3"), "p4.yaml"))
    assert Member.objects.get(name="p4").priority == 3


def test_a_global_default_class_gives_its_value_to_pods_naming_none(tmp_path):
    manage("apply", "-f", write(tmp_path, pod("before")))
    default = (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: base}\n"
        "value: 10\nglobalDefault: true\n"
    )
    manage("apply", "-f", write(tmp_path, default, "d.yaml"))
    manage("apply", "-f", write(tmp_path, pod("after"), "a.yaml"))
    assert Member.objects.get(name="before").priority == 0
    assert Member.objects.get(name="after").priority == 10
    second = default.replace("base", "other")
    with pytest.raises(CommandError, match="'base' is already the global default"):
        manage("apply", "-f", write(tmp_path, second, "e.yaml"))


def test_an_unknown_priority_class_is_an_error_naming_it(tmp_path):
    job = """
apiVersion: gangsched.io/v1
kind: GangJob
metadata: {name: j, namespace: team-a}
spec:
  priorityClassName: platinum
  tasks: [{name: w, replicas: 2, template: {spec: {containers: [{name: c, image: x}]}}}]
"""
    with pytest.raises(CommandError, match="spec.priorityClassName: unknown priority class 'platinum'"):
        manage("apply", "-f", write(tmp_path, job))
    assert not Gang.objects.exists()
    gold = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: platinum}\nvalue: 900\n"
    manage("apply", "-f", write(tmp_path, gold, "pc.yaml"))
    manage("apply", "-f", write(tmp_path, job))
    assert Gang.objects.get(name="j").priority == 900
    assert set(Member.objects.values_list("priority", flat=True)) == {900}
