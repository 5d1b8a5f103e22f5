"""A KWOK-style scenario driven only through ``manage.py`` commands, against a real worker.

Apply nodes, apply a gang that does not fit, add a node, see the gang bind, delete a member,
see it replaced. Cycles and kubelet ticks are sent as tasks (no beat in tests) while polling.
"""

import time

import pytest

from scheduler_core import tasks
from tests.loop.workers import Worker, wait_for

from .conftest import manage, manage_json, write

pytestmark = pytest.mark.django_db(transaction=True)

NODE = """
apiVersion: v1
kind: Node
metadata: {name: %s, labels: {gpu-model: T4}}
status: {allocatable: {cpu: "4", memory: 16Gi, nvidia.com/gpu: "1", pods: "110"}}
"""

JOB = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: research}
value: 500
---
apiVersion: gangsched.io/v1
kind: GangJob
metadata: {name: train, namespace: lab}
spec:
  minAvailable: 3
  restartPolicy: RestartFailedOnly
  priorityClassName: research
  tasks:
  - name: worker
    replicas: 3
    template:
      spec:
        nodeSelector: {gpu-model: T4}
        containers: [{name: c, image: x, resources: {requests: {cpu: "3", nvidia.com/gpu: "1"}}}]
"""


@pytest.fixture
def no_cycle_trigger():
    """Here the scheduler is really woken: a worker takes the tasks."""


@pytest.fixture
def worker():
    started = Worker("kwok")
    yield started
    started.stop()


def ticking(condition):
    """Send a cycle and a kubelet tick each second until ``condition()`` holds."""
    last = [0.0]

    def check():
        if time.monotonic() - last[0] > 1.0:
            tasks.schedule.delay()
            tasks.kubelet.delay()
            last[0] = time.monotonic()
        return condition()

    return check


def pods() -> dict[str, dict]:
    return {pod["name"]: pod for pod in manage_json("get", "pods", "-n", "lab")}


def gang() -> dict:
    return manage_json("get", "gangs", "-n", "lab")[0]


def test_nodes_and_a_gang_from_manifests_then_a_node_added_then_a_member_deleted(tmp_path, worker):
    nodes = "---".join(NODE % name for name in ("t4-1", "t4-2"))
    assert manage("apply", "-f", write(tmp_path, nodes, "nodes.yaml")).split() == [
        "node/t4-1",
        "created",
        "node/t4-2",
        "created",
    ]
    manage("apply", "-f", write(tmp_path, JOB, "job.yaml"))
    assert {p["phase"] for p in pods().values()} == {"Pending"}

    # Three pods of 3 CPU and 1 GPU, two nodes: it does not fit, and it says why.
    wait_for(ticking(lambda: gang()["reason"]), what="an explanation")
    assert all(p["node"] is None for p in pods().values())

    manage("apply", "-f", write(tmp_path, NODE % "t4-3", "node3.yaml"))
    wait_for(ticking(lambda: {p["phase"] for p in pods().values()} == {"Running"}), what="the gang to run")
    placed = pods()
    assert sorted(p["node"] for p in placed.values()) == ["t4-1", "t4-2", "t4-3"]
    assert gang()["state"] == "Running"
    assert all(n["used"]["nvidia.com/gpu"] == "1" for n in manage_json("get", "nodes"))

    out = manage("delete", "pod", "lab/train-worker-1")
    assert out.strip() == 'pod "train-worker-1" deleted from lab namespace (replaced)'
    assert pods()["train-worker-1"]["phase"] == "Pending"
    wait_for(ticking(lambda: pods()["train-worker-1"]["phase"] == "Running"), what="the replacement to run")
    after = pods()
    assert after["train-worker-1"]["node"] == placed["train-worker-1"]["node"]  # the only room left
    assert after["train-worker-0"]["node"] == placed["train-worker-0"]["node"]  # the others kept running
    assert gang()["state"] == "Running"
