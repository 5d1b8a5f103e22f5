"""KAI-Scheduler's Queues as KAI's own users write them: an ``overQuotaWeight`` per resource and
``quota: -1`` (``scheduler_core/declarations/queues_kai.py``)."""

import pytest

from scheduler_core.declarations import DeclarationError
from scheduler_core.models import Queue
from scheduler_core.snapshot.queues import queues_read

from ..conftest import apply_text
from .helpers import load_text, specs_by_name

pytestmark = pytest.mark.django_db

GPU = "nvidia.com/gpu"

# The queues KAI-Scheduler's reclaim e2e tests build (test/e2e/suites/reclaim/helpers.go,
# ``CreateQueues``, through test/e2e/modules/resources/rd/queue/queue.go,
# ``CreateQueueObjectWithGpuResource``): cpu and memory with quota -1, weight 1, limit -1; the GPU
# with its own quota and weight 2 (the parent: limit = quota; the children: limit -1).
RECLAIM_QUEUES = """
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: parent}
spec:
  resources:
    gpu: {quota: 4, overQuotaWeight: 2, limit: 4}
    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}
    memory: {quota: -1, overQuotaWeight: 1, limit: -1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: queue1}
spec:
  parentQueue: parent
  resources:
    gpu: {quota: 1, overQuotaWeight: 2, limit: -1}
    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}
    memory: {quota: -1, overQuotaWeight: 1, limit: -1}
"""

# KAI-Scheduler docs/queues/README.md, "Hierarchical Queue" (its ``priority: 200`` left out:
# gangsched orders queues by fair share, not priority levels, and refuses it).
HIERARCHICAL = """
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: research-team}
spec:
  resources:
    cpu: {quota: 1000, limit: 2000}
    gpu: {quota: 1, limit: 2}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: ml-team}
spec:
  displayName: "ML Team"
  parentQueue: "research-team"
  resources:
    cpu: {quota: 500, overQuotaWeight: 2}
    gpu: {quota: 1, overQuotaWeight: 1}
"""


def test_kai_e2e_queues_load_with_a_weight_per_resource_and_unlimited_quotas():
    specs = specs_by_name(load_text(RECLAIM_QUEUES))

    child = specs["queue1"]
    assert child.weights == {"cpu": 1.0, "memory": 1.0, GPU: 2.0}
    assert sorted(child.unlimited_guarantee) == ["cpu", "memory"]
    assert child.guarantee == {GPU: 1} and child.max == {}
    assert specs["parent"].max == {GPU: 4}


def test_the_docs_hierarchical_example_weighs_cpu_twice_the_gpu():
    ml = specs_by_name(load_text(HIERARCHICAL))["ml-team"]
    # memory declares no weight: 1, as gangsched reads a missing overQuotaWeight
    assert ml.weights == {"cpu": 2.0, "memory": 1.0, GPU: 1.0}
    assert ml.guarantee == {"cpu": 500, "memory": 0, GPU: 1}


def test_one_weight_on_every_resource_stays_one_weight():
    spec = specs_by_name(load_text(RECLAIM_QUEUES.replace("overQuotaWeight: 2", "overQuotaWeight: 1")))[
        "queue1"
    ]
    assert spec.weight == 1.0 and spec.weights == {}


def test_applied_queues_reach_the_engine_and_reapply_unchanged():
    first = apply_text(RECLAIM_QUEUES)
    second = apply_text(RECLAIM_QUEUES)

    assert all(line.endswith(" created") for line in first.lines), first.lines
    assert all(line.endswith(" unchanged") for line in second.lines), second.lines
    row = Queue.objects.get(name="queue1")
    assert row.weights == {"cpu": 1.0, "memory": 1.0, GPU: 2.0}
    assert row.unlimited_guarantee == ["cpu", "memory"] and "cpu" not in row.guarantee
    engine = {queue.name: queue for queue in queues_read()[0]}["queue1"]
    assert engine.weights == {"cpu": 1.0, "memory": 1.0, GPU: 2.0}
    assert engine.unlimited_guarantee == frozenset({"cpu", "memory"})


def test_an_unlimited_child_quota_needs_no_room_in_its_parents_limit():
    """A child's quota -1 claims its parent's share: the parent's limit (here 4 GPUs, KAI's
    reclaim helpers) bounds it, it does not refuse it."""
    text = RECLAIM_QUEUES.replace(
        "gpu: {quota: 1, overQuotaWeight: 2, limit: -1}", "gpu: {quota: -1, limit: -1}"
    )
    apply_text(text)
    assert Queue.objects.get(name="queue1").unlimited_guarantee == ["cpu", "memory", GPU]


def test_only_minus_one_is_unlimited():
    with pytest.raises(DeclarationError) as error:
        load_text(RECLAIM_QUEUES.replace("cpu: {quota: -1,", "cpu: {quota: -2,", 1))
    assert error.value.field == "documents[0].spec.resources.cpu.quota"
    assert "only -1" in error.value.reason


def test_the_api_shows_the_weights(as_alice):
    apply_text(RECLAIM_QUEUES)

    detail = as_alice.get("/api/v1/queues/queue1/").json()

    assert detail["weights"] == {"cpu": 1.0, "memory": 1.0, GPU: 2.0}
    assert detail["unlimitedGuarantee"] == ["cpu", "memory"]
    assert as_alice.get("/api/v1/queues/parent/").json()["weights"] == {"cpu": 1.0, "memory": 1.0, GPU: 2.0}
