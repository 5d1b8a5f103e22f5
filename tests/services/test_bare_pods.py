"""Deleting a bare Pod deletes it; its replacement (a new name) joins its gang under the gang's
match-policy; pods a workload owns are still recreated by their gang's restart policy.

Driven through the real database and scheduling path: manifests applied as ``manage.py apply``
does, cycles (``cycle_run``), kubelet ticks, ``pod_delete`` and the reconciliation sweep.
"""

import json

import pytest

from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.declarations.validate import DeclarationError
from scheduler_core.models import Gang, Member
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.delete import pod_delete
from scheduler_core.services.kubelet import kubelet_tick
from scheduler_core.services.reconcile import reconcile
from tests.kwok.conftest import manage, manage_json, write

pytestmark = pytest.mark.django_db

POD_SPEC = {
    "schedulerName": "gangsched",
    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
}
NODES = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi"}},
    }
    for name in ("n1", "n2")
]
KOORDINATOR = "gang.scheduling.koordinator.sh/"


def pod(name: str, **metadata) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", **metadata},
        "spec": POD_SPEC,
    }


def koordinator_annotations(min_available: int = 3, policy: str | None = None) -> dict[str, str]:
    annotations = {KOORDINATOR + "name": "train", KOORDINATOR + "min-available": str(min_available)}
    annotations[KOORDINATOR + "total-number"] = "3"
    return annotations | ({KOORDINATOR + "match-policy": policy} if policy else {})


def koordinator(*names: str, policy: str | None = None) -> list[dict]:
    return [pod(name, annotations=koordinator_annotations(policy=policy)) for name in names]


def podgroup(min_member: int) -> dict:
    metadata = {"name": "train", "namespace": "ml"}
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": metadata,
        "spec": {"minMember": min_member},
    }


def podgroup_pod(name: str, **metadata) -> dict:
    return pod(name, labels={"scheduling.x-k8s.io/pod-group": "train"}, **metadata)


def kueue_pod(name: str) -> dict:
    labels = {"kueue.x-k8s.io/pod-group-name": "train"}
    return pod(name, labels=labels, annotations={"kueue.x-k8s.io/pod-group-total-count": "3"})


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    """Applying wakes the scheduler on commit; the tests run the cycles themselves."""
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: True)


def apply(*items: dict) -> list[str]:
    return manifests_apply(list(items)).lines


def run() -> None:
    """One scheduling cycle, then the kubelets start what was bound."""
    cycle_run(holder="test")
    kubelet_tick()


def running(*items: dict) -> Gang:
    manifests_apply(NODES)
    apply(*items)
    run()
    gang = Gang.objects.get(namespace="ml", name="train")
    assert gang.phase == "Running" and gang.satisfied, gang.message
    assert set(gang.members.values_list("phase", flat=True)) == {"Running"}
    return gang


def node_of(name: str) -> str | None:
    return Member.objects.get(namespace="ml", name=name).node


def test_a_deleted_bare_member_is_gone_and_its_replacement_binds_at_once():
    """Koordinator's default once-satisfied: the replacement passes at once (Koordinator
    ``pkg/scheduler/plugins/coscheduling/core/core_test.go`` TestPermit, "pod3 belongs to gangA
    that doesn't have enough assumed pods, but once satisfied")."""
    gang = running(*koordinator("worker-1", "worker-2", "worker-3"))
    too_many = r"expects 3 members in all \(total-number\), but would have 4"
    with pytest.raises(DeclarationError, match=too_many):
        apply(*koordinator("worker-4"))  # three pods exist: a fourth is one too many

    assert pod_delete(namespace="ml", name="worker-1", by="alice") == "removed"
    assert not Member.objects.filter(name="worker-1").exists()
    event = gang.events.filter(kind="configured").get()  # the gang's history says who
    assert event.details == {"by": "alice", "podsDeleted": ["worker-1"]}
    run()
    reconcile()  # the sweep does not take the gang below minMember for a partial one
    gang.refresh_from_db()
    assert gang.satisfied and gang.phase == "Running"
    assert not Member.objects.filter(name="worker-1").exists()  # nobody recreated it
    assert sorted(gang.members.filter(phase="Running").values_list("name", flat=True)) == [
        "worker-2",
        "worker-3",
    ]

    assert "pod/worker-4 created" in apply(*koordinator("worker-4"))
    assert Member.objects.get(name="worker-4").gang == gang
    run()
    assert node_of("worker-4") is not None
    assert set(gang.members.values_list("phase", flat=True)) == {"Running"}


@pytest.mark.parametrize(
    ("policy", "deleted", "replacements", "binds"),
    [
        # Koordinator's documented example (docs/proposals/scheduling/20220901-gang-scheduling.md,
        # "Gang Match Policy"): with one member left running, a new pod binds under
        # once-satisfied and waits under waiting-and-running.
        ("once-satisfied", 2, 1, True),
        ("waiting-and-running", 2, 1, False),
        # TestPermit: "... but with Running pods is enough, matchPolicy waiting-and-running".
        ("waiting-and-running", 1, 1, True),
        # TestPermit: "... once satisfied, but matchPolicy not once satisfied" (only-waiting).
        ("only-waiting", 1, 1, False),
        ("only-waiting", 3, 3, True),
    ],
)
def test_a_replacement_binds_as_the_match_policy_says(policy, deleted, replacements, binds):
    gang = running(*koordinator("worker-1", "worker-2", "worker-3", policy=policy))
    assert gang.match_policy == policy
    for index in range(1, deleted + 1):
        assert pod_delete(namespace="ml", name=f"worker-{index}") == "removed"
    new = [f"worker-{4 + index}" for index in range(replacements)]
    apply(*koordinator(*new, policy=policy))
    run()
    assert all((node_of(name) is not None) == binds for name in new)
    gang.refresh_from_db()
    assert gang.satisfied and gang.phase == "Running"  # the members left keep running
    assert gang.members.filter(phase="Running").count() == 3 - deleted + (replacements if binds else 0)
    if not binds:  # too few members count for the policy: the gang says it waits for more
        assert gang.reason == "WaitingForMembers", gang.message
        assert Member.objects.filter(name__in=new, phase="Pending", node__isnull=True).count() == replacements


def test_only_waiting_places_min_available_new_members_together():
    gang = running(*koordinator("worker-1", "worker-2", "worker-3", policy="only-waiting"))
    pod_delete(namespace="ml", name="worker-1")
    apply(*koordinator("worker-4", policy="only-waiting"))
    run()
    gang.refresh_from_db()
    assert node_of("worker-4") is None
    assert "match-policy only-waiting" in gang.message
    pod_delete(namespace="ml", name="worker-2")
    pod_delete(namespace="ml", name="worker-3")
    apply(*koordinator("worker-5", "worker-6", policy="only-waiting"))
    run()
    assert all(node_of(f"worker-{i}") for i in (4, 5, 6))


def test_a_match_policy_that_koordinator_does_not_know_is_refused_naming_it():
    field = r"annotations\.gang\.scheduling\.koordinator\.sh/match-policy"
    with pytest.raises(DeclarationError, match=field + r".*'sometimes' is not one of once-satisfied"):
        apply(*koordinator("worker-1", policy="sometimes"))
    assert not Member.objects.exists()


def test_a_scheduler_plugins_pod_group_replacement_binds_when_bound_and_new_reach_min_member():
    """scheduler-plugins' Permit counts the pods already assigned to the group with the new one
    (``pkg/coscheduling/core/core_test.go`` TestPermit, "pod belongs to a pg that have quorum
    satisfied"): waiting-and-running."""
    gang = running(podgroup(3), *(podgroup_pod(f"worker-{i}") for i in (1, 2, 3)))
    assert gang.match_policy == "waiting-and-running"
    assert pod_delete(namespace="ml", name="worker-1") == "removed"
    apply(podgroup_pod("worker-4"))
    run()
    assert node_of("worker-4") is not None  # 2 running + 1 new reach minMember 3
    pod_delete(namespace="ml", name="worker-2")
    pod_delete(namespace="ml", name="worker-3")
    apply(podgroup_pod("worker-5"))
    run()
    assert node_of("worker-5") is None  # 1 running + 1 new do not


def test_a_kueue_pod_group_replacement_joins_the_admitted_group_at_once():
    """Kueue does not recreate a group's pods, their creator does, and the replacement joins the
    admitted group (Kueue docs, tasks/run/plain_pods.md, "Feature limitations")."""
    gang = running(*(kueue_pod(f"worker-{i}") for i in (1, 2, 3)))
    assert pod_delete(namespace="ml", name="worker-2") == "removed"
    assert "pod/worker-4 created" in apply(kueue_pod("worker-4"))
    run()
    assert node_of("worker-4") is not None
    assert gang.members.filter(phase="Running").count() == 3


def template(**metadata) -> dict:
    return {"metadata": metadata, "spec": POD_SPEC}


def workload(api_version: str, kind: str, spec: dict) -> dict:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": spec,
    }


VCJOB = workload(
    "batch.volcano.sh/v1alpha1",
    "Job",
    {
        "minAvailable": 2,
        "schedulerName": "gangsched",
        "tasks": [{"name": "w", "replicas": 3, "template": template()}],
    },
)
GANGJOB = workload(
    "gangsched.io/v1",
    "GangJob",
    {"minAvailable": 2, "tasks": [{"name": "w", "replicas": 3, "template": template()}]},
)
JOB = workload(
    "batch/v1",
    "Job",
    {"parallelism": 3, "template": template(annotations=koordinator_annotations(min_available=2))},
)
STATEFULSET = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "name": "train",
    "uid": "u1",
    "controller": True,
}


@pytest.mark.parametrize(
    ("items", "owner"),
    [
        ([VCJOB], "job.batch.volcano.sh/train"),
        ([GANGJOB], "gangjob.gangsched.io/train"),
        ([JOB], "job.batch/train"),
        (
            [podgroup(2), *(podgroup_pod(f"train-{i}", ownerReferences=[STATEFULSET]) for i in (0, 1, 2))],
            "statefulset.apps/train",
        ),
    ],
    ids=["vcjob", "gangjob", "job", "pod-with-a-controller"],
)
def test_a_member_its_workload_owns_is_recreated_under_its_name(items, owner):
    gang = running(*items)
    victim = gang.members.order_by("name").first()
    assert victim.owner == owner
    assert pod_delete(namespace="ml", name=victim.name) == "replaced"
    recreated = Member.objects.get(pk=victim.pk)
    assert (recreated.name, recreated.phase, recreated.node) == (victim.name, "Pending", None)
    run()
    assert node_of(victim.name) is not None
    assert gang.members.filter(phase="Running").count() == 3


def yaml_list(items: list[dict]) -> str:
    """A ``kind: List`` file (JSON is YAML)."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2)


def test_cli_delete_a_bare_member_then_apply_its_replacement(tmp_path):
    """As a user drives it: ``apply -f``, ``delete pod``, ``get pods -o json``, ``apply -f``."""
    manage("apply", "-f", write(tmp_path, yaml_list(NODES), "nodes.yaml"))
    manage(
        "apply",
        "-f",
        write(tmp_path, yaml_list(koordinator("worker-1", "worker-2", "worker-3")), "gang.yaml"),
    )
    run()
    assert manage("delete", "pod", "ml/worker-1").strip() == 'pod "worker-1" deleted from ml namespace'
    run()
    listed = {pod["name"]: pod["phase"] for pod in manage_json("get", "pods", "-n", "ml")}
    assert listed == {"worker-2": "Running", "worker-3": "Running"}

    replacement = write(tmp_path, yaml_list(koordinator("worker-4")), "worker-4.yaml")
    assert "pod/worker-4 created" in manage("apply", "-f", replacement)
    run()
    listed = {pod["name"]: pod["phase"] for pod in manage_json("get", "pods", "-n", "ml")}
    assert listed == {"worker-2": "Running", "worker-3": "Running", "worker-4": "Running"}
    (gang,) = manage_json("get", "gangs", "-n", "ml")
    assert (gang["name"], gang["state"]) == ("train", "Running")
