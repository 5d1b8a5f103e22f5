"""Every rejection names the field and the reason, and leaves nothing behind."""

import json

import pytest
from django.test import override_settings

from scheduler_core.declarations import DeclarationError, documents_parse, manifests_apply
from scheduler_core.models import Gang, GangGroup, Member

from .conftest import apply_text

pytestmark = pytest.mark.django_db

KOORD = "gang.scheduling.koordinator.sh/"


def podgroup(name="pg", namespace="ns", **spec):
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minMember": 1, **spec},
    }


def pod(name="p", annotations=None, requests=None):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "annotations": annotations or {}},
        "spec": {
            "schedulerName": "gangsched",
            "containers": [{"name": "c", "resources": {"requests": requests or {"cpu": "1"}}}],
        },
    }


def refused(documents) -> DeclarationError:
    with pytest.raises(DeclarationError) as error:
        manifests_apply(documents)
    assert not Gang.objects.exists() and not Member.objects.exists() and not GangGroup.objects.exists()
    return error.value


@pytest.mark.parametrize(
    ("name", "namespace", "field"),
    [
        ("Trainer", "ns", "metadata.name"),
        ("a_b", "ns", "metadata.name"),
        ("-a", "ns", "metadata.name"),
        ("a" * 64, "ns", "metadata.name"),  # one label over 63
        ("a" * 254, "ns", "metadata.name"),
        ("pg", "Team-A", "metadata.namespace"),
        ("pg", "n" * 64, "metadata.namespace"),
        ("pg", "a.b", "metadata.namespace"),
    ],
)
def test_names_follow_rfc_1123(name, namespace, field):
    error = refused([podgroup(name, namespace)])
    assert error.field == field


def test_a_dotted_name_of_short_labels_is_fine():
    manifests_apply([podgroup("a.b-c.d")])
    assert Gang.objects.filter(name="a.b-c.d").exists()


def test_a_koordinator_gang_name_must_be_rfc_1123():
    error = refused([pod(annotations={KOORD + "name": "Bad_Name", KOORD + "min-available": "1"})])
    assert error.field == "metadata.annotations.gang.scheduling.koordinator.sh/name"


@pytest.mark.parametrize("value", [0, -1, 10_001, "3", True, 2.0, None])
def test_min_member_is_an_integer_between_1_and_the_maximum(value):
    error = refused([podgroup(minMember=value)])
    assert error.field == "spec.minMember"


@pytest.mark.parametrize(
    "value", ["0", "-2", "1_000", " 2", "２", "2.5", "", "10001", "99999999999999999999"]
)
def test_min_available_annotation_is_a_plain_integer_in_range(value):
    error = refused([pod(annotations={KOORD + "name": "g", KOORD + "min-available": value})])
    assert error.field == "metadata.annotations.gang.scheduling.koordinator.sh/min-available"


def test_min_member_cannot_exceed_the_members_declared():
    error = refused(
        [pod(annotations={KOORD + "name": "g", KOORD + "min-available": "3", KOORD + "total-number": "2"})]
    )
    assert error.field.endswith("total-number") and "below min-available" in error.reason
    job = {
        "apiVersion": "gangsched.io/v1",
        "kind": "GangJob",
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": {"minAvailable": 3, "tasks": [{"name": "t", "replicas": 2, "template": pod()}]},
    }
    error = refused([job])
    assert error.field == "spec.minAvailable" and "more than the job's 2 pods" in error.reason


def test_more_pods_than_total_number_are_refused():
    annotations = {KOORD + "name": "g", KOORD + "min-available": "1"}
    error = refused([pod("a", annotations), pod("b", annotations)])
    assert "expects 1 members in all" in error.reason


@override_settings(GANGSCHED_MAX_GANG_MEMBERS=5)
def test_replicas_are_capped():
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns"},
        "spec": {"replicas": 6, "template": pod()},
    }
    assert refused([deployment]).field == "spec.replicas"


@pytest.mark.parametrize(
    "quantity",
    [
        "NaN",
        "nan",
        "Infinity",
        "inf",
        "-Infinity",
        "1_000",
        "1e999999999",
        "-1",
        "1.5.5",
        "",
        "1 Gi",
        "0x10",
        True,
    ],
)
def test_quantities_follow_the_kubernetes_grammar_and_are_finite_and_non_negative(quantity):
    error = refused([pod(requests={"cpu": quantity})])
    assert error.field == "spec.containers[0].resources.requests.cpu"


def test_quantities_are_capped():
    error = refused([pod(requests={"memory": "300Ti"})])
    assert error.field == "spec.containers[0].resources.requests.memory" and "too large" in error.reason
    error = refused([podgroup(minResources={"cpu": "1e15"})])
    assert error.field == "spec.minResources.cpu"


@pytest.mark.parametrize("value", [-5, 7 * 24 * 3600 + 1, "60", 1.5, False])
def test_schedule_timeout_is_positive_and_bounded(value):
    assert refused([podgroup(scheduleTimeoutSeconds=value)]).field == "spec.scheduleTimeoutSeconds"


def test_a_schedule_timeout_of_0_is_the_default_wait():
    """mpi-operator writes 0 on the PodGroup it makes when the MPIJob sets no timeout
    (kubeflow/mpi-operator ``pkg/controller/podgroup.go``, ``newPodGroup``): the plugin's default."""
    manifests_apply([podgroup(scheduleTimeoutSeconds=0)])
    assert Gang.objects.get().wait_seconds == 60


@pytest.mark.parametrize("value", ["0s", "-5s", "forever", "8d", "200h", "5", "1e3s", ""])
def test_koordinator_waiting_time_is_a_positive_bounded_duration(value):
    annotations = {KOORD + "name": "g", KOORD + "min-available": "1", KOORD + "waiting-time": value}
    if value == "5":  # bare seconds are accepted
        manifests_apply([pod(annotations=annotations)])
        return
    assert refused([pod(annotations=annotations)]).field.endswith("waiting-time")


def test_unknown_mode_and_style_are_refused():
    annotations = {KOORD + "name": "g", KOORD + "min-available": "1", KOORD + "mode": "strict"}
    error = refused([pod(annotations=annotations)])
    assert error.field.endswith("/mode") and "Strict, NonStrict" in error.reason
    annotations = {
        "yunikorn.apache.org/task-group-name": "a",
        "yunikorn.apache.org/task-groups": '[{"name": "a", "minMember": 1}]',
        "yunikorn.apache.org/schedulingPolicyParameters": "gangSchedulingStyle=Medium",
    }
    doc = pod(annotations=annotations)
    doc["metadata"]["labels"] = {"applicationId": "app"}
    error = refused([doc])
    assert error.field.endswith("schedulingPolicyParameters.gangSchedulingStyle")


def test_an_over_size_manifest_is_refused():
    with override_settings(GANGSCHED_MAX_MANIFEST_BYTES=100):
        with pytest.raises(DeclarationError, match="over the limit of 100 bytes"):
            documents_parse("x" * 101)
        with pytest.raises(DeclarationError, match="over the limit"):
            manifests_apply([podgroup(), podgroup("pg2")])


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("- a\n- b\n", "documents[0]"),
        ("just text\n", "documents[0]"),
        ("kind: Pod\n", "documents[0].apiVersion"),
        ("apiVersion: v1\n", "documents[0].kind"),
        ("apiVersion: v1\nkind: Pod\n---\n42\n", "documents[1]"),
        ("apiVersion: v1\nkind: List\nitems: [1]\n", "items[0]"),
    ],
)
def test_each_document_must_be_a_mapping_with_api_version_and_kind(text, field):
    with pytest.raises(DeclarationError) as error:
        manifests_apply(documents_parse(text))
    assert error.value.field == field


@pytest.mark.parametrize(
    "text",
    [
        '{"apiVersion": "v1", "kind": "Pod", "x": NaN}',
        "a: &a [*a, *a]\nb: [&b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]]\n"
        + "".join(f"c{i}: &c{i} [{', '.join(['*b' if i == 0 else f'*c{i - 1}'] * 10)}]\n" for i in range(8)),
        "[" * 100_000,
        "a: [b\n",
    ],
)
def test_malformed_text_is_refused(text):
    with pytest.raises(DeclarationError):
        documents_parse(text)


def test_yaml_dates_stay_strings():
    (doc,) = documents_parse("apiVersion: v1\nkind: Pod\nmetadata: {annotations: {day: 2026-01-02}}\n")
    assert doc["metadata"]["annotations"]["day"] == "2026-01-02"


def test_an_unknown_kind_is_refused_naming_it():
    error = refused([{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}])
    assert error.field == "kind" and "Widget of example.com/v1" in error.reason


def test_a_list_whose_last_item_is_bad_creates_nothing():
    items = [
        podgroup("a"),
        pod("a-0"),
        pod(annotations={KOORD + "name": "g", KOORD + "min-available": "NaN"}),
    ]
    error = refused([{"apiVersion": "v1", "kind": "List", "items": items}])
    assert error.field == "items[2].metadata.annotations.gang.scheduling.koordinator.sh/min-available"


def test_a_conflict_found_while_writing_also_rolls_back():
    manifests_apply([pod("taken")])
    with pytest.raises(DeclarationError) as error:
        manifests_apply(
            [
                podgroup("new"),
                {
                    **pod("taken"),
                    "metadata": {
                        **pod("taken")["metadata"],
                        "labels": {"scheduling.x-k8s.io/pod-group": "new"},
                    },
                },
            ]
        )
    assert "already exists with no gang" in error.value.reason
    assert not Gang.objects.exists() and Member.objects.count() == 1


def test_annotations_must_be_strings():
    error = refused([pod(annotations={KOORD + "name": "g", KOORD + "min-available": 2})])
    assert error.field == "metadata.annotations.gang.scheduling.koordinator.sh/min-available"
    assert "quote it" in error.reason


def test_two_pods_declaring_one_gang_differently_are_refused():
    a = pod("a", {KOORD + "name": "g", KOORD + "min-available": "1", KOORD + "total-number": "2"})
    b = pod("b", {KOORD + "name": "g", KOORD + "min-available": "2"})
    assert "differently" in refused([a, b]).reason


def test_bad_task_groups_json_is_refused():
    doc = pod(
        annotations={"yunikorn.apache.org/task-group-name": "a", "yunikorn.apache.org/task-groups": "[{"}
    )
    doc["metadata"]["labels"] = {"applicationId": "app"}
    assert refused([doc]).field == "metadata.annotations.yunikorn.apache.org/task-groups"


def test_error_text_names_field_and_reason():
    with pytest.raises(DeclarationError) as error:
        apply_text(json.dumps(podgroup(minMember=0)))
    assert str(error.value) == "spec.minMember: 0 is out of range: must be between 1 and 10000"


@pytest.mark.parametrize("key", [1, None, True])
def test_a_label_key_must_be_a_string(key):
    document = pod()
    document["metadata"]["labels"] = {key: "a"}
    error = refused([document])
    assert error.field == f"metadata.labels.{key}" and "a key must be a string" in error.reason
