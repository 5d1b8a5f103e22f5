"""Bad queue manifests are refused naming the field, and nothing is written.

Cases re-expressed from the projects' own validation tests where they have one (cited per case);
the rest are gangsched's rule: a key it cannot honour is refused naming it, never dropped."""

import copy

import pytest

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.declarations.documents import Manifest
from scheduler_core.declarations.registry import manifest_load
from scheduler_core.models import Gang, Member

pytestmark = pytest.mark.django_db


def volcano(spec=None, **top):
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "q"},
        "spec": spec or {},
        **top,
    }


def kai(resources=None, **spec):
    resources = resources if resources is not None else {"gpu": {"quota": 1, "limit": 2}}
    return {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "q"},
        "spec": {"resources": resources, **spec},
    }


def quota(name="cpu", **amounts):
    return {"name": name, "nominalQuota": 4, **amounts}


def cluster_queue(version="v1beta1", groups=None, **spec):
    groups = (
        groups
        if groups is not None
        else [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [quota()]}]}]
    )
    return {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"resourceGroups": groups, **spec},
    }


def kueue(kind, spec, version="v1beta1", **meta):
    return {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": kind,
        "metadata": {"name": "x", **meta},
        "spec": spec,
    }


CONFIG = """partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: a
{extra}"""


def yunikorn(extra="", text=None):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "yunikorn-configs"},
        "data": {"queues.yaml": text or CONFIG.format(extra=extra)},
    }


REFUSED = [
    # Volcano: pkg/webhooks/admission/queues/validate/validate_queue_test.go, TestAdmitQueues
    # ("Create queue with deserved less guarantee", "... guarantee but no deserved should be
    # rejected", "Create queue with capability less deserved", "Abnormal Case Weights Is Negative").
    (
        volcano({"deserved": {"cpu": "1"}, "guarantee": {"resource": {"cpu": "2"}}}),
        "spec.deserved.cpu",
        "guarantee <= deserved",
    ),
    (volcano({"guarantee": {"resource": {"cpu": "1"}}}), "spec.deserved.cpu", "guarantee <= deserved"),
    (
        volcano({"deserved": {"cpu": "4"}, "capability": {"cpu": "2"}}),
        "spec.capability.cpu",
        "deserved <= capability",
    ),
    (volcano({"weight": -1}), "spec.weight", "out of range"),
    (volcano({"weight": 0}), "spec.weight", "out of range"),
    (volcano({"deserved": {"cpu": "-1"}}), "spec.deserved.cpu", "must not be negative"),
    (volcano({"capability": {"memory": "lots"}}), "spec.capability.memory", "invalid quantity"),
    (
        volcano(
            {"affinity": {"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["a"]}}}
        ),
        "spec.affinity",
        "affinity",
    ),
    (volcano({"extendClusters": [{"name": "c2"}]}), "spec.extendClusters", "one cluster"),
    (volcano({"priority": 5}), "spec.priority", "fair share"),
    (volcano({"dequeueStrategy": "fifo"}), "spec.dequeueStrategy", "traverse"),
    (volcano({"sharingPolicy": "x"}), "spec.sharingPolicy", "does not read this key"),
    (volcano(status={"state": "Unknown"}), "status.state", "not one of"),
    (volcano({"reclaimable": "yes"}), "spec.reclaimable", "true or false"),
    ({**volcano(), "metadata": {"name": "root"}}, "metadata.name", "root queue"),
    # Volcano TestAdmitQueues "hierarchy-weights-dont-match": the drf hierarchy annotations.
    (
        {**volcano(), "metadata": {"name": "q", "annotations": {"volcano.sh/hierarchy": "root/q"}}},
        "metadata.annotations.volcano.sh/hierarchy",
        "spec.parent",
    ),
    # Kueue: pkg/webhooks/clusterqueue_webhook_test.go, TestValidateClusterQueue ("flavor quota
    # with negative value", "... negative borrowingLimit", "... negative lendingLimit",
    # "... lendingLimit and empty cohort", "... lendingLimit greater than nominalQuota",
    # "resource in more than one resource group").
    (
        cluster_queue(
            groups=[
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [quota(nominalQuota=-1)]}],
                }
            ]
        ),
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
        "negative",
    ),
    (
        cluster_queue(
            groups=[
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [quota(borrowingLimit="-1")]}],
                }
            ]
        ),
        "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit",
        "negative",
    ),
    (
        cluster_queue(
            groups=[
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [quota(lendingLimit=-1)]}],
                }
            ],
            cohort="c",
        ),
        "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit",
        "negative",
    ),
    (
        cluster_queue(
            groups=[
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [quota(lendingLimit=2)]}],
                }
            ]
        ),
        "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit",
        "needs a cohort",
    ),
    (
        cluster_queue(
            groups=[
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [quota(lendingLimit=5)]}],
                }
            ],
            cohort="c",
        ),
        "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit",
        "more than nominalQuota",
    ),
    (
        cluster_queue(
            groups=[
                {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [quota()]}]},
                {"coveredResources": ["cpu"], "flavors": [{"name": "g", "resources": [quota()]}]},
            ]
        ),
        "spec.resourceGroups[1].flavors[0].resources[0].name",
        "already covered",
    ),
    (
        cluster_queue(
            groups=[
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [quota(nominalQuota="4x")]}],
                }
            ]
        ),
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
        "invalid quantity",
    ),
    # Several flavors for one resource: Kueue's flavor fungibility, which gangsched cannot honour.
    (
        cluster_queue(
            groups=[
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {"name": "a100", "resources": [quota("nvidia.com/gpu")]},
                        {"name": "h100", "resources": [quota("nvidia.com/gpu")]},
                    ],
                }
            ]
        ),
        "spec.resourceGroups[0].flavors[1]",
        "one flavor per resource",
    ),
    (
        cluster_queue(
            groups=[
                {"coveredResources": ["cpu", "memory"], "flavors": [{"name": "f", "resources": [quota()]}]}
            ]
        ),
        "spec.resourceGroups[0].flavors[0].resources",
        "no quota for memory",
    ),
    (cluster_queue(admissionChecks=["prov"]), "spec.admissionChecks", "admission checks"),
    (cluster_queue(queueingStrategy="StrictFIFO"), "spec.queueingStrategy", "StrictFIFO"),
    (cluster_queue(stopPolicy="HoldAndDrain"), "spec.stopPolicy", "use Hold"),
    (
        cluster_queue(namespaceSelector={"matchLabels": {"team": "a"}}),
        "spec.namespaceSelector",
        "every namespace",
    ),
    (
        cluster_queue(preemption={"reclaimWithinCohort": "LowerPriority"}),
        "spec.preemption.reclaimWithinCohort",
        "Any or Never",
    ),
    (
        cluster_queue(preemption={"withinClusterQueue": "LowerOrNewerEqualPriority"}),
        "spec.preemption.withinClusterQueue",
        "LowerPriority",
    ),
    (
        cluster_queue(preemption={"borrowWithinCohort": {"policy": "LowerPriority"}}),
        "spec.preemption.borrowWithinCohort",
        "never preempts to borrow",
    ),
    (cluster_queue(fairSharing={"weight": "0"}), "spec.fairSharing.weight", "positive"),
    (cluster_queue(cohortName="c"), "spec.cohortName", "calls it spec.cohort"),
    (cluster_queue("v1beta2", cohort="c"), "spec.cohort", "calls it spec.cohortName"),
    (cluster_queue(unknownField=1), "spec.unknownField", "does not read this key"),
    (kueue("Cohort", {"parent": "p"}, "v1beta2"), "spec.parent", "calls it spec.parentName"),
    (kueue("LocalQueue", {}, namespace="ns"), "spec.clusterQueue", "non-empty string"),
    (
        kueue("LocalQueue", {"clusterQueue": "cq", "stopPolicy": "Hold"}, namespace="ns"),
        "spec.stopPolicy",
        "ClusterQueue",
    ),
    (
        kueue("LocalQueue", {"clusterQueue": "cq", "fairSharing": {"weight": "2"}}, namespace="ns"),
        "spec.fairSharing",
        "no LocalQueue weight",
    ),
    (
        kueue("ResourceFlavor", {"nodeTaints": [{"key": "k", "effect": "NoSchedule"}]}),
        "spec.nodeTaints",
        "taint the Node",
    ),
    # A TAS flavor is read, with Kueue's rule that it selects its nodes by label
    # (apis/kueue/v1beta2/resourceflavor_types.go); the Topology must exist (tests/declarations/topology).
    (kueue("ResourceFlavor", {"topologyName": "default"}), "spec.nodeLabels", "topologyName"),
    # KAI: -1 is the only negative amount; whole GPUs; positive weights.
    (kai({"gpu": {"quota": -2}}), "spec.resources.gpu.quota", "only -1"),
    (kai({"cpu": {"quota": -5}}), "spec.resources.cpu.quota", "negative"),
    (kai({"gpu": {"quota": 0.5, "limit": 1}}), "spec.resources.gpu.quota", "whole GPUs"),
    (kai({"cpu": {"quota": "1000"}}), "spec.resources.cpu.quota", "must be a number"),
    (
        kai({"cpu": {"overQuotaWeight": 1}, "gpu": {"overQuotaWeight": -3}}),
        "spec.resources.gpu.overQuotaWeight",
        "positive",
    ),
    (kai({"cpu": {"overQuotaWeight": 0}}), "spec.resources.cpu.overQuotaWeight", "positive"),
    (kai({"tpu": {"quota": 1}}), "spec.resources.tpu", "does not read this key"),
    (kai(priority=200), "spec.priority", "priority levels"),
    (kai(reclaimMinRuntime="10m"), "spec.reclaimMinRuntime", "minimum run time"),
    (
        {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "q"}, "spec": {}},
        "spec.resources",
        "must be an object",
    ),
    # YuniKorn: yunikorn-core pkg/common/configs/configvalidator_test.go (bad quantities, one
    # root, names) and what gangsched cannot honour.
    (
        yunikorn("            resources: {guaranteed: {memory: -1}}\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[0].resources.guaranteed.memory",
        "YuniKorn quantity",
    ),
    (
        yunikorn("            resources: {max: {memory: 1m}}\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[0].resources.max.memory",
        "YuniKorn quantity",
    ),
    (
        yunikorn("            resources: {max: {vcore: 1.5}}\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[0].resources.max.vcore",
        "quantity",
    ),
    (
        yunikorn("            resources: {max: {cpu: 2}}\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[0].resources.max.cpu",
        "vcore",
    ),
    (
        yunikorn("            maxapplications: 4\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[0].maxapplications",
        "number of applications",
    ),
    (
        yunikorn("            submitacl: alice\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[0].submitacl",
        "set in gangsched",
    ),
    (
        yunikorn("            properties: {application.sort.policy: fair}\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[0].properties.application.sort.policy",
        "cannot be honoured",
    ),
    (
        yunikorn("            properties: {preemption.policy: fence}\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[0].properties.preemption.policy",
        "cannot be honoured",
    ),
    (
        yunikorn("            properties: {guaranteed.something: x}\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[0].properties.guaranteed.something",
        "property",
    ),
    (
        yunikorn("          - name: a\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[1].name",
        "declared twice",
    ),
    (
        yunikorn("          - name: a.b\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[1].name",
        "1-64 letters",
    ),
    (
        yunikorn(
            text="partitions:\n  - name: default\n    queues:\n      - name: root\n"
            "        resources: {max: {vcore: 4}}\n"
        ),
        "data.queues.yaml.partitions[0].queues[0].resources",
        "root queue must not have resources",
    ),
    (
        yunikorn("          - name: ROOT\n"),
        "data.queues.yaml.partitions[0].queues[0].queues[1].name",
        "only the top queue",
    ),
    (
        yunikorn(
            text="partitions:\n  - name: default\n    placementrules:\n      - name: tag\n"
            "        value: namespace\n    queues:\n      - name: root\n"
        ),
        "data.queues.yaml.partitions[0].placementrules",
        "no placement rules",
    ),
    (
        yunikorn(text="partitions:\n  - name: gpu\n    queues:\n      - name: root\n"),
        "data.queues.yaml.partitions[0].name",
        "default",
    ),
    (yunikorn(text="partitions: [\n"), "data.queues.yaml", "not valid YAML"),
    (
        {**yunikorn(), "data": {"queues.yaml": "partitions: []", "log.level": "-1"}},
        "data.log.level",
        "only queues.yaml",
    ),
    ({**yunikorn(), "metadata": {"name": "other"}}, "metadata.name", "only the ConfigMap yunikorn-configs"),
]


@pytest.mark.parametrize(("manifest", "field", "reason"), REFUSED)
def test_a_bad_queue_manifest_is_refused_naming_the_field(manifest, field, reason):
    with pytest.raises(DeclarationError) as error:
        manifest_load(Manifest("", copy.deepcopy(manifest)))

    assert (error.value.field, reason in error.value.reason) == (field, True), error.value


def test_an_unknown_version_of_a_queue_kind_is_refused_naming_api_version():
    for api_version, kind in [
        ("scheduling.volcano.sh/v1alpha1", "Queue"),
        ("scheduling.run.ai/v1", "Queue"),
        ("kueue.x-k8s.io/v1alpha1", "ClusterQueue"),
        ("kueue.x-k8s.io/v1beta3", "Cohort"),
        ("v2", "ConfigMap"),
    ]:
        with pytest.raises(DeclarationError) as error:
            manifests_apply([{"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}])
        assert error.value.field == "apiVersion", (api_version, kind)


def test_a_refused_queue_among_gangs_writes_nothing():
    """One bad queue in a file with a good PodGroup: the apply is refused whole."""
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"minMember": 1},
    }
    with pytest.raises(DeclarationError) as error:
        manifests_apply([group, kai({"gpu": {"quota": -2}})])

    assert error.value.field == "documents[1].spec.resources.gpu.quota"
    assert not Gang.objects.exists() and not Member.objects.exists()
