"""Bad topology manifests and bad gang constraints are refused naming the field, and nothing is
written. Cases re-expressed from the projects' own validation tests where they have one (cited
per case); the rest are gangsched's rule: a key it cannot honour is refused naming it."""

import pytest

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.models import Gang, HyperNode, Member, ResourceFlavor, Topology
from scheduler_core.reads.topology_domains import hypernode_label

pytestmark = pytest.mark.django_db
RACK = "example.com/rack"


def topology(levels, api="kueue.x-k8s.io/v1beta2", name="tas"):
    return {"apiVersion": api, "kind": "Topology", "metadata": {"name": name}, "spec": {"levels": levels}}


def levels(*keys):
    return [{"nodeLabel": key} for key in keys]


def hypernode(name, tier, *members, **spec):
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "members": list(members), **spec},
    }


def node_member(name):
    return {"type": "Node", "selector": {"exactMatch": {"name": name}}}


def hyper_member(name):
    return {"type": "HyperNode", "selector": {"exactMatch": {"name": name}}}


def pod(name="p-0", group="g", **annotations):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "labels": {"kueue.x-k8s.io/pod-group-name": group},
            "annotations": {"kueue.x-k8s.io/pod-group-total-count": "1", **annotations},
        },
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    }


def volcano_podgroup(network=None, **spec):
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "vg", "namespace": "ml"},
        "spec": {"minMember": 1, **({"networkTopology": network} if network is not None else {}), **spec},
    }


def refused(*documents) -> DeclarationError:
    with pytest.raises(DeclarationError) as error:
        manifests_apply(list(documents))
    assert not Topology.objects.exists() and not HyperNode.objects.exists()
    assert not Gang.objects.exists() and not Member.objects.exists() and not ResourceFlavor.objects.exists()
    return error.value


CASES = [
    # Kueue's and KAI's Topology CRDs (apis/kueue/v1beta2/topology_types.go,
    # pkg/apis/kai/v1alpha1/topology_types.go): 1-16 levels, unique, hostname only last.
    ([topology([])], "documents[0].spec.levels", "at least one level"),
    ([topology(levels(*[f"l{i}" for i in range(17)]))], "documents[0].spec.levels", "at most 16"),
    ([topology(levels(RACK, RACK))], "documents[0].spec.levels[1].nodeLabel", "listed twice"),
    (
        [topology(levels("kubernetes.io/hostname", RACK), api="kai.scheduler/v1alpha1")],
        "documents[0].spec.levels[0].nodeLabel",
        "lowest (last) level",
    ),
    ([topology(levels("not a label"))], "documents[0].spec.levels[0].nodeLabel", "not a node-label key"),
    ([topology([{"nodeLabel": RACK, "weight": 2}])], "documents[0].spec.levels[0].weight", "does not read"),
    ([topology(levels(hypernode_label(1)))], "documents[0].spec.levels[0].nodeLabel", "gangsched's own"),
    ([topology(levels(RACK), name="volcano-hypernodes")], "documents[0].metadata.name", "HyperNodes make"),
    ([topology(levels(RACK)), topology(levels(RACK))], "documents[1].metadata.name", "declared twice"),
    # Volcano's HyperNode (webhooks admit_hypernode_test.go TestValidateHyperNode "invalid
    # regexMatch"; test/e2e/admission/hypernode_validation_test.go "no members", "empty
    # exactMatch name", "invalid exactMatch name").
    (
        [hypernode("h", 1, {"type": "Node", "selector": {"regexMatch": {"pattern": "a(b"}}})],
        "documents[0].spec.members[0].selector.regexMatch.pattern",
        "not a regular expression",
    ),
    ([hypernode("h", 1)], "documents[0].spec.members", "at least one member"),
    (
        [hypernode("h", 1, {"type": "Node", "selector": {"exactMatch": {"name": ""}}})],
        "documents[0].spec.members[0].selector.exactMatch.name",
        "",
    ),
    (
        [hypernode("h", 1, {"type": "Node", "selector": {"exactMatch": {"name": "Bad_Name"}}})],
        "documents[0].spec.members[0].selector.exactMatch.name",
        "",
    ),
    (
        [hypernode("h", 1, {"type": "Node", "selector": {}})],
        "documents[0].spec.members[0].selector",
        "exactly one",
    ),
    (
        [
            hypernode(
                "h",
                1,
                {"type": "Node", "selector": {"exactMatch": {"name": "a"}, "regexMatch": {"pattern": "b"}}},
            )
        ],
        "documents[0].spec.members[0].selector",
        "exactly one",
    ),
    (
        [hypernode("h", 1, {"type": "Switch", "selector": {"exactMatch": {"name": "a"}}})],
        "documents[0].spec.members[0].type",
        "not one of Node, HyperNode",
    ),
    (
        [hypernode("h", 2, {"type": "HyperNode", "selector": {"labelMatch": {"matchLabels": {"a": "b"}}}})],
        "documents[0].spec.members[0].selector.labelMatch",
        "Nodes only",
    ),
    ([hypernode("h", 0, node_member("n"))], "documents[0].spec.tier", "from 1"),
    ([hypernode("h", None, node_member("n"))], "documents[0].spec.tier", "needs a tier"),
    # The tree: gangsched's checks over the whole set (services/topology.py).
    ([hypernode("a", 2, hyper_member("a"))], "documents[0].spec.members[0]", "a cycle of HyperNodes: a -> a"),
    (
        [
            hypernode("a", 2, hyper_member("b")),
            hypernode("b", 2, hyper_member("c")),
            hypernode("c", 2, hyper_member("a")),
        ],
        "documents[0].spec.members[0]",
        "a -> b -> c -> a",
    ),
    (
        [hypernode("leaf", 1, node_member("n")), hypernode("mid", 1, hyper_member("leaf"))],
        "documents[1].spec.members[0]",
        "HyperNode leaf is of tier 1",
    ),
    (
        [
            hypernode("leaf", 1, node_member("n")),
            hypernode("s1", 2, hyper_member("leaf")),
            hypernode("s2", 2, hyper_member("leaf")),
        ],
        "documents[2].spec.members[0]",
        "already belongs to s1",
    ),
    # Kueue's pod-set annotations (pkg/controller/jobs/job/job_webhook_test.go TestValidateCreate
    # "invalid topology request - both annotations", "- invalid required"; slices: not honoured).
    (
        [
            topology(levels(RACK)),
            pod(
                **{
                    "kueue.x-k8s.io/podset-required-topology": RACK,
                    "kueue.x-k8s.io/podset-preferred-topology": RACK,
                }
            ),
        ],
        "documents[1].metadata.annotations.kueue.x-k8s.io/podset-preferred-topology",
        "at most one",
    ),
    (
        [pod(**{"kueue.x-k8s.io/podset-required-topology": "some required value"})],
        "documents[0].metadata.annotations.kueue.x-k8s.io/podset-required-topology",
        "not a node-label key",
    ),
    (
        [pod(**{"kueue.x-k8s.io/podset-unconstrained-topology": "maybe"})],
        "documents[0].metadata.annotations.kueue.x-k8s.io/podset-unconstrained-topology",
        "boolean",
    ),
    (
        [
            pod(
                **{
                    "kueue.x-k8s.io/podset-slice-required-topology": RACK,
                    "kueue.x-k8s.io/podset-slice-size": "2",
                }
            )
        ],
        "documents[0].metadata.annotations.kueue.x-k8s.io/podset-slice-required-topology",
        "slices",
    ),
    (
        [pod(**{"kueue.x-k8s.io/podset-group-name": "x"})],
        "documents[0].metadata.annotations.kueue.x-k8s.io/podset-group-name",
        "PodSet groups",
    ),
    (
        [pod(**{"kueue.x-k8s.io/podset-required-topology": "example.com/zone"})],
        "documents[0].metadata.annotations.kueue.x-k8s.io/podset-required-topology",
        "unknown level example.com/zone: no topology has it",
    ),
    # KAI (docs/topology/README.md; segments: not honoured).
    (
        [pod(**{"kai.scheduler/topology": "tas"})],
        "documents[0].metadata.annotations.kai.scheduler/topology",
        "no level",
    ),
    (
        [pod(**{"kai.scheduler/segment-size": "4"})],
        "documents[0].metadata.annotations.kai.scheduler/segment-size",
        "slices",
    ),
    (
        [
            topology(levels(RACK)),
            pod(**{"kai.scheduler/topology": "other", "kai.scheduler/topology-required-placement": RACK}),
        ],
        "documents[1].metadata.annotations.kai.scheduler/topology-required-placement",
        "topology other not found",
    ),
    (
        [
            topology(levels("example.com/block", RACK)),
            pod(
                **{
                    "kai.scheduler/topology-required-placement": RACK,
                    "kai.scheduler/topology-preferred-placement": "example.com/block",
                }
            ),
        ],
        "documents[1].metadata.annotations.kai.scheduler/topology-required-placement",
        "wider than the required",
    ),
    # Volcano's networkTopology (webhooks admit_job_test.go "job-with-invalid-NetworkTopology-and-
    # PartitionPolicy": both highestTierAllowed and highestTierName).
    (
        [volcano_podgroup({"mode": "hard", "highestTierAllowed": 1, "highestTierName": "leaf"})],
        "documents[0].spec.networkTopology.highestTierName",
        "cannot both be set",
    ),
    (
        [volcano_podgroup({"mode": "hard"})],
        "documents[0].spec.networkTopology.highestTierAllowed",
        "needs highestTierAllowed",
    ),
    (
        [volcano_podgroup({"mode": "strict", "highestTierAllowed": 1})],
        "documents[0].spec.networkTopology.mode",
        "not one of",
    ),
    (
        [volcano_podgroup({"mode": "hard", "highestTierAllowed": 2})],
        "documents[0].spec.networkTopology.highestTierAllowed",
        "unknown level",
    ),
    (
        [
            hypernode("s0", 1, node_member("n"), tierName="leaf"),
            volcano_podgroup({"highestTierName": "spine"}),
        ],
        "documents[1].spec.networkTopology.highestTierName",
        "no HyperNode has tierName 'spine'",
    ),
    (
        [volcano_podgroup({"mode": "hard", "highestTierAllowed": 1, "tier": 3})],
        "documents[0].spec.networkTopology.tier",
        "does not read",
    ),
    (
        [
            volcano_podgroup(
                subGroupPolicy=[{"name": "a", "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}]
            )
        ],
        "documents[0].spec.subGroupPolicy[0].networkTopology",
        "slices",
    ),
    # A ResourceFlavor's topologyName must exist (Kueue's TAS flavor).
    (
        [
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ResourceFlavor",
                "metadata": {"name": "f"},
                "spec": {"nodeLabels": {"a": "b"}, "topologyName": "nope"},
            }
        ],
        "documents[0].spec.topologyName",
        "topology nope not found",
    ),
]


@pytest.mark.parametrize(("documents", "field", "reason"), CASES)
def test_refused_naming_the_field_and_writing_nothing(documents, field, reason):
    error = refused(*documents)
    if len(documents) == 1:  # a lone document's paths start at its root
        field = field.removeprefix("documents[0].")
    assert (error.field, reason in error.reason) == (field, True), error


def test_pods_of_one_gang_asking_for_different_levels_are_refused():
    docs = [
        topology(levels("example.com/block", RACK)),
        pod(
            "p-0",
            **{"kueue.x-k8s.io/pod-group-total-count": "2", "kueue.x-k8s.io/podset-required-topology": RACK},
        ),
        pod(
            "p-1",
            **{
                "kueue.x-k8s.io/pod-group-total-count": "2",
                "kueue.x-k8s.io/podset-required-topology": "example.com/block",
            },
        ),
    ]
    error = refused(*docs)
    assert error.field == "documents[2].metadata.annotations.kueue.x-k8s.io/podset-required-topology"
    assert "asks for required example.com/block but" in error.reason


def test_a_pod_may_not_contradict_its_volcano_podgroup():
    docs = [
        hypernode("s0", 1, node_member("n")),
        volcano_podgroup({"mode": "hard", "highestTierAllowed": 1}),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "vg-0",
                "namespace": "ml",
                "annotations": {
                    "scheduling.k8s.io/group-name": "vg",
                    "kai.scheduler/topology-preferred-placement": hypernode_label(1),
                },
            },
            "spec": {"containers": [{"name": "c"}]},
        },
    ]
    error = refused(*docs)
    assert error.field == "documents[2].metadata.annotations.kai.scheduler/topology-preferred-placement"


def test_a_constraint_on_a_pod_without_a_gang_is_refused():
    docs = [
        topology(levels(RACK)),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "alone", "annotations": {"kai.scheduler/topology-required-placement": RACK}},
            "spec": {"schedulerName": "gangsched", "containers": [{"name": "c"}]},
        },
    ]
    error = refused(*docs)
    assert error.field == "documents[1].metadata.annotations.kai.scheduler/topology-required-placement"
    assert "belongs to no gang" in error.reason


def test_a_stored_cycle_closed_by_a_later_apply_is_refused():
    manifests_apply([hypernode("a", 1, node_member("n"))])
    manifests_apply([hypernode("b", 2, hyper_member("a"))])
    with pytest.raises(DeclarationError) as error:
        manifests_apply([hypernode("a", 3, hyper_member("b"))])  # a holds b holds a
    assert error.value.field == "spec.members[0]"
    assert error.value.reason == "a cycle of HyperNodes: a -> b -> a"
    assert HyperNode.objects.get(name="a").tier == 1


def test_changing_levels_follows_each_crds_rule():
    """KAI's Topology CRD: levels are immutable (``self == oldSelf``); Kueue's: they may change only
    when kubernetes.io/hostname is the lowest level both before and after
    (apis/kueue/v1beta2/topology_types.go's XValidation rules)."""
    host = "kubernetes.io/hostname"
    manifests_apply([topology(levels(RACK), api="kai.scheduler/v1alpha1", name="kai")])
    with pytest.raises(DeclarationError) as error:
        manifests_apply(
            [topology(levels("example.com/block", RACK), api="kai.scheduler/v1alpha1", name="kai")]
        )
    assert (error.value.field, "immutable" in error.value.reason) == ("spec.levels", True)

    manifests_apply([topology(levels(RACK))])
    with pytest.raises(DeclarationError) as error:
        manifests_apply([topology(levels("example.com/block", RACK))])
    assert error.value.field == "spec.levels"
    assert Topology.objects.get(name="tas").levels == [RACK]

    manifests_apply([topology(levels(RACK, host), name="kueue-host")])
    manifests_apply([topology(levels("example.com/block", RACK, host), name="kueue-host")])
    assert Topology.objects.get(name="kueue-host").levels == ["example.com/block", RACK, host]
