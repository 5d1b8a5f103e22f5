"""Node affinity, tolerations and taints are bounded as the Kubernetes API server bounds them, and
each refusal names the element at fault (``node_constraints.py``).

Kubernetes' rules re-expressed: ``ValidateNodeSelectorRequirement`` and ``validateTolerations`` in
kubernetes/kubernetes pkg/apis/core/validation/validation.go (cases of
``TestValidateNodeSelectorRequirement``-style tables in validation_test.go: "must be specified
single value when `operator` is 'Lt' or 'Gt'", "value must be empty when `operator` is 'Exists'",
"effect must be 'NoExecute' when `tolerationSeconds` is set")."""

import pytest

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.models import Member, Node

pytestmark = pytest.mark.django_db

INT64_MAX = 2**63 - 1
AFFINITY = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


def pod(**spec) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {
            "schedulerName": "gangsched",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            **spec,
        },
    }


def requiring(*expressions: dict, **term) -> dict:
    terms = [{"matchExpressions": list(expressions), **term}]
    return pod(
        affinity={
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    )


def refused(document: dict) -> DeclarationError:
    with pytest.raises(DeclarationError) as error:
        manifests_apply([document])
    assert not Member.objects.exists()
    return error.value


@pytest.mark.parametrize("operator", ["Gt", "Lt"])
@pytest.mark.parametrize("value", ["0", "7", "007", str(INT64_MAX)])
def test_gt_and_lt_take_one_int64(operator, value):
    manifests_apply([requiring({"key": "gen", "operator": operator, "values": [value]})])
    [term] = Member.objects.get().affinity
    assert term["matchExpressions"] == [{"key": "gen", "operator": operator, "values": [value]}]


@pytest.mark.parametrize("operator", ["Gt", "Lt"])
@pytest.mark.parametrize(
    "value",
    [str(INT64_MAX + 1), "99999999999999999999999", "-1", "+1", "1.5", "1e3", "x", "", " 1", "1_000", "٣"],
)
def test_gt_and_lt_refuse_what_is_not_an_int64_label_value(operator, value):
    error = refused(requiring({"key": "gen", "operator": operator, "values": [value]}))
    assert error.field == f"{AFFINITY}[0].matchExpressions[0].values[0]"
    assert repr(value) in error.reason and "int64" in error.reason


@pytest.mark.parametrize("values", [[], ["1", "2"], None])
def test_gt_and_lt_take_exactly_one_value(values):
    expression = {"key": "gen", "operator": "Gt"} | ({} if values is None else {"values": values})
    error = refused(requiring({"key": "zone", "operator": "In", "values": ["a"]}, expression))
    assert error.field == f"{AFFINITY}[0].matchExpressions[1].values"
    assert "exactly one value" in error.reason


def test_a_value_must_be_a_string():
    error = refused(requiring({"key": "gen", "operator": "Gt", "values": [5]}))
    assert error.field == f"{AFFINITY}[0].matchExpressions[0].values[0]"
    assert error.reason == "must be a string (quote it in YAML), not an integer"


@pytest.mark.parametrize(
    ("expression", "where", "words"),
    [
        ({"key": "zone", "operator": "In"}, "values", "at least one value"),
        ({"key": "zone", "operator": "NotIn", "values": []}, "values", "at least one value"),
        ({"key": "zone", "operator": "Exists", "values": ["a"]}, "values", "must be empty"),
        ({"key": "zone", "operator": "DoesNotExist", "values": ["a"]}, "values", "must be empty"),
        ({"key": "zone", "operator": "Near", "values": ["a"]}, "operator", "'Near' is not one of In, NotIn"),
        ({"operator": "Exists"}, "key", "non-empty string"),
        ({"key": 7, "operator": "Exists"}, "key", "non-empty string"),
    ],
)
def test_each_operator_has_kubernetes_rules(expression, where, words):
    error = refused(requiring(expression))
    assert error.field == f"{AFFINITY}[0].matchExpressions[0].{where}"
    assert words in error.reason


def test_match_fields_are_refused_not_dropped():
    """Dropping a term that pins a node by name would let the pod run anywhere."""
    by_name = {"key": "metadata.name", "operator": "In", "values": ["node-1"]}
    error = refused(requiring(matchFields=[by_name]))
    assert error.field == f"{AFFINITY}[0].matchFields" and "not supported" in error.reason


@pytest.mark.parametrize("seconds", [0, 300, INT64_MAX, -(2**63)])
def test_toleration_seconds_is_an_int64(seconds):
    toleration = {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
    manifests_apply([pod(tolerations=[toleration])])
    assert Member.objects.get().tolerations == [toleration]


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (INT64_MAX + 1, "out of range"),
        (-(2**63) - 1, "out of range"),
        (10**30, "out of range"),
        ("300", "not the string '300'"),
        (1.5, "not 1.5"),
        (True, "not true"),
        ([300], "not a list"),
    ],
)
def test_toleration_seconds_out_of_int64_or_not_an_integer_is_refused(seconds, words):
    tolerations = [
        {"key": "a", "operator": "Exists"},
        {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds},
    ]
    error = refused(pod(tolerations=tolerations))
    assert error.field == "spec.tolerations[1].tolerationSeconds" and words in error.reason


@pytest.mark.parametrize(
    ("toleration", "where", "words"),
    [
        ({"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5}, "tolerationSeconds", "NoExecute"),
        ({"key": "k", "operator": "Exists", "value": "v"}, "value", "must be empty"),
        ({"key": "k", "operator": "Matches"}, "operator", "'Matches' is not one of Equal, Exists"),
        ({"key": "k", "effect": "NoRun"}, "effect", "'NoRun' is not one of NoSchedule"),
        ({"key": 1}, "key", "must be a string, not an integer"),
        ({"key": "k", "value": None, "effect": True}, "effect", "true is not one of"),
        ({"key": "k", "value": 2}, "value", "must be a string, not an integer"),
    ],
)
def test_a_bad_toleration_is_refused_naming_its_key(toleration, where, words):
    error = refused(pod(tolerations=[{"key": "ok"}, toleration]))
    assert error.field == f"spec.tolerations[1].{where}" and words in error.reason


def test_a_toleration_that_is_not_an_object_is_named():
    error = refused(pod(tolerations=["NoSchedule"]))
    assert error.field == "spec.tolerations[0]" and error.reason == "must be an object, not a string"


def test_a_yunikorn_task_groups_tolerations_are_checked_the_same_way():
    groups = '[{"name": "g", "minMember": 1, "tolerations": [{"key": "k", "tolerationSeconds": 5}]}]'
    document = pod()
    document["metadata"] |= {
        "labels": {"applicationId": "app"},
        "annotations": {
            "yunikorn.apache.org/task-group-name": "g",
            "yunikorn.apache.org/task-groups": groups,
        },
    }
    error = refused(document)
    assert error.field.endswith("task-groups[0].tolerations[0].tolerationSeconds")


def node(taints) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "spec": {"taints": taints},
        "status": {"allocatable": {"cpu": "4"}},
    }


@pytest.mark.parametrize(
    ("taint", "where", "words"),
    [
        ({"key": "", "effect": "NoSchedule"}, "key", "non-empty string"),
        ({"key": 5, "effect": "NoSchedule"}, "key", "non-empty string"),
        ({"key": "k", "value": 5, "effect": "NoSchedule"}, "value", "must be a string, not an integer"),
        ({"key": "k", "effect": "Sometimes"}, "effect", "'Sometimes' is not one of"),
    ],
)
def test_a_bad_taint_is_refused_naming_its_key(taint, where, words):
    with pytest.raises(DeclarationError) as error:
        manifests_apply([node([{"key": "gpu", "effect": "NoSchedule"}, taint])])
    assert error.value.field == f"spec.taints[1].{where}" and words in error.value.reason
    assert not Node.objects.exists()


def test_taints_keep_their_key_value_and_effect_only():
    manifests_apply([node([{"key": "gpu", "value": "a100", "effect": "NoSchedule", "timeAdded": "x"}])])
    assert Node.objects.get().taints == [{"key": "gpu", "value": "a100", "effect": "NoSchedule"}]
