"""Kueue's WorkloadPriorityClass (kueue.x-k8s.io v1beta1 / v1beta2) and the label
``kueue.x-k8s.io/priority-class`` that gives a Kueue workload its value.

Re-expressed from Kueue (github.com/kubernetes-sigs/kueue): the sample objects of
site/static/examples/priority/ (sample-priority-class.yaml and the Job labelled with it, written
here by hand); keps/973-workload-priority/README.md ("How workloads are created from Jobs": with
both, the class gives the workload's priority and the PriorityClass the pods'; "What happens when
a user changes the priority": existing workloads keep theirs); pkg/util/priority/priority_test.go
(a class that exists gives its value, one that does not is an error) and
pkg/controller/jobframework/reconciler.go ``ExtractPriority`` (the label's class first, the
pods' PriorityClass only without it)."""

import importlib

import pytest
from django.contrib.auth.models import Group
from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.models import Gang, Member, WorkloadPriorityClass

from .conftest import apply_text
from .queues.test_pod_queues import pod
from .test_jobset import jobset
from .test_kubeflow import pytorch
from .test_kueue_job import QUEUE, gang_of, job
from .test_mpijob import mpijob
from .test_volcano import run

pytestmark = pytest.mark.django_db

LABEL = "kueue.x-k8s.io/priority-class"
SAMPLE_CLASS = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: sample-priority
value: 10000
description: "Sample priority"
"""
SAMPLE_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: sample-job
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue
    kueue.x-k8s.io/priority-class: sample-priority
spec:
  parallelism: 3
  completions: 3
  template:
    spec:
      containers:
      - name: dummy-job
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        resources: {requests: {cpu: "1", memory: "200Mi"}}
      restartPolicy: Never
"""


def wpc(name: str, value, version: str = "v1beta2", **extra) -> dict:
    return {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": name},
        "value": value,
        **extra,
    }


def labelled_job(name: str, wpc_name: str, **template) -> dict:
    manifest = job(name, labels={QUEUE: "main", LABEL: wpc_name})
    manifest["spec"]["template"]["spec"].update(template)
    return manifest


def test_the_sample_class_and_a_job_naming_it_apply_in_one_file(tmp_path):
    path = tmp_path / "priority.yaml"
    path.write_text(SAMPLE_CLASS + "---\n" + SAMPLE_JOB)

    out = run("apply", "-f", str(path))

    assert "workloadpriorityclass.kueue.x-k8s.io/sample-priority created" in out
    row = WorkloadPriorityClass.objects.get(name="sample-priority")
    assert (row.value, row.description) == (10000, "Sample priority")
    gang = gang_of("default", "sample-job")
    assert (gang.priority, gang.queue, gang.min_member) == (10000, "user-queue", 3)
    # The workload's priority, not the pods': they keep their own (no class: 0).
    assert set(gang.members.values_list("priority", flat=True)) == {0}
    assert "workloadpriorityclass.kueue.x-k8s.io/sample-priority unchanged" in run("apply", "-f", str(path))


def test_the_class_wins_over_the_pods_priority_class_which_the_pods_keep():
    """The KEP's first scenario (both given) and ``ExtractPriority``: with the label, the
    template's priorityClassName does not count for the workload; the pods still get it."""
    manifests_apply([wpc("batch", 50), labelled_job("train", "batch", priorityClassName="high")])
    gang = gang_of("ml", "train")
    assert gang.priority == 50
    assert set(gang.members.values_list("priority", flat=True)) == {1000}


def test_workload_priority_class_names_are_apart_from_priority_class_names():
    """A label names a WorkloadPriorityClass only: ``high`` here is the class of value 5, not
    the PriorityClass ``high`` (1000, gangsched's default) the template names."""
    manifests_apply([wpc("high", 5), labelled_job("a", "high", priorityClassName="high")])
    assert gang_of("ml", "a").priority == 5
    assert Member.objects.get(name="a-0").priority == 1000
    with pytest.raises(DeclarationError) as error:
        manifests_apply([labelled_job("b", "low")])  # "low" is a PriorityClass only
    assert "unknown WorkloadPriorityClass 'low'" in error.value.reason


def test_an_unknown_class_is_refused_naming_the_label_and_the_class():
    """priority_test.go: a class that does not exist is an error, here before anything is written."""
    manifests_apply([wpc("gold", 900)])
    with pytest.raises(DeclarationError) as error:
        manifests_apply([labelled_job("train", "platinum")])
    assert error.value.field == f"metadata.labels.{LABEL}"
    assert "unknown WorkloadPriorityClass 'platinum'" in error.value.reason
    assert "known: gold" in error.value.reason
    assert not Gang.objects.exists() and not Member.objects.exists()


def test_an_empty_label_names_no_class():
    """Kueue's ``WorkloadPriorityClassName`` reads an empty label as none."""
    manifests_apply([labelled_job("train", "", priorityClassName="high")])
    assert gang_of("ml", "train").priority == 1000


def test_a_changed_class_or_label_reconfigures_on_the_next_apply():
    """The KEP: changing a class changes the workloads made from then on, an existing one keeps
    its value; the label is mutable (pkg/controller/constants ``WorkloadPriorityClassLabel``),
    so re-applying the Job with another class gives its gang that class's value."""
    manifests_apply([wpc("a", 10), wpc("b", 20), labelled_job("train", "a")])
    result = manifests_apply([wpc("a", 11, description="raised")])
    assert result.lines == ["workloadpriorityclass.kueue.x-k8s.io/a configured"]
    assert gang_of("ml", "train").priority == 10
    manifests_apply([labelled_job("train", "b")])
    assert gang_of("ml", "train").priority == 20
    manifests_apply([labelled_job("train", "a")])
    assert gang_of("ml", "train").priority == 11


def test_delete_f_removes_the_class(tmp_path):
    path = tmp_path / "class.yaml"
    path.write_text(SAMPLE_CLASS)
    run("apply", "-f", str(path))

    out = run("delete", "-f", str(path))

    assert 'workloadpriorityclass.kueue.x-k8s.io "sample-priority" deleted' in out
    assert not WorkloadPriorityClass.objects.exists()
    with pytest.raises(CommandError, match='"sample-priority" not found'):
        run("delete", "-f", str(path))


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"value": None}, "value", "must be an integer"),
        ({"value": "10"}, "value", "not the string"),
        ({"value": 2**31}, "value", "out of range"),
        ({"description": 7}, "description", "must be a string"),
        ({"metadata": {"name": "Not_A_Name"}}, "metadata.name", ""),
    ],
)
def test_bad_classes_are_refused_naming_the_field(change, field, words):
    with pytest.raises(DeclarationError) as error:
        manifests_apply([{**wpc("c", 1), **change}])
    assert (error.value.field, words in error.value.reason) == (field, True)
    assert not WorkloadPriorityClass.objects.exists()


def test_a_jobset_takes_the_class_of_its_label():
    """Kueue's jobset integration builds its workload with the same ``ExtractPriority``."""
    manifests_apply([wpc("prod", 300), jobset(labels={QUEUE: "main", LABEL: "prod"})])
    assert gang_of("ml", "js").priority == 300


def test_kueues_kubeflow_job_takes_the_class_before_its_scheduling_policy():
    """Kueue's kubeflow integration: ``PriorityClass()`` (schedulingPolicy.priorityClass) is the
    fallback of ``ExtractPriority``, the label's class comes first."""
    labelled = pytorch(run_policy="{schedulingPolicy: {priorityClass: high}}").replace(
        "namespace: ns}", f"namespace: ns, labels: {{{QUEUE}: team, {LABEL}: dev}}}}"
    )
    apply_text(SAMPLE_CLASS.replace("sample-priority", "dev").replace("10000", "7") + "---\n" + labelled)
    assert Gang.objects.get(namespace="ns", name="train").priority == 7


def test_kueues_mpijob_takes_the_class_before_its_templates_priority_class():
    """The KEP's "How to use WorkloadPriorityClass on MPIJob": the MPIJob's label; without
    Kueue's queue label the MPIJob is not Kueue's and the label means nothing."""
    labelled = mpijob(policy={"priorityClass": "high"})
    labelled["metadata"]["labels"] = {QUEUE: "user-queue", LABEL: "sample-priority"}
    apply_text(SAMPLE_CLASS)
    manifests_apply([labelled])
    assert gang_of("ml", "test").priority == 10000
    plain = mpijob("plain", policy={"priorityClass": "high"})
    plain["metadata"]["labels"] = {LABEL: "no-such-class"}
    manifests_apply([plain])
    assert gang_of("ml", "plain").priority == 1000


def pod_group_pod(name: str, labels: dict) -> dict:
    group = {"kueue.x-k8s.io/pod-group-name": "etl", **labels}
    return pod(name, group, {"kueue.x-k8s.io/pod-group-total-count": "2"})


def test_a_plain_pod_groups_pods_carry_the_label_and_must_agree_on_it():
    """Kueue's pod integration builds the group's workload through ``ExtractPriority`` too."""
    labels = {QUEUE: "team-a-queue", LABEL: "etl-priority"}
    pods = [pod_group_pod("etl-0", labels), pod_group_pod("etl-1", labels)]
    manifests_apply([wpc("etl-priority", 42), *pods])
    assert gang_of("team-a", "etl").priority == 42
    assert set(Member.objects.values_list("priority", flat=True)) == {0}
    other = [pod_group_pod("etl-0", labels), pod_group_pod("etl-1", {QUEUE: "team-a-queue"})]
    with pytest.raises(DeclarationError, match="declares gang team-a/etl differently"):
        manifests_apply(other)


def test_operators_see_and_edit_the_classes_in_the_admin(olga):
    manifests_apply([wpc("gold", 900)])
    browser = Client()
    browser.force_login(olga)
    changelist = browser.get("/admin/scheduler_core/workloadpriorityclass/")
    assert changelist.status_code == 200 and b"gold" in changelist.content
    add = "/admin/scheduler_core/workloadpriorityclass/add/"
    refused = browser.post(add, {"name": "Not_A_Name", "value": "1", "description": ""})
    assert refused.status_code == 200 and refused.context["adminform"].form.errors["name"]
    assert browser.post(add, {"name": "silver", "value": "500", "description": ""}).status_code == 302
    assert WorkloadPriorityClass.objects.get(name="silver").value == 500


def test_the_data_migration_grants_the_operators_the_classes_and_takes_them_back():
    """Run against the migration's own historical models, forward, backward and forward again."""
    name = "0010_operators_manage_workload_priority"
    operation = importlib.import_module(f"dashboard.migrations.{name}").Migration.operations[0]
    historical = MigrationExecutor(connection).loader.project_state(("dashboard", name)).apps

    def granted() -> set[str]:
        group = Group.objects.filter(name="operators").first()
        codenames = group.permissions.values_list("codename", flat=True) if group else []
        return {codename for codename in codenames if codename.endswith("_workloadpriorityclass")}

    operation.code(historical, None)
    assert granted() == {f"{verb}_workloadpriorityclass" for verb in ("add", "change", "delete", "view")}
    operation.reverse_code(historical, None)
    assert granted() == set()
    operation.code(historical, None)
    assert "change_workloadpriorityclass" in granted()
