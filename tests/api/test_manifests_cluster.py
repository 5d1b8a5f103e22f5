"""Node, PriorityClass and Kueue WorkloadPriorityClass manifests through the API: operators only
(a class reorders everyone's gangs)."""

import pytest

from scheduler_core.models import Node, PriorityClass, WorkloadPriorityClass

URL = "/api/v1/manifests/"
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', memory: 32Gi}}\n"
CLASS = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: gold}\nvalue: 10\n"
WPC = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: gold}\nvalue: 20\n"


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: True)


@pytest.mark.parametrize("text", [NODE, CLASS, WPC])
def test_a_submitter_may_not_apply_cluster_objects(as_alice, text):
    response = as_alice.post(URL, text, content_type="application/yaml")
    assert response.status_code == 403
    assert "only operators may apply" in str(response.json())
    assert not Node.objects.exists() and not PriorityClass.objects.exists()
    assert not WorkloadPriorityClass.objects.exists()


def test_an_operator_applies_nodes_and_priority_classes(as_olga):
    response = as_olga.post(URL, "---\n".join([NODE, CLASS, WPC]), content_type="application/yaml")
    assert response.status_code == 201, response.json()
    assert response.json()["lines"] == [
        "node/n1 created",
        "priorityclass.scheduling.k8s.io/gold created",
        "workloadpriorityclass.kueue.x-k8s.io/gold created",  # a name of its own kind
    ]
    assert (PriorityClass.objects.get().value, WorkloadPriorityClass.objects.get().value) == (10, 20)
    assert Node.objects.get(name="n1").allocatable == {"cpu": 8000, "memory": 32 * 2**30}


@pytest.mark.parametrize("text", [NODE, CLASS, WPC])
def test_a_viewer_who_sees_every_gang_may_not_apply_cluster_objects(as_vera, text):
    response = as_vera.post(URL, text, content_type="application/yaml")
    assert response.status_code == 403
    assert not Node.objects.exists() and not PriorityClass.objects.exists()
    assert not WorkloadPriorityClass.objects.exists()
