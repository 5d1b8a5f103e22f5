"""Helpers for the queue tests: specs in a line, manifests in a call, and no Celery worker
needed for the wake-ups."""

import pytest

from scheduler_core.specs.queues import QueueSpec


def spec(name, parent=None, field="items[0]", **fields) -> QueueSpec:
    return QueueSpec(name=name, source_format="gangsched", field=field, parent=parent, **fields)


_YUNIKORN_CONFIGS = """
apiVersion: v1
kind: ConfigMap
metadata: {name: yunikorn-configs, namespace: yunikorn}
data:
  queues.yaml: |
    partitions:
      - name: default
        queues:
"""


def yunikorn_configs(*queues: str) -> str:
    """The ``yunikorn-configs`` ConfigMap whose partition lists ``queues``, each one queue as a
    YAML flow mapping (``{name: root, queues: [{name: a}]}``)."""
    return _YUNIKORN_CONFIGS + "".join(f"          - {queue}\n" for queue in queues)


_CLUSTER_QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  namespaceSelector: {{}}
  preemption: {preemption}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {{name: cpu, nominalQuota: "{quota}"{borrowing}}}
"""


def cluster_queue(name: str, preemption: str = "{}", quota: str = "6", cohort: str = "") -> str:
    """A Kueue ClusterQueue of ``quota`` CPUs of flavor ``default``; in ``cohort``, borrowing
    none (its max is its quota)."""
    text = _CLUSTER_QUEUE.format(
        name=name, preemption=preemption, quota=quota, borrowing=', borrowingLimit: "0"' if cohort else ""
    )
    return text.replace("spec:\n", f"spec:\n  cohort: {cohort}\n") if cohort else text


_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  labels: {labels}
  annotations: {annotations}
spec:
  schedulerName: gangsched
  priorityClassName: {priority}
  containers:
  - name: main
    image: busybox
    resources: {{requests: {{cpu: "{cpu}"}}}}
"""


def pod_yaml(
    name: str, namespace: str, labels: str, annotations: str = "{}", cpu="1", priority="null"
) -> str:
    """A pod for gangsched requesting ``cpu``; ``labels`` and ``annotations`` as YAML flow
    mappings, ``priority`` a PriorityClass name (null: none)."""
    return _POD.format(
        name=name, namespace=namespace, labels=labels, annotations=annotations, cpu=cpu, priority=priority
    )


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    calls = []
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: calls.append(1) or True)
    return calls
