"""Kueue's hierarchical cohorts end to end: a Cohort's own quota and ``borrowingLimit``, and
guarantees held across sibling cohorts (kueue #7015, #3948), through Kueue's own manifests
applied unmodified and the real scheduling cycle (see test_peer_cases_loop.py)."""

import pytest

from scheduler_core.declarations import documents_parse
from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.engine import model as engine
from scheduler_core.models import Member, Queue
from scheduler_core.services.cycle import cycle_run
from scheduler_core.snapshot.queues import queues_read
from tests.loop.factories import make_nodes

pytestmark = pytest.mark.django_db


def apply(text: str) -> None:
    manifests_apply(documents_parse(text))


def cohort(
    name: str, parent: str | None = None, quota: str | None = None, borrowing: str | None = None
) -> str:
    spec = {}
    if parent:
        spec["parentName"] = parent
    if quota is not None:
        limits = f', borrowingLimit: "{borrowing}"' if borrowing is not None else ""
        spec["resourceGroups"] = (
            "[{coveredResources: [cpu], flavors: [{name: red, resources: "
            f'[{{name: cpu, nominalQuota: "{quota}"{limits}}}]}}]}}]'
        )
    body = ", ".join(f"{key}: {value}" for key, value in spec.items())
    return f"""
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {{name: {name}}}
spec: {{{body}}}
"""


def cluster_queue(name: str, parent: str, quota: str, borrowing: str | None = None) -> str:
    limits = f', borrowingLimit: "{borrowing}"' if borrowing is not None else ""
    return f"""
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  namespaceSelector: {{}}
  cohort: {parent}
  preemption: {{reclaimWithinCohort: Any}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: red
      resources:
      - {{name: cpu, nominalQuota: "{quota}"{limits}}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: {name}, namespace: {name}}}
spec: {{clusterQueue: {name}}}
"""


POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {queue}
  labels: {{kueue.x-k8s.io/queue-name: {queue}}}
spec:
  schedulerName: gangsched
  containers:
  - name: main
    image: busybox
    resources: {{requests: {{cpu: "1"}}}}
"""

FLAVOR = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: red}
"""


def pods(queue: str, count: int) -> str:
    return "---".join(POD.format(name=f"{queue}-{i}", queue=queue) for i in range(count))


def bound(queue: str) -> int:
    return Member.objects.filter(namespace=queue, node__isnull=False).count()


# Kueue pkg/cache/scheduler/resource_test.go, TestAvailable, "hierarchical cohort respects
# borrowing limit":
#                root
#               5    \
#             left    right -- right-cq
#            /    5
#    left-cq1      left-cq2
# left: own quota 10 with borrowingLimit 5; left-cq1 10; left-cq2 10 with borrowingLimit 5;
# right: own quota 10; right-cq 10. 50 CPUs in all.
BORROWING_TREE = "---".join(
    [
        FLAVOR,
        cohort("root"),
        cohort("left", "root", quota="10", borrowing="5"),
        cohort("right", "root", quota="10"),
        cluster_queue("left-cq1", "left", "10"),
        cluster_queue("left-cq2", "left", "10", borrowing="5"),
        cluster_queue("right-cq", "right", "10"),
    ]
)


@pytest.mark.parametrize(
    ("queue", "available"),
    [
        ("left-cq1", 35),  # the left subtree's 30 and 5 borrowed above it
        ("left-cq2", 15),  # its own 10 and its borrowingLimit 5
        ("right-cq", 50),  # all of root's subtree
    ],
)
def test_kueue_a_cohorts_borrowing_limit_caps_its_subtree(queue: str, available: int):
    make_nodes(50, cpu=1)
    apply(BORROWING_TREE)
    apply(pods(queue, 60))
    cycle_run(holder="test")
    assert bound(queue) == available


def test_a_cohorts_guarantee_is_its_pool_plus_its_cluster_queues():
    """What the engine is given: left is guaranteed its own 10 plus its two ClusterQueues' 20,
    with a max of that plus its borrowingLimit; root, no quota of its own, what is below it."""
    apply(BORROWING_TREE)
    assert Queue.objects.get(name="left").extra["borrowing_limit"] == {"cpu": 5000}
    tree = {queue.name: queue for queue in queues_read()[0]}
    assert tree["left"].guarantee == {"cpu": 30_000} and tree["left"].max == {"cpu": 35_000}
    assert tree["right"].guarantee == {"cpu": 20_000} and tree["right"].max == {}
    assert tree["root"].guarantee == {"cpu": 50_000}
    assert isinstance(tree["left-cq2"], engine.Queue) and tree["left-cq2"].max == {"cpu": 15_000}


def test_guarantees_hold_across_sibling_cohorts():
    """kueue #7015 / #3948: two cohorts that only group ClusterQueues (no quota of their own).
    org holds cq-a and cq-b, 10 CPUs each; other holds cq-c, 10 CPUs. All three ask for the
    whole 30-CPU cluster at once, cq-c first: each gets its 10. Split by weight at the top
    instead (org and other alike), cq-c would get 15 and cq-a and cq-b 7-8 each."""
    make_nodes(30, cpu=1)
    apply(
        "---".join(
            [
                FLAVOR,
                cohort("org"),
                cohort("other"),
                cluster_queue("cq-a", "org", "10"),
                cluster_queue("cq-b", "org", "10"),
                cluster_queue("cq-c", "other", "10"),
            ]
        )
    )
    apply(pods("cq-c", 30))
    apply(pods("cq-a", 30))
    apply(pods("cq-b", 30))
    cycle_run(holder="test")
    assert (bound("cq-a"), bound("cq-b"), bound("cq-c")) == (10, 10, 10)
