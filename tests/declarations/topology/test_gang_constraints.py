"""Each format's own keys become the gang's constraint fields (docs/topology.md's tables):
Kueue's pod-set annotations, KAI's annotations on a PodGroup, a pod or its top owner, Volcano's
networkTopology with a tier number or a tier name; the constraint a gang's pods give it stays
when its PodGroup is applied again, and pods joining a stored gang give it theirs."""

import pytest

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.models import Gang
from scheduler_core.reads.topology_domains import hypernode_label

from .test_topology_refusals import RACK, hypernode, levels, node_member, pod, topology, volcano_podgroup

pytestmark = pytest.mark.django_db
BLOCK = "example.com/block"


def constraint(name: str) -> tuple[str, str, str]:
    gang = Gang.objects.get(name=name)
    return gang.topology_required, gang.topology_preferred, gang.topology_name


def podgroup(name="pg", **annotations):
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ml", "annotations": annotations},
        "spec": {"minMember": 1},
    }


def member(name, group="pg", **annotations):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "labels": {"scheduling.x-k8s.io/pod-group": group},
            "annotations": annotations,
        },
        "spec": {"containers": [{"name": "c"}]},
    }


def test_kueue_preferred_and_unconstrained():
    manifests_apply(
        [topology(levels(BLOCK, RACK)), pod("a-0", "a", **{"kueue.x-k8s.io/podset-preferred-topology": RACK})]
    )
    manifests_apply([pod("b-0", "b", **{"kueue.x-k8s.io/podset-unconstrained-topology": "true"})])

    assert constraint("a") == ("", RACK, "")
    assert constraint("b") == ("", "", "")


def test_kai_annotations_on_pods_join_a_podgroup_declared_without_them():
    """KAI's podgrouper reads its keys on the pods' top owner (pkg/podgrouper/podgrouper/plugins/
    defaultgrouper/default_grouper.go): here the pods carry them; their PodGroup takes them, and
    keeps them when the PodGroup alone is applied again."""
    keys = {
        "kai.scheduler/topology-required-placement": BLOCK,
        "kai.scheduler/topology-preferred-placement": RACK,
    }
    manifests_apply(
        [topology(levels(BLOCK, RACK)), podgroup(), member("pg-0", **keys), member("pg-1", **keys)]
    )
    assert constraint("pg") == (BLOCK, RACK, "")

    manifests_apply([podgroup()])
    assert constraint("pg") == (BLOCK, RACK, "")


def test_pods_joining_a_stored_gang_give_it_their_constraint():
    manifests_apply([topology(levels(BLOCK, RACK), api="kai.scheduler/v1alpha1"), podgroup()])
    assert constraint("pg") == ("", "", "")

    manifests_apply(
        [
            member(
                "pg-0", **{"kai.scheduler/topology": "tas", "kai.scheduler/topology-required-placement": RACK}
            )
        ]
    )
    assert constraint("pg") == (RACK, "", "tas")


def test_kai_keys_on_a_jobs_metadata_reach_its_pods_gang():
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "train",
            "namespace": "ml",
            "annotations": {"kai.scheduler/topology-required-placement": RACK},
        },
        "spec": {
            "parallelism": 2,
            "template": {
                "metadata": {"labels": {"scheduling.x-k8s.io/pod-group": "pg"}},
                "spec": {"containers": [{"name": "c"}]},
            },
        },
    }
    manifests_apply([topology(levels(RACK)), podgroup(), job])
    assert constraint("pg") == (RACK, "", "")


def test_volcano_tier_name_and_soft_mode():
    """Volcano resolves highestTierName through HyperNodes' spec.tierName (pkg/scheduler/framework/
    session.go translateHighestTierNameToAllowed) and treats soft mode as 'as close as it fits'
    over the whole cluster (convertSoftToHardTopology): soft's highestTierAllowed bounds nothing."""
    manifests_apply(
        [
            hypernode("s0", 1, node_member("n0"), tierName="leaf"),
            hypernode(
                "s1", 2, {"type": "HyperNode", "selector": {"exactMatch": {"name": "s0"}}}, tierName="spine"
            ),
            volcano_podgroup({"mode": "hard", "highestTierName": "spine"}),
        ]
    )
    assert constraint("vg") == (hypernode_label(2), "", "")

    manifests_apply([volcano_podgroup({"mode": "soft", "highestTierAllowed": 2})])
    assert constraint("vg") == ("", hypernode_label(1), "")


def test_kai_keys_on_a_gangjob_or_a_vcjob_reach_its_gang():
    gangjob = {
        "apiVersion": "gangsched.io/v1",
        "kind": "GangJob",
        "metadata": {
            "name": "gj",
            "namespace": "ml",
            "annotations": {"kai.scheduler/topology-preferred-placement": RACK},
        },
        "spec": {
            "tasks": [{"name": "w", "replicas": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}]
        },
    }
    vcjob = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": "vj",
            "namespace": "ml",
            "annotations": {"kai.scheduler/topology-required-placement": RACK},
        },
        "spec": {
            "tasks": [{"name": "w", "replicas": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}]
        },
    }
    manifests_apply([topology(levels(BLOCK, RACK)), gangjob, vcjob])

    assert constraint("gj") == ("", RACK, "")
    assert constraint("vj") == (RACK, "", "")


def test_a_volcano_podgroup_whose_annotations_contradict_its_network_topology_is_refused():
    group = volcano_podgroup({"mode": "hard", "highestTierAllowed": 1})
    group["metadata"]["annotations"] = {"kai.scheduler/topology-required-placement": RACK}
    with pytest.raises(DeclarationError) as error:
        manifests_apply([topology(levels(RACK)), hypernode("s0", 1, node_member("n")), group])
    assert error.value.field == "documents[2].metadata.annotations.kai.scheduler/topology-required-placement"
    assert not Gang.objects.exists()


def test_pods_before_their_podgroup_keep_their_constraint_for_it():
    """As a real cluster sends them, pods may come before their PodGroup: they wait in a
    provisional gang, which keeps their constraint; the PodGroup then declares the gang with it."""
    keys = {"kai.scheduler/topology-required-placement": RACK}
    manifests_apply([topology(levels(RACK)), member("pg-0", **keys)])
    assert Gang.objects.get(name="pg").provisional
    assert constraint("pg") == (RACK, "", "")

    manifests_apply([podgroup()])

    assert not Gang.objects.get(name="pg").provisional
    assert constraint("pg") == (RACK, "", "")
