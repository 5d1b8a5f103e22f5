"""Kueue's priority preemption inside a ClusterQueue, end to end: ``preemption.withinClusterQueue``
LowerPriority preempts the lowest-priority workloads, Never (Kueue's default) preempts none.

Re-expresses ``pkg/scheduler/preemption/preemption_test.go`` (kubernetes-sigs/kueue), "preempt
lowest priority" and "can't preempt workloads in ClusterQueue for withinClusterQueue=Never":
Kueue's own manifests applied unmodified, the real scheduling cycle, each workload a pod group of
one pod. Both ClusterQueues have 6 CPUs of quota and may borrow none, on a 16-CPU cluster, so a
workload that needs more than its ClusterQueue's quota waits at the queue's max, as in Kueue.
"""

import pytest

from scheduler_core.declarations import documents_parse
from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.models import Gang, GangEvent, Member
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.kubelet import kubelet_tick
from tests.loop.factories import make_nodes

from .conftest import cluster_queue, pod_yaml

pytestmark = pytest.mark.django_db

LOCAL_QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: main, namespace: {name}}}
spec: {{clusterQueue: {name}}}
"""

QUEUES = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: -1
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---""" + "---".join(
    [
        cluster_queue("standalone", "{withinClusterQueue: LowerPriority}", cohort="cohort"),
        LOCAL_QUEUE.format(name="standalone"),
        cluster_queue("c2", cohort="cohort"),  # no preemption: Kueue's default, Never
        LOCAL_QUEUE.format(name="c2"),
    ]
)


def apply(text: str) -> None:
    manifests_apply(documents_parse(text))


def workload(name: str, namespace: str, cpu: int, priority: str = "null") -> None:
    """A pod group of one pod: a Kueue workload of LocalQueue ``main``."""
    labels = f"{{kueue.x-k8s.io/queue-name: main, kueue.x-k8s.io/pod-group-name: {name}}}"
    annotations = '{kueue.x-k8s.io/pod-group-total-count: "1"}'
    apply(pod_yaml(name, namespace, labels, annotations, cpu, priority))


def running(namespace: str) -> list[str]:
    pods = Member.objects.filter(namespace=namespace, node__isnull=False, phase="Running")
    return sorted(pods.values_list("name", flat=True))


def test_within_cluster_queue_lower_priority_preempts_and_never_does_not():
    make_nodes(2, cpu=8)
    apply(QUEUES)
    workload("low", "standalone", 2, "low")
    workload("mid", "standalone", 2)
    workload("high", "standalone", 2, "high")
    workload("c2-low", "c2", 3, "low")
    cycle_run(holder="test")
    kubelet_tick()
    assert running("standalone") == ["high", "low", "mid"] and running("c2") == ["c2-low"]

    workload("incoming", "standalone", 2, "high")  # LowerPriority: low goes
    workload("c2-incoming", "c2", 4, "high")  # Never: waits
    for _ in range(3):
        cycle_run(holder="test")
        kubelet_tick()

    assert running("standalone") == ["high", "incoming", "mid"]
    preempted = GangEvent.objects.get(kind="preempted")
    assert preempted.gang.name == "low"
    assert "within queue cohort/standalone" in preempted.reason, preempted.reason
    assert running("c2") == ["c2-low"]
    waiting = Gang.objects.get(name="c2-incoming")
    assert waiting.reason == "QueueAtMax", waiting.message
