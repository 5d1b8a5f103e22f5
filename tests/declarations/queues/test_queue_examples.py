"""Every queue format loads unmodified from its example in examples/queues/ into exactly the
specs docs/queue-manifests.md's tables say (amounts as the engine's integers)."""

import pytest

from scheduler_core.specs.queues import FlavorSpec, LocalQueueSpec

from .helpers import GIB, flavors, load_example, load_text, local_queues, specs_by_name

pytestmark = pytest.mark.django_db

GPU = "nvidia.com/gpu"


def test_volcano_queues_with_a_parent():
    """Volcano: deserved is the guarantee, capability the max; guarantee.resource is kept from
    lending; status.state Closed closes the queue."""
    loaded = load_example("volcano-queues.yaml")
    specs = specs_by_name(loaded)

    assert [item.object_name for item in loaded] == [
        "queue.scheduling.volcano.sh/ml",
        "queue.scheduling.volcano.sh/ml-training",
        "queue.scheduling.volcano.sh/ml-inference",
    ]
    ml, training, inference = specs["ml"], specs["ml-training"], specs["ml-inference"]
    assert (ml.parent, ml.weight, ml.reclaimable, ml.open) == (None, 2.0, False, True)
    assert ml.guarantee == {"cpu": 64_000, "memory": 256 * GIB, GPU: 16}
    assert ml.max == {"cpu": 128_000, "memory": 512 * GIB, GPU: 32}
    assert ml.lending_limit == {}
    assert (training.parent, training.weight, training.reclaimable) == ("ml", 3.0, True)
    assert training.guarantee == {"cpu": 48_000, "memory": 192 * GIB, GPU: 12}
    assert training.max == {"cpu": 96_000, "memory": 384 * GIB, GPU: 24}
    assert training.lending_limit == {GPU: 8}  # 12 deserved, 4 of them reserved
    assert (inference.parent, inference.open, inference.max) == ("ml", False, {})
    assert all(spec.source_format == "volcano" and not spec.cohort for spec in specs.values())
    assert training.field == "documents[1].metadata.name"


def test_kueue_v1beta1_cohort_cluster_queues_local_queue_and_flavor():
    loaded = load_example("kueue-v1beta1.yaml")
    specs = specs_by_name(loaded)

    assert [item.object_name for item in loaded] == [
        "resourceflavor.kueue.x-k8s.io/a100",
        "cohort.kueue.x-k8s.io/research",
        "clusterqueue.kueue.x-k8s.io/team-a-cq",
        "clusterqueue.kueue.x-k8s.io/team-b-cq",
        "localqueue.kueue.x-k8s.io/user-queue",
    ]
    research, team_a, team_b = specs["research"], specs["team-a-cq"], specs["team-b-cq"]
    assert (research.cohort, research.parent, research.weight, research.guarantee) == (True, None, 2.0, {})
    assert (team_a.cohort, team_a.parent, team_a.weight) == (False, "research", 1.5)
    assert team_a.guarantee == {"cpu": 40_000, "memory": 160 * GIB, GPU: 8}
    assert team_a.max == {"memory": 200 * GIB, GPU: 12}  # nominal + borrowingLimit; cpu: unlimited
    assert team_a.lending_limit == {GPU: 2}
    assert (team_a.reclaimable, team_a.open) == (True, True)  # reclaimWithinCohort: Any
    assert team_a.extra["flavors"] == {"cpu": "a100", "memory": "a100", GPU: "a100"}
    assert team_b.guarantee == {"cpu": 20_000, "memory": 80 * GIB, GPU: 4} and team_b.max == {}
    assert (team_b.reclaimable, team_b.open) == (False, False)  # no preemption: Never; Hold
    assert local_queues(loaded) == [
        LocalQueueSpec(
            "team-a",
            "user-queue",
            "team-a-cq",
            "documents[4].metadata.name",
            loaded[4].objects[0].spec.declaration,
        )
    ]
    assert flavors(loaded) == [
        FlavorSpec(
            "a100",
            "documents[0].metadata.name",
            {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
            loaded[0].objects[0].spec.declaration,
        )
    ]


def test_kueue_v1beta2_hierarchical_cohorts():
    """The shape of Kueue's Cohort concept page: parentName, a Cohort's own pool, cohortName."""
    loaded = load_example("kueue-v1beta2.yaml")
    specs = specs_by_name(loaded)

    root, org, cq = specs["root-cohort"], specs["important-org"], specs["important-cq"]
    assert (root.cohort, root.parent, root.guarantee) == (True, None, {})
    assert (org.parent, org.weight, org.guarantee) == ("root-cohort", 0.75, {"cpu": 12_000})
    assert org.extra["guarantee_is_pool"] is True
    assert (cq.parent, cq.guarantee, cq.max) == (
        "important-org",
        {"cpu": 0, "memory": 36 * GIB},
        {"cpu": 12_000},
    )
    assert [(q.namespace, q.name, q.cluster_queue) for q in local_queues(loaded)] == [
        ("important", "main", "important-cq")
    ]
    assert [f.node_labels for f in flavors(loaded)] == [{}]


def test_kai_parent_and_child_queues_in_kai_units():
    """KAI: cpu in millicores, memory in MB of 10^6 bytes, gpu in devices; -1 unlimited."""
    specs = specs_by_name(load_example("kai-queues.yaml"))

    research, vision = specs["research"], specs["research-vision"]
    assert research.parent is None and research.weight == 2.0
    assert research.guarantee == {"cpu": 64_000, "memory": 262_144 * 10**6, GPU: 16}
    assert research.max == {GPU: 24}
    assert research.extra == {"displayName": "Research department"}
    assert vision.parent == "research" and vision.weight == 1.0
    assert vision.guarantee == {"cpu": 16_500, "memory": 65_536 * 10**6, GPU: 4}
    assert vision.max == {"cpu": 32_000, "memory": 131_072 * 10**6, GPU: 8}
    assert all(spec.source_format == "kai" for spec in specs.values())


def test_yunikorn_configmap_queue_tree_by_full_path():
    """YuniKorn: vcore is CPU in cores (or m), memory in bytes; names are full paths."""
    loaded = load_example("yunikorn-configs.yaml")
    specs = specs_by_name(loaded)

    assert [item.object_name for item in loaded] == ["configmap/yunikorn-configs"]
    assert list(specs) == ["root", "root.ml", "root.ml.nlp", "root.ml.vision", "root.sandbox"]
    assert specs["root"].parent is None and specs["root.ml.nlp"].parent == "root.ml"
    assert specs["root.ml"].guarantee == {"cpu": 32_000, "memory": 128 * GIB, GPU: 8}
    assert specs["root.ml"].max == {"cpu": 64_000, "memory": 256 * GIB, GPU: 16}
    assert specs["root.ml.nlp"].guarantee == {"cpu": 16_000, "memory": 64 * GIB, GPU: 4}
    assert specs["root.ml.nlp"].max == {"cpu": 48_000, "memory": 192 * 10**9, GPU: 12}
    assert specs["root.ml.vision"].guarantee == {"cpu": 8_500, "memory": 32 * GIB}
    assert specs["root.ml.vision"].reclaimable is False  # preemption.policy: disabled
    assert specs["root.sandbox"].extra == {"parent": True}
    assert specs["root.ml.nlp"].field == "data.queues.yaml.partitions[0].queues[0].queues[0].queues[0]"


def test_a_cluster_queue_without_a_namespace_selector_admits_nothing():
    """Kueue's API (apis/kueue/v1beta2/clusterqueue_types.go): a null namespaceSelector is "a
    nothing selector (no namespaces eligible)": the queue is closed, and still lends its quota."""
    text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
    text += "spec: {cohortName: c}\n"
    spec = specs_by_name(load_text(text))["cq"]

    assert (spec.open, spec.parent, spec.extra["namespaceSelector"]) == (False, "c", None)
