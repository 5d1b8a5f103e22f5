"""Peers' queue cases, end to end: their own manifests applied unmodified (``manifests_apply``, as
``manage.py apply -f`` does), then the real scheduling cycle against PostgreSQL and the simulated
cluster (``cycle_run``). The engine's tests (tests/engine/queues) check the same rules on plain
data; these check that a peer's objects reach the engine with the meaning they have upstream.
"""

import pytest

from scheduler_core.declarations import documents_parse
from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.models import Gang, GangEvent, Member
from scheduler_core.services.cycle import cycle_run
from tests.loop.factories import make_nodes

from .conftest import yunikorn_configs

pytestmark = pytest.mark.django_db


def apply(text: str) -> None:
    manifests_apply(documents_parse(text))


def bound(namespace: str) -> int:
    return Member.objects.filter(namespace=namespace, node__isnull=False).count()


VOLCANO_QUEUE = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {{name: {name}}}
spec:
  reclaimable: true
  {spec}
"""

VOLCANO_JOB = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {{name: {name}, namespace: {namespace}}}
spec: {{minMember: {pods}, queue: {queue}}}
"""

VOLCANO_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  annotations: {{scheduling.k8s.io/group-name: {group}}}
spec:
  schedulerName: gangsched
  containers:
  - name: main
    image: busybox
    resources: {{requests: {{cpu: "{cpu}"}}}}
"""


def volcano_job(name: str, namespace: str, queue: str, pods: int, cpu: str) -> str:
    docs = [VOLCANO_JOB.format(name=name, namespace=namespace, pods=pods, queue=queue)]
    docs += [
        VOLCANO_POD.format(name=f"{name}-{i}", namespace=namespace, group=name, cpu=cpu) for i in range(pods)
    ]
    return "---".join(docs)


def test_volcano_capability_admits_up_to_it_and_no_further():
    """Volcano ``pkg/scheduler/plugins/capacity/capacity_test.go``
    ``Test_capacityPlugin_OnSessionOpenWithoutHierarchy``, "case0: Pod allocatable when queue has
    not exceed capability" and "case1: Pod not allocatable when queue exceed queue capability":
    a queue with ``capability`` cpu 2 on a 4-CPU cluster runs a 2-CPU job; a second job in the
    same queue waits, though the nodes have room, and says the queue is at its max."""
    make_nodes(1, cpu=4)
    apply(VOLCANO_QUEUE.format(name="q1", spec="capability: {cpu: '2'}"))
    apply(volcano_job("pg1", "ns1", "q1", 2, "1"))
    cycle_run(holder="test")
    assert bound("ns1") == 2

    apply(volcano_job("pg2", "ns1", "q1", 1, "1"))
    cycle_run(holder="test")

    assert bound("ns1") == 2
    waiting = Gang.objects.get(name="pg2")
    assert waiting.reason == "QueueAtMax"
    assert "queue q1 at its max: cpu 2/2" in waiting.message


def test_volcano_reclaims_for_a_queue_below_its_deserved_share():
    """Volcano ``capacity_test.go`` ``Test_capacityPlugin_OnSessionOpenWithoutHierarchy``,
    "case2: Can reclaim from other queues when allocated < deserved": q1 borrowed the whole
    cluster while q2 was idle; q2's job arrives within its ``deserved`` share and gets it back
    by evicting q1's youngest job (no more: q1 keeps its own fair share), whose history says
    which queue took the room."""
    make_nodes(1, cpu=4)
    apply(VOLCANO_QUEUE.format(name="q1", spec="deserved: {cpu: '2'}"))
    apply(VOLCANO_QUEUE.format(name="q2", spec="deserved: {cpu: '2'}"))
    apply(volcano_job("old", "ns1", "q1", 1, "2"))
    apply(volcano_job("young", "ns1", "q1", 1, "2"))  # borrows q2's idle share
    cycle_run(holder="test")
    assert bound("ns1") == 2

    apply(volcano_job("fair", "ns2", "q2", 1, "2"))
    cycle_run(holder="test")  # evicts the youngest, which leaves q1 at its fair share
    cycle_run(holder="test")  # the room is free: binds

    assert bound("ns2") == 1
    event = GangEvent.objects.get(kind="preempted")
    assert event.gang.name == "young" and event.details["reclaimedBy"] == "q2"
    assert Gang.objects.get(name="old").satisfied  # never below q1's own fair share


def test_volcano_queues_reclaim_at_once_for_each_queue_below_its_share():
    """Volcano ``test/e2e/schedulingaction/reclaim.go``, "Reclaim Case 10: Multi reclaimed
    queue": four queues of equal weight on four 1-CPU nodes; q1's and q2's jobs (min 1, 2 pods)
    fill the cluster, then a 1-pod job arrives in q3 and one in q4, and each takes a slot back
    in the same scheduling round (Volcano's proportion plugin reclaims with no delay): a Volcano
    queue's reclaim delay is 0, not ``GANGSCHED_RECLAIM_DELAY_S``. The queues in the e2e are
    ``default`` and ``reclaim-q2..4``; here q1..q4."""
    make_nodes(4, cpu=1)
    for name in ("q1", "q2", "q3", "q4"):
        apply(VOLCANO_QUEUE.format(name=name, spec="weight: 1"))
    apply(volcano_job("reclaim-j1", "ns1", "q1", 2, "1").replace("minMember: 2", "minMember: 1"))
    apply(volcano_job("reclaim-j2", "ns2", "q2", 2, "1").replace("minMember: 2", "minMember: 1"))
    cycle_run(holder="test")
    assert bound("ns1") == 2 and bound("ns2") == 2

    apply(volcano_job("reclaim-j3", "ns3", "q3", 1, "1"))
    apply(volcano_job("reclaim-j4", "ns4", "q4", 1, "1"))
    cycle_run(holder="test")  # both reclaim at once: one of j1's pods and one of j2's go
    cycle_run(holder="test")  # the room is free: both bind

    assert bound("ns3") == 1 and bound("ns4") == 1
    holding = Member.objects.filter(node__isnull=False).exclude(phase="Failed")
    assert holding.filter(namespace="ns1").count() == 1 and holding.filter(namespace="ns2").count() == 1
    reclaims = [
        event.details for event in GangEvent.objects.filter(kind="explained", details__has_key="from")
    ]
    assert sorted(details["queue"] for details in reclaims) == ["q3", "q4"]
    assert sorted(details["from"][0]["queue"] for details in reclaims) == ["q1", "q2"]  # a slot each
    assert Gang.objects.get(name="reclaim-j1").satisfied and Gang.objects.get(name="reclaim-j2").satisfied


KUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: on-demand}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: root}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: child}
spec: {parentName: root}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq-lender}
spec:
  namespaceSelector: {}
  cohort: child
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: on-demand
      resources:
      - {name: cpu, nominalQuota: "10", lendingLimit: "3"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq-borrower}
spec:
  namespaceSelector: {}
  cohort: child
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: on-demand
      resources:
      - {name: cpu, nominalQuota: "5", borrowingLimit: "10"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq-borrower, namespace: eng-alpha}
spec: {clusterQueue: cq-borrower}
"""

KUEUE_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: eng-alpha
  labels: {{{labels}kueue.x-k8s.io/queue-name: lq-borrower}}
spec:
  schedulerName: gangsched
  containers:
  - name: main
    image: busybox
    resources: {{requests: {{cpu: "1"}}}}
"""


def test_kueue_lending_limit_caps_what_a_hierarchical_cohort_member_borrows():
    """Kueue ``pkg/scheduler/scheduler_test.go``, "hierarchical cohort respects lending limit
    when borrowing": cq-lender (nominal 10 CPUs, lendingLimit 3) keeps 7 CPUs to itself even
    idle; cq-borrower (nominal 5, borrowingLimit 10) has used its 5, so a 4-CPU workload would
    borrow more than the 3 lendable and stays pending, while a 3-CPU one is admitted. The
    cluster here has 15 CPUs, the cohort's quota."""
    make_nodes(15, cpu=1)
    apply(KUEUE)
    apply("---".join(KUEUE_POD.format(name=f"wl-existing-{i}", labels="") for i in range(5)))
    cycle_run(holder="test")
    assert bound("eng-alpha") == 5

    # wl-pending: 4 CPUs as a gang of 4 one-CPU pods, bound together or not at all.
    gang = (
        "pod-group.scheduling.sigs.k8s.io: wl-pending, pod-group.scheduling.sigs.k8s.io/min-available: '4', "
    )
    apply("---".join(KUEUE_POD.format(name=f"wl-pending-{i}", labels=gang) for i in range(4)))
    cycle_run(holder="test")

    assert bound("eng-alpha") == 5
    waiting = Gang.objects.get(name="wl-pending")
    assert waiting.reason == "QueueCannotBorrow", waiting.message

    apply(KUEUE_POD.format(name="wl-small", labels=""))  # what is lendable still admits
    cycle_run(holder="test")
    assert Member.objects.get(name="wl-small").node is not None


KAI_QUEUE = """
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {{name: {name}}}
spec:
  resources:
    cpu: {{quota: 0, limit: -1, overQuotaWeight: {weight}}}
    memory: {{quota: 0, limit: -1, overQuotaWeight: {weight}}}
    gpu: {{quota: 2, limit: -1, overQuotaWeight: {weight}}}
"""

KAI_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: research
  labels: {{kai.scheduler/queue: {queue}}}
spec:
  schedulerName: gangsched
  containers:
  - name: main
    image: busybox
    resources: {{limits: {{nvidia.com/gpu: 1}}, requests: {{nvidia.com/gpu: 1}}}}
"""


def test_kai_divides_gpus_beyond_quota_by_over_quota_weight():
    """KAI-Scheduler ``pkg/scheduler/plugins/proportion/resource_division/resource_division_test.go``,
    "setResourceShare - GPU" / "two queues" / "allocates GPUs proportionally": 8 GPUs, two queues
    with a quota of 2 each, over-quota weights 1 and 3, each asking for 6: they end with 3 and 5.
    Here with KAI's own Queue objects and pods naming them by ``kai.scheduler/queue``, placed by
    the real cycle, and the fair shares the API reports."""
    make_nodes(2, cpu=4, gpu=4)
    apply(KAI_QUEUE.format(name="q1", weight=1) + "---" + KAI_QUEUE.format(name="q2", weight=3))
    pods = [KAI_POD.format(name=f"{queue}-{i}", queue=queue) for queue in ("q1", "q2") for i in range(6)]
    apply("---".join(pods))

    cycle_run(holder="test")

    placed = Member.objects.filter(node__isnull=False)
    assert placed.filter(name__startswith="q1-").count() == 3
    assert placed.filter(name__startswith="q2-").count() == 5


# As KAI-Scheduler's e2e helpers write a queue (test/e2e/modules/resources/rd/queue/queue.go,
# ``CreateQueueObjectWithGpuResource``): cpu and memory with quota -1, weight 1 and limit -1, the
# GPU with its own quota and weight.
KAI_E2E_QUEUE = """
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {{name: {name}}}
spec:
  resources:
    gpu: {{quota: 2, overQuotaWeight: {weight}, limit: -1}}
    cpu: {{quota: -1, overQuotaWeight: 1, limit: -1}}
    memory: {{quota: -1, overQuotaWeight: 1, limit: -1}}
"""


def test_kai_divides_each_resource_by_its_own_over_quota_weights():
    """The same case as above (resource_division_test.go, "allocates GPUs proportionally": 8
    GPUs, quotas of 2, GPU weights 1 and 3, each queue asking for 6), with the queues as KAI's
    e2e helpers write them: q2 weighs 3 on the GPU but 1 on cpu and memory, and cpu and memory
    have quota -1. KAI divides the GPUs by the GPU weights alone: 3 and 5."""
    make_nodes(2, cpu=4, gpu=4)
    apply(KAI_E2E_QUEUE.format(name="q1", weight=1) + "---" + KAI_E2E_QUEUE.format(name="q2", weight=3))
    pods = [KAI_POD.format(name=f"{queue}-{i}", queue=queue) for queue in ("q1", "q2") for i in range(6)]
    apply("---".join(pods))

    cycle_run(holder="test")

    placed = Member.objects.filter(node__isnull=False)
    assert placed.filter(name__startswith="q1-").count() == 3
    assert placed.filter(name__startswith="q2-").count() == 5


YUNIKORN = yunikorn_configs(
    "{name: root, queues: [{name: parent, resources: {max: {vcore: 4}},"
    " queues: [{name: leaf1}, {name: leaf2}]}]}"
)

YUNIKORN_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: apps
  labels: {{applicationId: {app}, queue: {queue}}}
spec:
  schedulerName: gangsched
  containers:
  - name: main
    image: busybox
    resources: {{requests: {{cpu: "{cpu}"}}}}
"""


def test_yunikorn_a_leaf_s_headroom_is_its_parent_s():
    """YuniKorn core ``pkg/scheduler/objects/queue_test.go`` ``TestHeadroom``: leaves without a
    max of their own share their parent's headroom. root.parent has max vcore 4 on an 8-CPU
    cluster; an application in leaf1 uses 3, so a 2-CPU pod of another application in leaf2
    waits (the parent is at its max) while a 1-CPU one fits. Pods name their queue with the
    shim's ``queue`` label, relative to root."""
    make_nodes(2, cpu=4)
    apply(YUNIKORN)
    apply(YUNIKORN_POD.format(name="a-0", app="app-a", queue="parent.leaf1", cpu="3"))
    cycle_run(holder="test")
    assert Member.objects.get(name="a-0").node is not None

    apply(YUNIKORN_POD.format(name="b-0", app="app-b", queue="root.parent.leaf2", cpu="2"))
    cycle_run(holder="test")
    assert Member.objects.get(name="b-0").node is None

    apply(YUNIKORN_POD.format(name="b-1", app="app-b", queue="root.parent.leaf2", cpu="1"))
    cycle_run(holder="test")
    assert Member.objects.get(name="b-1").node is not None
