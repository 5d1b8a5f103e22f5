"""Peers' topology cases, end to end: their own Topology / HyperNode manifests and
annotated workloads applied unmodified (``manifests_apply``, as ``manage.py apply -f`` does),
then the real scheduling cycle against PostgreSQL and the simulated cluster (``cycle_run``).
The engine's tests (tests/engine/topology) check the same rules on plain data; these check that
a peer's objects reach the engine with the meaning they have upstream.
"""

import pytest

from scheduler_core.declarations import documents_parse
from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.models import Gang, Member
from scheduler_core.services.cycle import cycle_run

pytestmark = pytest.mark.django_db

HOST = "kubernetes.io/hostname"


def apply(text: str) -> None:
    manifests_apply(documents_parse(text))


def node(name: str, labels: dict[str, str], **allocatable: str) -> str:
    shown = ", ".join(f"{key}: {value}" for key, value in {HOST: name, **labels}.items())
    amounts = {"memory": "16Gi", "pods": "110", **allocatable}
    amounts_shown = ", ".join(f"{key}: '{value}'" for key, value in amounts.items())
    return (
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{shown}}}}}\n"
        f"status: {{allocatable: {{{amounts_shown}}}}}\n"
    )


def placed(namespace: str) -> dict[str, str]:
    return dict(Member.objects.filter(namespace=namespace, node__isnull=False).values_list("name", "node"))


# ---------------------------------------------------------------- Kueue

KUEUE_RACK = "cloud.provider.com/rack"
KUEUE_TOPOLOGY = f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {{name: tas-two-level}}
spec:
  levels:
  - nodeLabel: {KUEUE_RACK}
  - nodeLabel: {HOST}
"""


def kueue_pods(group: str, count: int, cpu: str, annotation: str, level: str) -> str:
    return "---\n".join(
        f"""
apiVersion: v1
kind: Pod
metadata:
  name: {group}-{index}
  namespace: default
  labels: {{kueue.x-k8s.io/pod-group-name: {group}}}
  annotations:
    kueue.x-k8s.io/pod-group-total-count: "{count}"
    {annotation}: {level}
spec:
  containers: [{{name: main, image: busybox, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""
        for index in range(count)
    )


def test_kueue_admits_workload_when_nodes_are_partially_empty_required():
    """Kueue ``pkg/scheduler/scheduler_tas_test.go`` ``TestScheduleForTAS``, "admits workload when
    nodes are partially empty; required": rack r1 of x1 (0 CPU), x2 and x3 (1 CPU each); a pod
    set of 2 x 1 CPU requiring the rack lands on x2 and x3."""
    apply(
        KUEUE_TOPOLOGY
        + "---\n"
        + "---\n".join(
            node(name, {KUEUE_RACK: "r1"}, cpu=cpu) for name, cpu in [("x1", "0"), ("x2", "1"), ("x3", "1")]
        )
    )
    apply(kueue_pods("foo", 2, "1", "kueue.x-k8s.io/podset-required-topology", KUEUE_RACK))

    cycle_run(holder="test")

    assert sorted(placed("default").values()) == ["x2", "x3"]


def test_kueue_required_rack_waits_rather_than_split_across_racks():
    """Kueue ``scheduler_tas_test.go`` ``TestScheduleForTAS``, "workload does not get scheduled as
    it does not fit within the node capacity" at rack level: two racks of 1 CPU each, a pod set of
    2 x 1 CPU requiring one rack waits (the cluster has the room, no rack has), and says so; the
    same pods preferring a rack are placed across both."""
    apply(
        KUEUE_TOPOLOGY
        + "---\n"
        + node("x1", {KUEUE_RACK: "r1"}, cpu="1")
        + "---\n"
        + node("x2", {KUEUE_RACK: "r2"}, cpu="1")
    )
    apply(kueue_pods("foo", 2, "1", "kueue.x-k8s.io/podset-required-topology", KUEUE_RACK))

    cycle_run(holder="test")

    assert placed("default") == {}
    gang = Gang.objects.get(name="foo")
    assert gang.reason == "NoDomainFits"
    assert "no rack has 2 free cpu (best: rack r1, 1 free)" in gang.message

    Gang.objects.filter(name="foo").delete()
    apply(kueue_pods("bar", 2, "1", "kueue.x-k8s.io/podset-preferred-topology", KUEUE_RACK))
    cycle_run(holder="test")
    assert sorted(placed("default").values()) == ["x1", "x2"]


BLOCK_LEVEL, RACK_LEVEL = "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"


def kueue_tas_world() -> None:
    """Kueue's TAS e2e world: hack/testing/kind-cluster-tas.yaml's 8 workers (blocks b1, b2 of
    racks r1, r2, two nodes each), 1 ``example.com/gpu`` each (test/e2e/tas/baseline/
    suite_test.go), the three-level "datacenter" Topology, and LocalQueue ``main`` of a
    ClusterQueue of 8 GPUs (job_test.go's BeforeEach)."""
    labels = [{BLOCK_LEVEL: f"b{1 + i // 4}", RACK_LEVEL: f"r{1 + i // 2 % 2}"} for i in range(8)]
    nodes = [node(f"kind-worker{i + 1}", labels[i], cpu="4", **{"example.com/gpu": "1"}) for i in range(8)]
    queues = f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {{name: datacenter}}
spec: {{levels: [{{nodeLabel: {BLOCK_LEVEL}}}, {{nodeLabel: {RACK_LEVEL}}}, {{nodeLabel: {HOST}}}]}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: tas-flavor}}
spec: {{nodeLabels: {{cloud.provider.com/node-group: tas-group}}, topologyName: datacenter}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cluster-queue}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [example.com/gpu]
    flavors: [{{name: tas-flavor, resources: [{{name: example.com/gpu, nominalQuota: 8}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: main, namespace: e2e-tas-job}}
spec: {{clusterQueue: cluster-queue}}
"""
    apply("---\n".join([*nodes, queues]))


def kueue_job(level_annotation: str, level: str) -> str:
    """job_test.go's Job: test-job, parallelism 3, completions 3, 1 example.com/gpu a pod."""
    return f"""
apiVersion: batch/v1
kind: Job
metadata:
  name: test-job
  namespace: e2e-tas-job
  labels: {{kueue.x-k8s.io/queue-name: main}}
spec:
  parallelism: 3
  completions: 3
  template:
    metadata:
      annotations: {{{level_annotation}: {level}}}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        resources: {{requests: {{example.com/gpu: "1"}}, limits: {{example.com/gpu: "1"}}}}
"""


def test_kueue_job_rack_required_is_not_admitted():
    """Kueue ``test/e2e/tas/baseline/job_test.go``, "Should not admit a Job if Rack required": no
    rack has 3 GPUs, so the Job's gang waits, placing none of its pods."""
    kueue_tas_world()
    apply(kueue_job("kueue.x-k8s.io/podset-required-topology", RACK_LEVEL))

    cycle_run(holder="test")

    assert placed("e2e-tas-job") == {}
    gang = Gang.objects.get(name="test-job")
    assert (gang.reason, gang.queue) == ("NoDomainFits", "main")


def test_kueue_job_block_required_runs_in_one_block():
    """Kueue ``job_test.go``, "Should admit a Job to TAS Block if Block required": the 3 pods run,
    all in one block."""
    kueue_tas_world()
    apply(kueue_job("kueue.x-k8s.io/podset-required-topology", BLOCK_LEVEL))

    cycle_run(holder="test")

    nodes = placed("e2e-tas-job")
    assert sorted(nodes) == ["test-job-0", "test-job-1", "test-job-2"]
    blocks = {1 + (int(name.removeprefix("kind-worker")) - 1) // 4 for name in nodes.values()}
    assert len(blocks) == 1


# ---------------------------------------------------------------- KAI-Scheduler

KAI_RACK = "topology.kubernetes.io/rack"


def kai_world() -> None:
    """KAI's allocateTopology_test.go world: node0..node3 of 1 GPU, rack1 = node0-1, rack2 = node2-3."""
    topology = f"""
apiVersion: kai.scheduler/v1alpha1
kind: Topology
metadata: {{name: cluster-topology}}
spec:
  levels:
  - nodeLabel: {KAI_RACK}
"""
    nodes = [
        node(f"node{i}", {KAI_RACK: f"rack{1 + i // 2}"}, cpu="8", **{"nvidia.com/gpu": "1"})
        for i in range(4)
    ]
    apply("---\n".join([topology, *nodes]))


def kai_job(name: str, pods: int, annotations: str, selector: str = "") -> str:
    group = f"""
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: {name}
  namespace: ns
  annotations: {{{annotations}}}
spec: {{minMember: {pods}}}
"""
    members = [
        f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}-{i}, namespace: ns, labels: {{scheduling.x-k8s.io/pod-group: {name}}}}}
spec:
  {selector}
  containers: [{{name: main, image: busybox, resources: {{requests: {{nvidia.com/gpu: "1"}}}}}}]
"""
        for i in range(pods)
    ]
    return "---\n".join([group, *members])


def test_kai_required_rack_schedules_all_tasks_on_the_same_rack():
    """KAI-Scheduler ``pkg/scheduler/actions/allocate/allocateTopology_test.go``, "Required
    topology level - schedule all tasks on the same rack": node0 is busy, so the 2-GPU job that
    requires one rack (its PodGroup's ``kai.scheduler/topology-required-placement``) goes to
    rack2, not to node1 + node2."""
    kai_world()
    apply(kai_job("running-job0", 1, "", selector=f"nodeSelector: {{{HOST}: node0}}"))
    cycle_run(holder="test")
    assert placed("ns") == {"running-job0-0": "node0"}

    apply(
        kai_job(
            "pending-job0",
            2,
            "kai.scheduler/topology: cluster-topology, "
            f"kai.scheduler/topology-required-placement: {KAI_RACK}",
        )
    )
    cycle_run(holder="test")

    assert sorted(v for k, v in placed("ns").items() if k.startswith("pending")) == ["node2", "node3"]


def test_kai_preferred_rack_schedules_even_when_no_rack_holds_the_job():
    """KAI-Scheduler ``allocateTopology_test.go``, "Preferred topology - schedule job even if
    preferred constraint can't be met": one free GPU per rack; a 2-GPU job preferring a rack runs
    across both."""
    kai_world()
    apply(kai_job("busy-a", 1, "", selector=f"nodeSelector: {{{HOST}: node0}}"))
    apply(kai_job("busy-b", 1, "", selector=f"nodeSelector: {{{HOST}: node2}}"))
    cycle_run(holder="test")

    apply(kai_job("pending-job0", 2, f"kai.scheduler/topology-preferred-placement: {KAI_RACK}"))
    cycle_run(holder="test")

    assert sorted(v for k, v in placed("ns").items() if k.startswith("pending")) == ["node1", "node3"]


# ---------------------------------------------------------------- Volcano

HYPERNODES = """
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: s0}
spec:
  tier: 1
  members:
  - {type: Node, selector: {exactMatch: {name: node0}}}
  - {type: Node, selector: {exactMatch: {name: node1}}}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: s1}
spec:
  tier: 1
  members:
  - {type: Node, selector: {regexMatch: {pattern: "^node[23]$"}}}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: s2}
spec:
  tier: 2
  members:
  - {type: HyperNode, selector: {exactMatch: {name: s0}}}
  - {type: HyperNode, selector: {exactMatch: {name: s1}}}
"""


def volcano_job(name: str, replicas: int, network: str) -> str:
    return f"""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}, namespace: c1}}
spec:
  schedulerName: volcano
  minAvailable: {replicas}
  networkTopology: {network}
  tasks:
  - name: worker
    replicas: {replicas}
    template:
      spec:
        containers: [{{name: main, image: busybox, resources: {{requests: {{cpu: "2"}}}}}}]
"""


def volcano_world() -> None:
    """Volcano's allocate_test.go world: node0..node3 of 2 CPU under s0 {node0, node1} and
    s1 {node2, node3}, both under the tier-2 s2."""
    apply("---\n".join([*(node(f"node{i}", {}, cpu="2") for i in range(4)), HYPERNODES]))


def test_volcano_hard_cannot_allocate_across_the_highest_tier_allowed():
    """Volcano ``pkg/scheduler/actions/allocate/allocate_test.go``
    ``TestAllocateWithNetWorkTopologies``, "hard network topology constrain, can not allocate job
    when cross highestTierAllowed tier": 3 x 2 CPU with highestTierAllowed 1 fits no tier-1
    HyperNode (4 CPU each): it waits and says which came closest."""
    volcano_world()
    apply(volcano_job("pg1", 3, "{mode: hard, highestTierAllowed: 1}"))

    cycle_run(holder="test")

    assert placed("c1") == {}
    gang = Gang.objects.get(name="pg1")
    assert gang.reason == "NoDomainFits"
    assert "no tier-1 HyperNode has 6 free cpu (best: tier-1 HyperNode s0, 4 free)" in gang.message


def test_volcano_hard_allocates_within_a_higher_tier():
    """Volcano ``allocate_test.go`` ``TestAllocateWithNetWorkTopologies``, "hard network topology
    constrain, can allocate job when highestTierAllowed not reached": the same job with
    highestTierAllowed 2 runs inside s2."""
    volcano_world()
    apply(volcano_job("pg1", 3, "{mode: hard, highestTierAllowed: 2}"))

    cycle_run(holder="test")

    assert len(placed("c1")) == 3


def test_volcano_hard_tier_1_keeps_a_job_under_one_switch():
    """Volcano ``allocate_test.go`` ``TestAllocateWithNetWorkTopologies``, "hard network topology
    constrain, can allocate job when multi hyperNodes are available": 2 x 2 CPU with
    highestTierAllowed 1 lands wholly in s0 or wholly in s1."""
    volcano_world()
    apply(volcano_job("pg1", 2, "{mode: hard, highestTierAllowed: 1}"))

    cycle_run(holder="test")

    nodes = set(placed("c1").values())
    assert nodes in ({"node0", "node1"}, {"node2", "node3"})


def test_volcano_soft_allocates_job_when_resources_are_enough():
    """Volcano ``allocate_test.go`` ``TestAllocateWithNetWorkTopologies``, "soft network topology
    constrain, can allocate job when resources are enough": 3 x 2 CPU in soft mode fits no tier-1
    HyperNode, so it widens to s2 and runs, two pods under one switch."""
    volcano_world()
    apply(volcano_job("pg1", 3, "{mode: soft}"))

    cycle_run(holder="test")

    nodes = sorted(placed("c1").values())
    assert len(nodes) == 3
    assert {"node0", "node1"} <= set(nodes) or {"node2", "node3"} <= set(nodes)
