"""Manifests made wrong one value at a time, for the sweeps that check every refusal is clear
(``tests/declarations/test_error_messages.py`` reads them, ``tests/security/test_bad_input.py``
posts them): an example of every kind gangsched reads, every value's path in it, and values of
the wrong type or past every bound."""

import copy
import math
import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from .conftest import EXAMPLES, OWN, REFERENCE

#: What no message may show: Python's type names and reprs, and its parsers' own words.
PYTHON = re.compile(
    r"\b(?:not|a|an) (?:NoneType|None|str|dict|int|float|bool|bytes|set|tuple)\b"
    r"|\b(?:None|True|False|nan|inf)\b|\{'|\['"
    r"|invalid literal|int\(\)|float\(\)|Traceback|<class|object at 0x|[a-z]Error\b"
)
#: A value of each wrong type, and numbers past every bound.
BAD = [None, True, 2**63, 1.5, math.nan, "x", [1, 2], {"a": 1}]

#: The kinds no example file holds: a Node, a Namespace, the older scheduler-plugins PodGroup, a
#: PriorityClass and Kueue's WorkloadPriorityClass, a Pod with every constraint (tolerations, node
#: affinity), KAI's PodGroup with subgroups and a pod of one.
MORE = """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Topology
metadata: {name: tas}
spec: {levels: [{nodeLabel: example.com/block}, {nodeLabel: kubernetes.io/hostname}]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: tas-beta}
spec: {levels: [{nodeLabel: example.com/rack}]}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: rack-1}
spec: {tier: 1, members: [{type: Node, selector: {labelMatch: {matchLabels: {rack: r1},
  matchExpressions: [{key: zone, operator: In, values: [a]}]}}}]}
---
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Cohort
metadata: {name: org}
spec: {parent: all, fairSharing: {weight: "2"}}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
spec: {taints: [{key: k, value: v, effect: NoSchedule}], unschedulable: false}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns1}
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata: {name: older, namespace: ns}
spec: {minMember: 2, scheduleTimeoutSeconds: 30}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: kai, namespace: ns}
spec:
  minMember: 2
  queue: q
  preemptibility: preemptible
  topologyConstraint:
    {topology: t, requiredTopologyLevel: example.com/block, preferredTopologyLevel: example.com/rack}
  subGroups:
  - {name: workers, minMember: 2, parent: all, topologyConstraint: {requiredTopologyLevel: example.com/rack}}
  - {name: all}
  - {name: leader}
---
apiVersion: v1
kind: Pod
metadata:
  name: kai-0
  namespace: ns
  annotations: {pod-group-name: kai}
  labels: {kai.scheduler/subgroup-name: workers}
spec:
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: pc1}
value: 10
globalDefault: false
description: x
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: wpc1}
value: 10000
description: x
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: wpc2}
value: -5
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: ns, annotations: {gangsched.io/duration-seconds: "5"}}
spec:
  schedulerName: gangsched
  priority: 3
  nodeSelector: {zone: a}
  tolerations: [{key: k, operator: Equal, value: v, effect: NoExecute, tolerationSeconds: 5}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: gen, operator: Gt, values: ["3"]}, {key: zone, operator: In, values: [a]}]
  containers: [{name: c, resources: {requests: {cpu: "1"}, limits: {cpu: "1"}}}]
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws, namespace: ns, annotations: {scheduling.volcano.sh/queue-name: q}}
spec:
  replicas: 2
  startupPolicy: LeaderReady
  leaderWorkerTemplate:
    size: 2
    restartPolicy: None
    leaderTemplate:
      spec: {priority: 3, containers: [{name: l, resources: {requests: {cpu: "1"}}}]}
    workerTemplate:
      spec: {containers: [{name: w, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc, namespace: ns, labels: {volcano.sh/queue-name: q, ray.io/priority-class-name: pc1}}
spec:
  enableInTreeAutoscaling: true
  headGroupSpec:
    template: {spec: {containers: [{name: h, resources: {requests: {cpu: "1"}}}]}}
  workerGroupSpecs:
  - {groupName: g, replicas: 2, minReplicas: 1, maxReplicas: 3, numOfHosts: 1,
     template: {spec: {containers: [{name: w, resources: {requests: {cpu: "1"}}}]}}}
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: rj, namespace: ns, labels: {ray.io/gang-scheduling-enabled: "true"}}
spec:
  submissionMode: K8sJobMode
  submitterPodTemplate: {spec: {containers: [{name: s, resources: {requests: {cpu: "1"}}}]}}
  rayClusterSpec:
    headGroupSpec:
      template: {spec: {containers: [{name: h, resources: {requests: {cpu: "1"}}}]}}
    workerGroupSpecs:
    - {groupName: g, replicas: 1, template: {spec: {containers: [{name: w}]}}}
"""


def samples() -> list[tuple[str, dict]]:
    files = [*sorted(REFERENCE.glob("*.yaml")), *sorted(EXAMPLES.glob("*.yaml")), *sorted(OWN.glob("*.yaml"))]
    files += sorted(EXAMPLES.glob("queues/*.yaml"))
    files += sorted(EXAMPLES.glob("topology/*.yaml"))
    found = [(path.name, doc) for path in files for doc in yaml.safe_load_all(Path(path).read_text()) if doc]
    return found + [("MORE", doc) for doc in yaml.safe_load_all(MORE)]


def paths(value, path=()) -> Iterator[tuple]:
    """Every value's path in a document, the document itself excluded."""
    children = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    )
    for key, child in children:
        yield (*path, key)
        yield from paths(child, (*path, key))


def replaced(document: dict, path: tuple, value) -> dict:
    document = copy.deepcopy(document)
    holder = document
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return document
