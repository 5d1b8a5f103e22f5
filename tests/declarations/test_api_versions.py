"""apiVersion is checked as a whole: each kind is read only in the versions its project serves
(``registry.OBJECTS``), and docs/declaring-gangs.md's list of them is that table."""

import re
from pathlib import Path

import pytest

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.declarations.documents import Manifest
from scheduler_core.declarations.registry import OBJECTS, api_versions, manifest_load
from scheduler_core.models import Gang, Member

pytestmark = pytest.mark.django_db

DECLARING = Path(__file__).parents[2] / "docs" / "declaring-gangs.md"


def document(api_version: str, kind: str) -> dict:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "x", "namespace": "ns"},
        "spec": {"minMember": 1},
    }


# (apiVersion, kind): a version the kind's group never had, or a group that does not have the kind.
WRONG = [
    ("scheduling.x-k8s.io/v9", "PodGroup"),
    ("scheduling.x-k8s.io/v1beta1", "PodGroup"),
    ("scheduling.sigs.k8s.io/v1beta1", "PodGroup"),
    ("scheduling.volcano.sh/v1alpha1", "PodGroup"),
    ("scheduling.k8s.io/v1alpha1", "PodGroup"),
    ("scheduling.run.ai/v2", "PodGroup"),
    ("scheduling.run.ai/v2alpha1", "PodGroup"),
    ("example.com/v1", "PodGroup"),
    ("batch/v9", "Job"),
    ("batch/v1beta1", "Job"),
    ("batch.volcano.sh/v1beta1", "Job"),
    ("apps/v1beta9", "Deployment"),
    ("apps/v1beta1", "StatefulSet"),
    ("extensions/v1beta1", "Deployment"),
    ("v2", "Pod"),
    ("core/v1", "Pod"),
    ("/v1", "Pod"),
    ("v1beta1", "Node"),
    ("v1alpha1", "Namespace"),
    ("scheduling.k8s.io/v1beta1", "PriorityClass"),
    ("scheduling.k8s.io/v1alpha2", "PriorityClass"),
    ("scheduling.k8s.io/v1", "WorkloadPriorityClass"),  # Kueue's kind, not Kubernetes'
    ("kueue.x-k8s.io/v1", "WorkloadPriorityClass"),
    ("scheduling.k8s.io/v1", "Workload"),
    ("scheduling.k8s.io/v1beta1", "Workload"),
    ("gangsched.io/v1alpha1", "GangJob"),
    ("gangsched.io/v2", "GangJob"),
]


@pytest.mark.parametrize(("api_version", "kind"), WRONG)
def test_a_version_or_group_the_kind_does_not_have_is_refused_naming_api_version(api_version, kind):
    with pytest.raises(DeclarationError) as error:
        manifests_apply([document(api_version, kind)])

    assert error.value.field == "apiVersion"
    assert repr(api_version) in error.value.reason
    group = api_version.rpartition("/")[0]
    same_group = [known for known in api_versions(kind) if known.rpartition("/")[0] == group]
    assert error.value.reason.endswith("use " + " or ".join(same_group or api_versions(kind)))
    assert not Gang.objects.exists() and not Member.objects.exists()


def test_the_refusal_says_which_versions_the_kind_has():
    with pytest.raises(DeclarationError) as same_group:
        manifests_apply([document("scheduling.x-k8s.io/v9", "PodGroup")])
    with pytest.raises(DeclarationError) as other_group:
        manifests_apply([document("example.com/v1", "PodGroup")])

    assert same_group.value.reason.endswith("use scheduling.x-k8s.io/v1alpha1")
    assert other_group.value.reason.endswith(
        "use scheduling.x-k8s.io/v1alpha1 or scheduling.sigs.k8s.io/v1alpha1 or scheduling.volcano.sh/v1beta1"
        " or scheduling.run.ai/v2alpha2 or scheduling.k8s.io/v1alpha2"
    )


def test_the_field_carries_the_documents_path():
    good = document("scheduling.x-k8s.io/v1alpha1", "PodGroup")
    items = [good, {**document("apps/v1beta9", "Deployment"), "metadata": {"name": "d", "namespace": "ns"}}]
    with pytest.raises(DeclarationError) as in_list:
        manifests_apply([{"apiVersion": "v1", "kind": "List", "items": items}])
    with pytest.raises(DeclarationError) as second_document:
        manifests_apply([good, document("batch/v9", "Job")])

    assert in_list.value.field == "items[1].apiVersion"
    assert second_document.value.field == "documents[1].apiVersion"
    assert not Gang.objects.exists()


@pytest.mark.parametrize(("api_version", "kind"), list(OBJECTS))
def test_every_listed_version_reaches_its_kinds_reader(api_version, kind):
    """Whatever a minimal object lacks, the refusal (if any) is about its content, not its type."""
    try:
        manifest_load(Manifest("", document(api_version, kind)))
    except DeclarationError as error:
        assert error.field not in ("apiVersion", "kind"), error


def test_an_unknown_kind_is_still_refused_naming_kind():
    with pytest.raises(DeclarationError) as error:
        manifests_apply([document("v1", "Secret")])
    assert error.value.field == "kind" and "does not read Secret of v1" in error.value.reason


def test_a_config_map_other_than_yunikorns_is_refused_naming_its_name():
    """Only YuniKorn's ``yunikorn-configs`` ConfigMap is read (its queues.yaml)."""
    with pytest.raises(DeclarationError) as error:
        manifests_apply([document("v1", "ConfigMap")])
    assert (
        error.value.field == "metadata.name" and "only the ConfigMap yunikorn-configs" in error.value.reason
    )


def test_the_docs_list_exactly_the_accepted_versions():
    """docs/declaring-gangs.md's table is the registry's: a version added or removed there must be
    documented."""
    rows = [
        f"| {kind} | {', '.join(f'`{version}`' for version in api_versions(kind))} |"
        for kind in dict.fromkeys(kind for _, kind in OBJECTS)
    ]
    expected = "\n".join(["| Kind | apiVersion |", "|---|---|", *rows])
    text = DECLARING.read_text()
    assert expected in text, f"docs/declaring-gangs.md's apiVersion table should read:\n{expected}"
    documented = re.search(r"\| Kind \| apiVersion \|\n\|---\|---\|\n((?:\|.*\|\n)+)", text)
    assert documented and documented.group(1).rstrip("\n").splitlines() == rows


def test_the_older_scheduler_plugins_group_is_read_as_its_podgroup():
    """scheduler-plugins served PodGroup in scheduling.sigs.k8s.io before scheduling.x-k8s.io;
    its pods carry the older label, which names it."""
    group = {**document("scheduling.sigs.k8s.io/v1alpha1", "PodGroup"), "spec": {"minMember": 2}}
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"w-{i}",
                "namespace": "ns",
                "labels": {"pod-group.scheduling.sigs.k8s.io": "x"},
            },
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        }
        for i in range(2)
    ]
    result = manifests_apply([group, *pods])

    assert result.lines[0] == "podgroup.scheduling.sigs.k8s.io/x created"
    gang = Gang.objects.get(namespace="ns", name="x")
    assert gang.min_member == 2 and not gang.provisional and gang.members.count() == 2
