"""Node feasibility must agree with kube-scheduler node for node, or gangs bind where pods then fail."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.engine.filters import EXCLUSION_REASONS, NodeFilter, constraint_key, tolerates
from scheduler_core.engine.model import (
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
)

CORDON = "node.kubernetes.io/unschedulable"


def make_node(
    name: str,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Taint] = (),
    unschedulable: bool = False,
    ready: bool = True,
) -> Node:
    return Node(
        name=name,
        allocatable={"cpu": 4000},
        labels=dict(labels or {}),
        taints=tuple(taints),
        unschedulable=unschedulable,
        ready=ready,
    )


def make_pod(
    name: str = "p",
    node_selector: Mapping[str, str] | None = None,
    tolerations: Sequence[Toleration] = (),
    affinity: Sequence[NodeSelectorTerm] = (),
) -> Pod:
    return Pod(
        namespace="ns",
        name=name,
        requests={"cpu": 100},
        node_selector=dict(node_selector or {}),
        tolerations=tuple(tolerations),
        affinity=tuple(affinity),
    )


def term(*requirements: tuple[str, str, tuple[str, ...]]) -> NodeSelectorTerm:
    return NodeSelectorTerm(tuple(NodeSelectorRequirement(k, op, vals) for k, op, vals in requirements))


def cases(*rows: tuple) -> list:
    """Table rows whose first element is a readable case name, used as the test id."""
    return [pytest.param(*rest, id=name) for name, *rest in rows]


def admitted(nodes: Sequence[Node], pod: Pod) -> list[str]:
    mask = NodeFilter(nodes).mask(pod)
    return [node.name for node, ok in zip(nodes, mask, strict=True) if ok]


# --- node affinity -------------------------------------------------------------------------------

LABELLED = (
    make_node("a3", {"zone": "a", "gen": "3"}),
    make_node("b10", {"zone": "b", "gen": "10"}),
    make_node("bare"),
    make_node("ax", {"zone": "a", "gen": "x"}),
    make_node("c-neg", {"zone": "c", "gen": "-7"}),
)
ALL_LABELLED = [n.name for n in LABELLED]


@pytest.mark.parametrize(
    ("requirement", "expected"),
    cases(
        ("In matches a listed value", ("zone", "In", ("a",)), ["a3", "ax"]),
        ("In matches any of several values", ("zone", "In", ("a", "b")), ["a3", "b10", "ax"]),
        ("In with a value no node has matches nothing", ("zone", "In", ("z",)), []),
        ("In on a key no node has matches nothing", ("rack", "In", ("1",)), []),
        ("NotIn matches a node without the label", ("zone", "NotIn", ("a",)), ["b10", "bare", "c-neg"]),
        ("NotIn on a key no node has matches every node", ("rack", "NotIn", ("1",)), ALL_LABELLED),
        ("Exists matches every node with the key", ("zone", "Exists", ()), ["a3", "b10", "ax", "c-neg"]),
        ("DoesNotExist matches nodes without the key", ("zone", "DoesNotExist", ()), ["bare"]),
        ("DoesNotExist on a key no node has matches every node", ("rack", "DoesNotExist", ()), ALL_LABELLED),
        ("Gt compares integers, not strings", ("gen", "Gt", ("5",)), ["b10"]),
        ("Lt compares integers and parses negative labels", ("gen", "Lt", ("5",)), ["a3", "c-neg"]),
        ("Gt skips missing and non-integer labels", ("gen", "Gt", ("0",)), ["a3", "b10"]),
        ("Lt with leading zeros", ("gen", "Lt", ("0010",)), ["a3", "c-neg"]),
        ("Gt on a key no node has matches nothing", ("rack", "Gt", ("1",)), []),
        # Requirements labels.NewRequirement rejects void their term, so they match no node.
        ("Lt with a negative value matches nothing (not a valid label value)", ("gen", "Lt", ("-1",)), []),
        ("Gt with a non-integer value matches nothing", ("gen", "Gt", ("1.5",)), []),
        ("Gt with two values matches nothing", ("gen", "Gt", ("1", "2")), []),
        ("Lt without a value matches nothing", ("gen", "Lt", ()), []),
        ("In without values matches nothing", ("zone", "In", ()), []),
        ("NotIn without values matches nothing", ("zone", "NotIn", ()), []),
        ("Exists with values matches nothing", ("zone", "Exists", ("a",)), []),
        ("DoesNotExist with values matches nothing", ("zone", "DoesNotExist", ("a",)), []),
        ("an unknown operator matches nothing", ("zone", "Equals", ("a",)), []),
        ("an invalid key matches nothing", ("bad key", "DoesNotExist", ()), []),
        ("an invalid value matches nothing", ("zone", "NotIn", ("a b",)), []),
    ),
)
def test_affinity_operator(requirement: tuple[str, str, tuple[str, ...]], expected: list[str]) -> None:
    assert admitted(LABELLED, make_pod(affinity=[term(requirement)])) == expected


@pytest.mark.parametrize(
    ("terms", "expected"),
    cases(
        ("no terms is no constraint", [], ALL_LABELLED),
        ("terms are ORed", [term(("zone", "In", ("a",))), term(("zone", "In", ("b",)))], ["a3", "b10", "ax"]),
        ("requirements in a term are ANDed", [term(("zone", "In", ("a",)), ("gen", "Lt", ("5",)))], ["a3"]),
        ("an empty term matches nothing", [NodeSelectorTerm()], []),
        ("an empty term leaves the other terms", [NodeSelectorTerm(), term(("zone", "In", ("b",)))], ["b10"]),
        (
            "one invalid requirement voids its whole term",
            [term(("zone", "In", ("a",)), ("gen", "Gt", ("x",)))],
            [],
        ),
        (
            "an invalid term leaves the other terms",
            [term(("gen", "Gt", ("x",))), term(("zone", "In", ("c",)))],
            ["c-neg"],
        ),
    ),
)
def test_affinity_terms(terms: list[NodeSelectorTerm], expected: list[str]) -> None:
    assert admitted(LABELLED, make_pod(affinity=terms)) == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    cases(
        ("an empty selector admits every node", {}, ALL_LABELLED),
        ("one key must equal the label", {"zone": "a"}, ["a3", "ax"]),
        ("every key must equal its label", {"zone": "a", "gen": "3"}, ["a3"]),
        ("a key no node has admits nothing", {"rack": "1"}, []),
        ("a value no node has admits nothing", {"zone": "z"}, []),
        ("values are compared as strings", {"gen": "03"}, []),
    ),
)
def test_node_selector(selector: dict[str, str], expected: list[str]) -> None:
    assert admitted(LABELLED, make_pod(node_selector=selector)) == expected


def test_selector_and_affinity_both_apply() -> None:
    pod = make_pod(node_selector={"zone": "a"}, affinity=[term(("gen", "Lt", ("5",)))])
    assert admitted(LABELLED, pod) == ["a3"]


# --- taints and tolerations ----------------------------------------------------------------------

TAINTED = (
    make_node("clean"),
    make_node("gpu-ns", taints=[Taint("gpu", "true", "NoSchedule")]),
    make_node("gpu-ne", taints=[Taint("gpu", "true", "NoExecute")]),
    make_node("gpu-prefer", taints=[Taint("gpu", "true", "PreferNoSchedule")]),
    make_node("gpu-other", taints=[Taint("gpu", "false", "NoSchedule")]),
    make_node("novalue", taints=[Taint("dedicated", "", "NoSchedule")]),
    make_node("two", taints=[Taint("gpu", "true", "NoSchedule"), Taint("spot", "yes", "NoExecute")]),
)


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    cases(
        ("without tolerations only PreferNoSchedule is ignored", [], ["clean", "gpu-prefer"]),
        (
            "Equal with key and value, any effect",
            [Toleration("gpu", "Equal", "true")],
            ["clean", "gpu-ns", "gpu-ne", "gpu-prefer"],
        ),
        (
            "an empty operator means Equal",
            [Toleration("gpu", "", "true")],
            ["clean", "gpu-ns", "gpu-ne", "gpu-prefer"],
        ),
        ("Equal needs the same value", [Toleration("gpu", "Equal", "other")], ["clean", "gpu-prefer"]),
        (
            "Exists ignores the value",
            [Toleration("gpu", "Exists")],
            ["clean", "gpu-ns", "gpu-ne", "gpu-prefer", "gpu-other"],
        ),
        (
            "an effect only tolerates that effect",
            [Toleration("gpu", "Exists", effect="NoSchedule")],
            ["clean", "gpu-ns", "gpu-prefer", "gpu-other"],
        ),
        (
            "a NoExecute toleration does not tolerate NoSchedule",
            [Toleration("gpu", "Exists", effect="NoExecute")],
            ["clean", "gpu-ne", "gpu-prefer"],
        ),
        (
            "an empty key with Exists tolerates everything",
            [Toleration("", "Exists")],
            [n.name for n in TAINTED],
        ),
        (
            "an empty key with Equal tolerates every taint with that value (ToleratesTaint's quirk)",
            [Toleration("", "Equal", "")],
            ["clean", "gpu-prefer", "novalue"],
        ),
        ("an unknown operator tolerates nothing", [Toleration("gpu", "Gt", "true")], ["clean", "gpu-prefer"]),
        (
            "every filtering taint on a node must be tolerated",
            [Toleration("gpu", "Equal", "true"), Toleration("spot", "Exists", effect="NoExecute")],
            ["clean", "gpu-ns", "gpu-ne", "gpu-prefer", "two"],
        ),
    ),
)
def test_taints(tolerations: list[Toleration], expected: list[str]) -> None:
    assert admitted(TAINTED, make_pod(tolerations=tolerations)) == expected


CORDONED = (make_node("open"), make_node("cordoned", unschedulable=True))


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    cases(
        ("a cordoned node is excluded", [], ["open"]),
        (
            "the unschedulable taint tolerated with Exists",
            [Toleration(CORDON, "Exists")],
            ["open", "cordoned"],
        ),
        (
            "the unschedulable taint tolerated with Exists and NoSchedule",
            [Toleration(CORDON, "Exists", effect="NoSchedule")],
            ["open", "cordoned"],
        ),
        ("the unschedulable taint tolerated with an empty value", [Toleration(CORDON)], ["open", "cordoned"]),
        ("a wildcard toleration", [Toleration("", "Exists")], ["open", "cordoned"]),
        (
            "a NoExecute toleration is not enough",
            [Toleration(CORDON, "Exists", effect="NoExecute")],
            ["open"],
        ),
        ("a toleration with a value is not enough", [Toleration(CORDON, "Equal", "true")], ["open"]),
    ),
)
def test_unschedulable(tolerations: list[Toleration], expected: list[str]) -> None:
    assert admitted(CORDONED, make_pod(tolerations=tolerations)) == expected


def test_not_ready_nodes_are_excluded_whatever_the_pod_tolerates() -> None:
    nodes = (make_node("ready"), make_node("not-ready", ready=False))
    assert admitted(nodes, make_pod()) == ["ready"]
    assert admitted(nodes, make_pod(tolerations=[Toleration("", "Exists")])) == ["ready"]


def test_tolerates_matches_kubernetes_for_the_unschedulable_taint() -> None:
    taint = Taint(CORDON, "", "NoSchedule")
    assert tolerates(Toleration(CORDON, "Exists"), taint)
    assert not tolerates(Toleration("other", "Exists"), taint)


# --- explanations, caching, shapes ---------------------------------------------------------------

MIXED = (
    make_node("good", {"zone": "a", "gen": "3"}),
    make_node("down", {"zone": "a"}, ready=False, unschedulable=True),  # counted once, as not_ready
    make_node("cordoned", {"zone": "a"}, unschedulable=True),
    make_node("tainted", {"zone": "a"}, taints=[Taint("gpu", "true")]),
    make_node("elsewhere-1", {"zone": "b"}),
    make_node("elsewhere-2", {"zone": "b"}, taints=[Taint("gpu", "true", "PreferNoSchedule")]),
    make_node("old", {"zone": "a", "gen": "1"}),
)


def test_excluded_by_counts_each_node_under_its_first_failing_filter() -> None:
    pod = make_pod(node_selector={"zone": "a"}, affinity=[term(("gen", "Gt", ("2",)))])
    node_filter = NodeFilter(MIXED)
    counts = node_filter.excluded_by(pod)
    assert counts == {"not_ready": 1, "unschedulable": 1, "taints": 1, "node_selector": 2, "affinity": 1}
    assert list(counts) == [reason for reason in EXCLUSION_REASONS if reason in counts]
    assert sum(counts.values()) == len(MIXED) - int(node_filter.mask(pod).sum())


def test_excluded_by_omits_zero_counts() -> None:
    assert NodeFilter(MIXED).excluded_by(make_pod(node_selector={"zone": "b"})) == {
        "not_ready": 1,
        "unschedulable": 1,
        "taints": 1,
        "node_selector": 2,
    }
    assert NodeFilter((make_node("n"),)).excluded_by(make_pod()) == {}


def test_pods_with_equal_constraints_share_one_cached_mask() -> None:
    tolerations = [Toleration("gpu", "Exists"), Toleration(CORDON, "Exists")]
    first = make_pod("first", {"zone": "a", "gen": "3"}, tolerations, [term(("gen", "Lt", ("5",)))])
    second = make_pod("second", {"gen": "3", "zone": "a"}, tolerations[::-1], [term(("gen", "Lt", ("5",)))])
    assert constraint_key(first) == constraint_key(second)
    node_filter = NodeFilter(MIXED)
    assert node_filter.mask(first) is node_filter.mask(second)
    other = make_pod("other", {"zone": "a"}, tolerations)
    assert constraint_key(other) != constraint_key(first)
    assert not np.array_equal(node_filter.mask(other), node_filter.mask(first))


def test_masks_are_read_only_bool_arrays_in_node_order() -> None:
    mask = NodeFilter(MIXED).mask(make_pod(tolerations=[Toleration("", "Exists")]))
    assert mask.dtype == np.bool_
    assert mask.shape == (len(MIXED),)
    assert mask.tolist() == [True, False, True, True, True, True, True]
    with pytest.raises(ValueError, match="read-only"):
        mask[0] = False


def test_no_nodes() -> None:
    node_filter = NodeFilter(())
    pod = make_pod(node_selector={"zone": "a"}, affinity=[term(("gen", "Gt", ("1",)))])
    assert node_filter.mask(pod).shape == (0,)
    assert node_filter.excluded_by(pod) == {}


# --- property: the vectorised filter agrees with a per-node reference ---------------------------

_GO_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_LABEL_CHARS = set(string.ascii_letters + string.digits)


def reference_is_int(text: str) -> int | None:
    if not _GO_INT.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def reference_label_value_ok(value: str) -> bool:
    if value == "":
        return True
    inner_ok = all(c in _LABEL_CHARS or c in "-_." for c in value)
    return len(value) <= 63 and inner_ok and value[0] in _LABEL_CHARS and value[-1] in _LABEL_CHARS


def reference_tolerates(toleration: Toleration, taint: Taint) -> bool:
    effect_ok = toleration.effect in ("", taint.effect)
    key_ok = toleration.key in ("", taint.key)
    if toleration.operator == "Exists":
        value_ok = True
    elif toleration.operator in ("Equal", ""):
        value_ok = toleration.value == taint.value
    else:
        value_ok = False
    return effect_ok and key_ok and value_ok


def reference_requirement_valid(req: NodeSelectorRequirement) -> bool:
    # The generated keys are all valid, so only operators and values need checking here.
    if not all(reference_label_value_ok(v) for v in req.values):
        return False
    if req.operator in ("In", "NotIn"):
        return len(req.values) >= 1
    if req.operator in ("Exists", "DoesNotExist"):
        return not req.values
    if req.operator in ("Gt", "Lt"):
        return len(req.values) == 1 and reference_is_int(req.values[0]) is not None
    return False


def reference_requirement_matches(req: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    has = req.key in labels
    if req.operator == "In":
        return has and labels[req.key] in req.values
    if req.operator == "NotIn":
        return not has or labels[req.key] not in req.values
    if req.operator == "Exists":
        return has
    if req.operator == "DoesNotExist":
        return not has
    if not has:
        return False
    label, bound = reference_is_int(labels[req.key]), reference_is_int(req.values[0])
    if label is None or bound is None:
        return False
    return label > bound if req.operator == "Gt" else label < bound


def reference_admits(node: Node, pod: Pod) -> bool:
    if not node.ready:
        return False
    if node.unschedulable and not any(
        reference_tolerates(t, Taint(CORDON, "", "NoSchedule")) for t in pod.tolerations
    ):
        return False
    for taint in node.taints:
        if taint.effect != "PreferNoSchedule" and not any(
            reference_tolerates(t, taint) for t in pod.tolerations
        ):
            return False
    if any(node.labels.get(key) != value for key, value in pod.node_selector.items()):
        return False
    if not pod.affinity:
        return True
    return any(
        bool(t.match_expressions)
        and all(reference_requirement_valid(r) for r in t.match_expressions)
        and all(reference_requirement_matches(r, node.labels) for r in t.match_expressions)
        for t in pod.affinity
    )


KEYS = ("zone", "gen", "example.com/tier")
VALUES = ("a", "b", "", "1", "2", "10", "007", "-3", "x")
REQUIREMENT_VALUES = (*VALUES, "+4", "1.5", "-1", "a b")

labels_st = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
taint_st = st.builds(
    Taint,
    key=st.sampled_from(("gpu", "spot")),
    value=st.sampled_from(("", "v")),
    effect=st.sampled_from(("NoSchedule", "NoExecute", "PreferNoSchedule")),
)
node_st = st.builds(
    make_node,
    name=st.just("n"),
    labels=labels_st,
    taints=st.lists(taint_st, max_size=2),
    unschedulable=st.sampled_from((False, False, False, True)),
    ready=st.sampled_from((True, True, True, False)),
)
toleration_st = st.builds(
    Toleration,
    key=st.sampled_from(("", "gpu", "spot", CORDON)),
    operator=st.sampled_from(("Equal", "Exists", "", "Bogus")),
    value=st.sampled_from(("", "v", "w")),
    effect=st.sampled_from(("", "NoSchedule", "NoExecute", "PreferNoSchedule")),
)
requirement_key_st = st.sampled_from((*KEYS, "missing"))
well_formed_requirement_st = st.one_of(
    st.builds(
        NodeSelectorRequirement,
        key=requirement_key_st,
        operator=st.sampled_from(("In", "NotIn")),
        values=st.lists(st.sampled_from(VALUES), min_size=1, max_size=2).map(tuple),
    ),
    st.builds(
        NodeSelectorRequirement,
        key=requirement_key_st,
        operator=st.sampled_from(("Exists", "DoesNotExist")),
    ),
    st.builds(
        NodeSelectorRequirement,
        key=requirement_key_st,
        operator=st.sampled_from(("Gt", "Lt")),
        values=st.sampled_from(("0", "1", "2", "10", "007")).map(lambda value: (value,)),
    ),
)
arbitrary_requirement_st = st.builds(
    NodeSelectorRequirement,
    key=requirement_key_st,
    operator=st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus")),
    values=st.lists(st.sampled_from(REQUIREMENT_VALUES), max_size=2).map(tuple),
)
# Mostly well-formed, so that terms are often valid and their matching gets exercised.
requirement_st = st.one_of(well_formed_requirement_st, well_formed_requirement_st, arbitrary_requirement_st)
term_st = st.builds(NodeSelectorTerm, match_expressions=st.lists(requirement_st, max_size=3).map(tuple))
pod_st = st.builds(
    make_pod,
    node_selector=st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2),
    tolerations=st.lists(toleration_st, max_size=3),
    affinity=st.lists(term_st, max_size=3),
)


# Pods and nodes that differ only in labels, or only in taints, so that every example exercises
# one filter's matching instead of being decided by whichever other filter happens to fail first.
labelled_node_st = st.builds(make_node, name=st.just("n"), labels=labels_st)
affinity_pod_st = st.builds(
    make_pod,
    node_selector=st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=1),
    affinity=st.lists(term_st, max_size=3),
)
tainted_node_st = st.builds(
    make_node, name=st.just("n"), taints=st.lists(taint_st, max_size=2), unschedulable=st.booleans()
)
toleration_pod_st = st.builds(make_pod, tolerations=st.lists(toleration_st, max_size=3))


def check_against_reference(nodes: list[Node], pods: list[Pod]) -> None:
    node_filter = NodeFilter(nodes)
    for pod in pods + pods:  # the second pass is answered from the caches
        expected = [reference_admits(node, pod) for node in nodes]
        assert node_filter.mask(pod).tolist() == expected
        counts = node_filter.excluded_by(pod)
        assert sum(counts.values()) == expected.count(False)
        assert all(count > 0 for count in counts.values())


@settings(max_examples=300, deadline=None)
@given(nodes=st.lists(node_st, max_size=12), pods=st.lists(pod_st, min_size=1, max_size=4))
def test_mask_agrees_with_a_per_node_reference(nodes: list[Node], pods: list[Pod]) -> None:
    check_against_reference(nodes, pods)


@settings(max_examples=300, deadline=None)
@given(nodes=st.lists(labelled_node_st, max_size=12), pods=st.lists(affinity_pod_st, min_size=1, max_size=4))
def test_label_matching_agrees_with_a_per_node_reference(nodes: list[Node], pods: list[Pod]) -> None:
    check_against_reference(nodes, pods)


@settings(max_examples=300, deadline=None)
@given(nodes=st.lists(tainted_node_st, max_size=12), pods=st.lists(toleration_pod_st, min_size=1, max_size=4))
def test_toleration_matching_agrees_with_a_per_node_reference(nodes: list[Node], pods: list[Pod]) -> None:
    check_against_reference(nodes, pods)
