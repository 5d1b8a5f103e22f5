"""KAI-Scheduler's PodGroup (scheduling.run.ai/v2alpha2): KAI's own manifests from its docs, the
fields mapped, subGroups as a gang group of per-subgroup gangs, refusals, delete -f, tenancy, and
one scheduling cycle.

The manifests under manifests/kai/ are KAI's, each naming its source file at its top.
"""

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.declarations.documents import documents_parse
from scheduler_core.models import Gang, Member, Node
from scheduler_core.services.cycle import cycle_run
from scheduler_core.snapshot.build import build_snapshot
from tests.api.conftest import as_bob  # noqa: F401  (an API client)
from tests.cast import pod_manifest

from .conftest import OWN, apply_text

pytestmark = pytest.mark.django_db

KAI = OWN / "kai"
POD_GROUP_NAME, SUBGROUP = "pod-group-name", "kai.scheduler/subgroup-name"
TOPOLOGY = """
apiVersion: kai.scheduler/v1alpha1
kind: Topology
metadata: {name: cluster-topology}
spec:
  levels:
  - {nodeLabel: topology/zone}
  - {nodeLabel: topology/spine}
  - {nodeLabel: topology/rack}
"""


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def text(name: str) -> str:
    return (KAI / name).read_text()


def corrected(name: str) -> str:
    """A multilevel.md example with its ``subgroups`` key spelt as KAI's CRD spells it."""
    return text(name).replace("  subgroups:", "  subGroups:")


def podgroup(spec: str, name: str = "pg", namespace: str = "ns") -> str:
    return (
        f"apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\n"
        f"metadata: {{name: {name}, namespace: {namespace}}}\nspec: {spec}\n"
    )


def kai_pod(name: str, group: str = "pg", subgroup: str | None = None, **kwargs) -> dict:
    labels = {SUBGROUP: subgroup} if subgroup is not None else {}
    return pod_manifest(name, labels=labels, annotations={POD_GROUP_NAME: group}, **kwargs)


def gangs() -> dict[str, Gang]:
    return {gang.key: gang for gang in Gang.objects.select_related("group")}


# ---------------------------------------------------------------- KAI's own manifests


def test_the_podgroup_kais_podgrouper_makes_for_a_pod_loads_unmodified():
    """docs/operator/scheduling-shards.md: the PodGroup KAI creates for its gpu-pod, and the pod,
    annotated ``pod-group-name`` as KAI's podgrouper annotates it (pkg/podgrouper/pod_controller.go)."""
    run("apply", "-f", str(KAI / "priority-classes.yaml"))
    out = run("apply", "-f", str(KAI / "shards-podgroup.yaml"))
    name = "pg-gpu-pod-d81e6f2c-8da7-4e61-8758-d8a2c38d2bfb"
    assert f"podgroup.scheduling.run.ai/{name} created" in out
    gang = Gang.objects.get(namespace="test", name=name)
    assert (gang.min_member, gang.queue, gang.priority, gang.source_format) == (
        1,
        "foo-queue-test",
        50,  # KAI's train class
        "kai-podgroup",
    )
    assert gang.preemptible and gang.wait_seconds is None and gang.group is None

    (pod,) = documents_parse(text("shards-pod.yaml"))
    pod["metadata"]["annotations"] = {POD_GROUP_NAME: name}
    manifests_apply([pod])
    member = Member.objects.get(name="gpu-pod")
    assert member.gang == gang and member.requests == {"nvidia.com/gpu": 1}
    assert "unchanged" in run("apply", "-f", str(KAI / "shards-podgroup.yaml"))


def test_multilevel_examples_as_written_are_refused_naming_their_subgroups_key():
    """docs/topology/multilevel.md writes ``subgroups``, a key KAI's CRD (podgroup_types.go) does
    not have: kubectl refuses it as an unknown field, and so does gangsched, saying what to write."""
    apply_text(text("priority-classes.yaml"))
    for name in ("multilevel-sample1.yaml", "multilevel-sample2.yaml"):
        with pytest.raises(DeclarationError) as error:
            apply_text(text(name))
        assert error.value.field == "documents[0].spec.subgroups"
        assert "write subGroups" in error.value.reason
    assert not Gang.objects.exists() and not Member.objects.exists()


def test_independent_subgroups_are_one_gang_each_in_one_gang_group():
    """multilevel.md "Example: Independent Subgroup Constraints" (subgroups spelt subGroups):
    subgroup-a (minMember 2) and subgroup-b (3), each required within one rack; KAI starts the
    PodGroup when each subgroup has its minimum (job_info.go IsReadyForScheduling)."""
    apply_text(text("priority-classes.yaml") + "---\n" + TOPOLOGY)
    result = apply_text(corrected("multilevel-sample1.yaml"))

    assert result.lines[0] == "podgroup.scheduling.run.ai/sample1 created"
    found = gangs()
    assert sorted(found) == ["default/sample1-subgroup-a", "default/sample1-subgroup-b"]
    a, b = found["default/sample1-subgroup-a"], found["default/sample1-subgroup-b"]
    assert (a.min_member, b.min_member) == (2, 3)
    assert a.group == b.group and a.group.key == "default/sample1"
    assert a.group.members == ["default/sample1-subgroup-a", "default/sample1-subgroup-b"]
    for gang in (a, b):
        assert (gang.queue, gang.priority, gang.preemptible) == ("test", 125, False)  # inference
        assert (gang.topology_required, gang.topology_preferred, gang.topology_name) == (
            "topology/rack",
            "",
            "cluster-topology",
        )
    assert [m.name for m in a.members.all()] == ["pod-a1"]
    assert [m.name for m in b.members.all()] == ["pod-b1"]


def test_hierarchical_subgroups_make_a_gang_of_each_leaf_with_the_nearest_constraint():
    """multilevel.md "Advanced Example": subgroup-ab is a parent (KAI's SubGroupSet,
    subgroup_info/factory.go), not a gang; the leaves a, b, c are; each keeps its own rack
    constraint. A leaf without one takes its parent's, then the PodGroup's."""
    apply_text(text("priority-classes.yaml") + "---\n" + TOPOLOGY)
    apply_text(corrected("multilevel-sample2.yaml"))
    found = gangs()
    assert sorted(found) == [f"default/sample2-subgroup-{x}" for x in "abc"]
    assert [found[f"default/sample2-subgroup-{x}"].min_member for x in "abc"] == [1, 2, 3]
    assert {gang.topology_required for gang in found.values()} == {"topology/rack"}
    assert {gang.group.key for gang in found.values()} == {"default/sample2"}

    Gang.objects.all().delete()
    Member.objects.all().delete()
    rack = '        {}TopologyLevel: "topology/rack"\n'
    without_leaf_constraints = corrected("multilevel-sample2.yaml").replace(
        rack.format("required"), rack.format("preferred"), 1
    )
    lines = without_leaf_constraints.split("\n")
    # subgroup-c loses its constraint entirely: it takes the PodGroup's zone.
    start = lines.index("    - name: subgroup-c")
    del lines[start + 2 : start + 5]
    apply_text("\n".join(lines))
    found = gangs()
    a, b, c = (found[f"default/sample2-subgroup-{x}"] for x in "abc")
    assert (a.topology_required, a.topology_preferred) == ("", "topology/rack")  # its own
    assert b.topology_required == "topology/rack"
    assert (c.topology_required, c.topology_name) == ("topology/zone", "cluster-topology")


def test_a_leaf_without_a_constraint_takes_its_parents():
    apply_text(TOPOLOGY)
    apply_text(
        podgroup(
            "{subGroups: [{name: ab, topologyConstraint: {requiredTopologyLevel: topology/spine}},"
            " {name: a, parent: ab}, {name: b, parent: ab, minMember: 2}]}"
        )
    )
    found = gangs()
    assert sorted(found) == ["ns/pg-a", "ns/pg-b"]
    assert {(g.min_member, g.topology_required) for g in found.values()} == {
        (1, "topology/spine"),
        (2, "topology/spine"),
    }


# ---------------------------------------------------------------- fields


def test_fields_map_to_the_gang():
    apply_text(text("priority-classes.yaml") + "---\n" + TOPOLOGY)
    apply_text(
        podgroup(
            "{minMember: 3, queue: research, priorityClassName: build, topologyConstraint:"
            " {requiredTopologyLevel: topology/spine, preferredTopologyLevel: topology/rack,"
            " topology: cluster-topology}, parallelism: 3, completions: 3, backoffLimit: 1,"
            " markUnschedulable: true, schedulingBackoff: 1}"
        )
    )
    gang = Gang.objects.get(name="pg")
    assert (gang.min_member, gang.queue, gang.priority) == (3, "research", 100)
    assert not gang.preemptible  # KAI: no preemptibility, a class of 100 or more
    assert (gang.topology_required, gang.topology_preferred, gang.topology_name) == (
        "topology/spine",
        "topology/rack",
        "cluster-topology",
    )
    assert gang.declaration["spec"]["backoffLimit"] == 1  # kept, not acted on


@pytest.mark.parametrize(
    ("spec", "preemptible"),
    [
        ("{priorityClassName: inference, preemptibility: preemptible}", True),
        ("{priorityClassName: train, preemptibility: non-preemptible}", False),
        ("{priorityClassName: build}", False),
        ("{priorityClassName: build-preemptible}", True),
        ("{}", True),
    ],
)
def test_preemptibility_is_explicit_or_follows_the_priority_class(spec, preemptible):
    """KAI's pkg/common/podgroup/preemptible.go CalculatePreemptibility and the examples of
    docs/developer/designs/priority-preemptibility-separation/README.md: explicit wins; else a
    priority below 100 is preemptible."""
    apply_text(text("priority-classes.yaml"))
    apply_text(podgroup(spec))
    assert Gang.objects.get(name="pg").preemptible is preemptible


def test_minmember_defaults_to_one_and_the_queue_to_the_pods():
    """KAI reads an unset minMember as 1 (job_info.go setSubGroups, max(minMember, 1)); a PodGroup
    naming no queue is in the queue its pods' kai.scheduler/queue label names."""
    pods = [kai_pod("w-0")]
    pods[0]["metadata"]["labels"] = {"kai.scheduler/queue": "team"}
    manifests_apply([*documents_parse(podgroup("{}")), *pods])
    gang = Gang.objects.get(name="pg")
    assert (gang.min_member, gang.queue) == (1, "team")


def test_a_pod_before_its_podgroup_waits_and_says_why():
    manifests_apply([kai_pod("w-0"), kai_pod("w-1")])
    gang = Gang.objects.get(name="pg")
    assert gang.provisional and gang.message == "waiting for PodGroup ns/pg (scheduling.run.ai) to be created"
    assert build_snapshot().gangs == ()
    apply_text(podgroup("{minMember: 2}"))
    gang.refresh_from_db()
    assert not gang.provisional and gang.min_member == 2 and gang.members.count() == 2


def test_a_pod_whose_queue_disagrees_with_the_podgroups_is_refused():
    pod = kai_pod("w-0")
    pod["metadata"]["labels"] = {"kai.scheduler/queue": "other"}
    with pytest.raises(DeclarationError, match="queue 'other' but gang ns/pg is in queue 'research'"):
        manifests_apply([*documents_parse(podgroup("{queue: research}")), pod])


# ---------------------------------------------------------------- refusals

SUBGROUPS = "{subGroups: [{name: ab}, {name: a, parent: ab}, {name: b, parent: ab}, {name: c}]}"


@pytest.mark.parametrize(
    ("spec", "field", "words"),
    [
        # KAI pkg/apis/scheduling/v2alpha2/podgroup_webhook_test.go TestValidateSubGroups:
        ("{subGroups: [{name: a}, {name: a}]}", "spec.subGroups[1].name", "subgroup 'a' is declared twice"),
        ("{subGroups: [{name: a, parent: x}]}", "spec.subGroups[0].parent", "no subgroup is named 'x'"),
        ("{subGroups: [{name: a, parent: a}]}", "spec.subGroups[0].parent", "cycle: a -> a"),
        (
            "{subGroups: [{name: a, parent: c}, {name: b, parent: a}, {name: c, parent: b}]}",
            "spec.subGroups[0].parent",
            "cycle: a -> c -> b -> a",
        ),
        # KAI's CRD (deployments/kai-scheduler/crds/scheduling.run.ai_podgroups.yaml):
        ("{minMember: 0}", "spec.minMember", ""),
        ("{subGroups: [{name: a, minMember: 0}]}", "spec.subGroups[0].minMember", ""),
        ("{subGroups: [{minMember: 1}]}", "spec.subGroups[0].name", "non-empty string"),
        ("{preemptibility: sometimes}", "spec.preemptibility", "'sometimes' is not one of"),
        ("{subGroups: [{name: a, replicas: 2}]}", "spec.subGroups[0].replicas", "does not read this key"),
        ("{minSubGroup: 2}", "spec.minSubGroup", "does not read this key"),
        ("{topologyConstraint: {topology: t}}", "spec.topologyConstraint.topology", "no level"),
        (
            "{topologyConstraint: {requiredTopologyLevel: 'no key'}}",
            "spec.topologyConstraint.requiredTopologyLevel",
            "not a node-label key",
        ),
        ("{subGroups: [{name: Big}]}", "spec.subGroups[0].name", ""),
        ("{queue: 7}", "spec.queue", "non-empty string"),
    ],
)
def test_bad_podgroups_are_refused_naming_the_field(spec, field, words):
    with pytest.raises(DeclarationError) as error:
        manifests_apply(documents_parse(podgroup(spec)))
    assert error.value.field == field and words in error.value.reason
    assert not Gang.objects.exists()


@pytest.mark.parametrize(
    ("pod", "field", "words"),
    [
        (
            kai_pod("x", subgroup="z"),
            "metadata.labels.kai.scheduler/subgroup-name",
            "PodGroup ns/pg has no subgroup 'z' (its leaf subgroups: a, b, c)",
        ),
        (
            kai_pod("x", subgroup="ab"),
            "metadata.labels.kai.scheduler/subgroup-name",
            "subgroup 'ab' of PodGroup ns/pg has subgroups: name one of a, b, c",
        ),
        (
            kai_pod("x"),
            "metadata.annotations.pod-group-name",
            "PodGroup ns/pg has subGroups: label the pod kai.scheduler/subgroup-name: one of a, b, c",
        ),
    ],
)
def test_a_pod_naming_no_leaf_subgroup_is_refused_in_the_same_apply_or_later(pod, field, words):
    """KAI's scheduler drops a pod whose subgroup is no pod set of its PodGroup (job_info.go
    AddTaskInfo, "SubGroup not found"): it would never run, so gangsched says so."""
    with pytest.raises(DeclarationError) as error:
        manifests_apply([*documents_parse(podgroup(SUBGROUPS)), pod])
    assert (error.value.field, error.value.reason) == ("documents[1]." + field, words)
    assert not Gang.objects.exists()

    apply_text(podgroup(SUBGROUPS))
    with pytest.raises(DeclarationError) as error:
        manifests_apply([pod])
    assert (error.value.field, error.value.reason) == (field, words)
    assert not Member.objects.exists() and not Gang.objects.filter(provisional=True).exists()


def test_a_subgroup_label_on_a_pod_of_a_podgroup_without_subgroups_is_refused():
    with pytest.raises(DeclarationError) as error:
        manifests_apply([*documents_parse(podgroup("{minMember: 1}")), kai_pod("x", subgroup="a")])
    assert error.value.reason == "PodGroup ns/pg declares no subGroups"


def test_the_same_podgroup_may_not_name_another_gang_of_another_format():
    pod = kai_pod("x")
    pod["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": "other"}
    with pytest.raises(DeclarationError, match="a pod belongs to one gang"):
        manifests_apply([pod])


# ---------------------------------------------------------------- delete, tenancy


def test_delete_f_removes_the_podgroups_gangs_and_pods(tmp_path: Path):
    manifest = tmp_path / "pg.yaml"
    manifest.write_text(podgroup("{subGroups: [{name: a}, {name: b, minMember: 2}]}"))
    run("apply", "-f", str(manifest))
    manifests_apply([kai_pod("a-0", subgroup="a"), *(kai_pod(f"b-{i}", subgroup="b") for i in range(2))])
    assert Member.objects.count() == 3

    out = run("delete", "-f", str(manifest))

    assert out == 'podgroup.scheduling.run.ai "pg" deleted from ns namespace (3 pods)\n'
    assert not Gang.objects.exists() and not Member.objects.exists()


def test_another_submitters_podgroup_is_not_theirs_to_change_nor_to_read(as_alice, as_bob):  # noqa: F811
    body = podgroup(SUBGROUPS, namespace="team-a")
    assert as_alice.post("/api/v1/manifests/", body, content_type="application/yaml").status_code == 201
    other = body.replace("{name: c}", "{name: d}")
    response = as_bob.post("/api/v1/manifests/", other, content_type="application/yaml")
    assert response.status_code == 404
    joining = kai_pod("bob-0", subgroup="a", namespace="team-a")
    assert as_bob.post("/api/v1/manifests/", joining, format="json").status_code == 404
    # A subgroup alice's PodGroup lacks: bob is told nothing about it, his pod waits for a PodGroup.
    unknown = kai_pod("bob-1", subgroup="z", namespace="team-a")
    response = as_bob.post("/api/v1/manifests/", unknown, format="json")
    assert response.status_code == 201 and b"leaf subgroups" not in response.content
    assert Gang.objects.get(name="pg-z").provisional
    assert sorted(Gang.objects.filter(submitter="alice").values_list("name", flat=True)) == [
        "pg-a",
        "pg-b",
        "pg-c",
    ]


# ---------------------------------------------------------------- scheduling


def test_the_group_binds_only_when_every_subgroup_has_its_minimum():
    """KAI pkg/scheduler/api/podgroup_info/job_info_test.go TestPodGroupInfo_IsReadyForScheduling,
    "job with subgroups - one is not ready": sb-1 needs 2 and has 1, sb-2 needs 1 and has 1, so
    nothing starts; the second sb-1 pod makes it ready and all three bind together."""
    for index in range(2):
        Node.objects.create(name=f"n{index}", allocatable={"cpu": 4000, "memory": 16 * 2**30, "pods": 110})
    apply_text(podgroup("{subGroups: [{name: sb-1, minMember: 2}, {name: sb-2, minMember: 1}]}"))
    manifests_apply([kai_pod("task1", subgroup="sb-1"), kai_pod("task3", subgroup="sb-2")])

    cycle_run(holder="test")
    assert not Member.objects.filter(node__isnull=False).exists()

    manifests_apply([kai_pod("task2", subgroup="sb-1")])
    cycle_run(holder="test")
    assert Member.objects.filter(node__isnull=False).count() == 3
    assert set(Gang.objects.values_list("satisfied", flat=True)) == {True}
