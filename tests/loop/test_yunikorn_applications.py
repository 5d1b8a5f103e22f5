"""YuniKorn applications declared by their first pod, through apply and the scheduling cycle.

Each test re-expresses a case of YuniKorn's end-to-end gang tests, apache/yunikorn-k8shim
``test/e2e/gang_scheduling/gang_scheduling_test.go``, named in its docstring. The pods are applied
as ``manage.py apply`` does (``manifests_apply``) and scheduled by ``cycle_run`` against the
database and the simulated cluster; the placeholder timeout is reached by moving the
application's placeholder timer back, never by waiting.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.models import Gang, GangEvent, Member
from scheduler_core.services.cycle import cycle_run, timeouts_sweep
from scheduler_core.services.delete import gang_delete, pods_remove
from tests.cast import yunikorn_pod

from .factories import make_nodes

pytestmark = pytest.mark.django_db

APP = "app-0001"
TG = "yunikorn.apache.org/"


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: True)


def task_group(name: str, min_member: int, cpu: str = "1", **extra) -> dict:
    return {"name": name, "minMember": min_member, "minResource": {"cpu": cpu, "memory": "1Gi"}, **extra}


def app_pod(name: str, **declared) -> dict:
    return yunikorn_pod(name, app=APP, requests={"cpu": "1", "memory": "1Gi"}, **declared)


def placeholders(gang_name: str | None = None):
    members = Member.objects.filter(annotations__contains={TG + "placeholder": "true"})
    return members.filter(gang__name=gang_name) if gang_name else members


def gang(name: str) -> Gang:
    return Gang.objects.get(namespace="ns", name=name)


def time_passes(seconds: float) -> None:
    """The application's placeholder timer started ``seconds`` earlier than it did."""
    for row in Gang.objects.filter(application=APP, wait_started__isnull=False):
        Gang.objects.filter(pk=row.pk).update(wait_started=row.wait_started - timedelta(seconds=seconds))


def test_the_originator_pod_reserves_its_task_group_then_real_pods_replace_the_placeholders():
    """Verify_Annotation_TaskGroup_Def: one pod outside any task group carries the definition
    (groupa, minMember 5); 5 placeholders are created and allocated with it, the application runs;
    then 5 real pods of groupa are applied: the placeholders are gone and the real pods run."""
    make_nodes(2)  # 8 CPUs: the originator and 5 placeholders fit
    groups = [task_group("groupa", 5)]
    result = manifests_apply([app_pod("originator", groups=groups)])
    assert "gang ns/app-0001-groupa created" in result.lines and "gang ns/app-0001 created" in result.lines
    assert sorted(placeholders().values_list("name", flat=True)) == [
        f"tg-app-0001-groupa-{i}" for i in range(5)
    ]
    assert gang("app-0001").group.members == ["ns/app-0001", "ns/app-0001-groupa"]

    cycle_run(holder="test")
    assert placeholders().filter(node__isnull=False).count() == 5  # reserved at once
    assert Member.objects.get(name="originator").node is not None  # the application runs
    held = Counter(placeholders().values_list("node", flat=True))

    manifests_apply([app_pod(f"real-{i}", group="groupa") for i in range(5)])
    assert placeholders().count() == 5  # still held: the real pods take them over in the cycle
    cycle_run(holder="test")
    assert not placeholders().exists()
    real = Member.objects.filter(name__startswith="real-")
    assert real.filter(node__isnull=False).count() == 5
    assert Counter(real.values_list("node", flat=True)) == held  # each took a placeholder's node
    assert gang("app-0001-groupa").satisfied


def test_real_pods_of_several_task_groups_run_where_their_placeholders_were():
    """Verify_Multiple_TaskGroups_Nodes: three task groups reserved by the originator; the real
    pods of each task group are placed with the node distribution of that task group's
    placeholders."""
    make_nodes(3, cpu=4)
    groups = [task_group("groupa", 1, cpu="2"), task_group("groupb", 2), task_group("groupc", 3)]
    manifests_apply([app_pod("originator", groups=groups)])
    cycle_run(holder="test")
    assert placeholders().filter(node__isnull=False).count() == 6
    by_group = {
        name: Counter(placeholders(f"app-0001-{name}").values_list("node", flat=True))
        for name in ("groupa", "groupb", "groupc")
    }

    real = [app_pod(f"{g['name']}-{i}", group=g["name"]) for g in groups for i in range(g["minMember"])]
    manifests_apply(real)
    cycle_run(holder="test")
    assert not placeholders().exists()
    for name, nodes in by_group.items():
        placed = Counter(Member.objects.filter(name__startswith=f"{name}-").values_list("node", flat=True))
        assert placed == nodes, name


def test_a_task_group_with_more_pods_than_min_member_runs_them_all():
    """Verify_TG_with_More_Than_minMembers: six pods of groupa (minMember 3), each carrying the
    definition: the task group is complete with real pods, so no placeholder is needed, and all
    six run."""
    make_nodes(2)
    groups = [task_group("groupa", 3)]
    manifests_apply([app_pod(f"job-{i}", groups=groups, group="groupa") for i in range(6)])
    assert not placeholders().exists()
    cycle_run(holder="test")
    assert Member.objects.filter(gang__name="app-0001-groupa", node__isnull=False).count() == 6


def test_soft_style_releases_the_placeholders_after_the_timeout_and_the_pods_run():
    """Verify_Default_GS_Style: groupa (3 placeholders) and groupb (1 placeholder, a node
    selector no node has) with placeholderTimeoutInSeconds=20 and the default Soft style; the
    job's 3 pods carry the definition outside the task groups. Nothing runs while the
    application reserves; after the timeout the placeholders are released and the 3 pods run."""
    make_nodes(2)
    groups = [task_group("groupa", 3), task_group("groupb", 1, nodeSelector={"no-such": "label"})]
    manifests_apply(
        [app_pod(f"job-{i}", groups=groups, policy="placeholderTimeoutInSeconds=20") for i in range(3)]
    )
    assert placeholders().count() == 4
    cycle_run(holder="test")
    assert not Member.objects.filter(node__isnull=False).exists()  # still reserving (Accepted)

    time_passes(21)
    cycle_run(holder="test")
    assert not placeholders().exists()
    assert Member.objects.filter(name__startswith="job-", node__isnull=False).count() == 3
    assert all(g.fallen_back for g in Gang.objects.filter(application=APP))
    assert GangEvent.objects.filter(gang=gang("app-0001"), kind="fell_back").exists()


def test_hard_style_fails_the_application_after_the_timeout():
    """Verify_Hard_GS_Failed_State: groupa cannot be placed (its node selector matches no node),
    groupb can; with gangSchedulingStyle=Hard the application is Accepted (nothing runs) until
    the placeholder timeout, then it fails and its placeholders are released."""
    make_nodes(2)
    groups = [task_group("groupa", 3, nodeSelector={"no-such": "label"}), task_group("groupb", 3)]
    policy = "placeholderTimeoutInSeconds=20 gangSchedulingStyle=Hard"
    manifests_apply([app_pod("originator", groups=groups, policy=policy)])
    cycle_run(holder="test")
    assert not Member.objects.filter(node__isnull=False).exists()

    time_passes(21)
    cycle_run(holder="test")
    assert not placeholders().exists()
    assert set(Gang.objects.filter(application=APP).values_list("phase", flat=True)) == {"Failed"}
    assert "gangSchedulingStyle=Hard" in gang("app-0001-groupb").message
    cycle_run(holder="test")
    assert Member.objects.get(name="originator").node is None


def test_real_pods_applied_while_the_application_reserves_take_the_placeholders_places():
    """Verify_Annotation_TaskGroup_Def, with the real pods arriving before the placeholders are
    allocated (no node yet): each real pod replaces a waiting placeholder, so the task group is
    never counted twice, and the application is placed whole once nodes come."""
    groups = [task_group("groupa", 3)]
    manifests_apply([app_pod("originator", groups=groups)])
    manifests_apply([app_pod("real-0", group="groupa"), app_pod("real-1", group="groupa")])
    cycle_run(holder="test")
    assert list(placeholders().values_list("name", flat=True)) == ["tg-app-0001-groupa-0"]
    assert gang("app-0001-groupa").members.count() == 3

    make_nodes(1)
    cycle_run(holder="test")
    assert Member.objects.filter(gang__application=APP, node__isnull=False).count() == 4


def test_the_placeholder_timeout_is_also_kept_between_cycles():
    """Verify_Default_GS_Style, with the timeout reached by the sweep that runs between cycles:
    the Soft application gives its placeholders back before any cycle could place one of them
    alone, and the next cycle runs its pods."""
    make_nodes(2)
    groups = [task_group("groupa", 2), task_group("groupb", 1, nodeSelector={"no-such": "label"})]
    manifests_apply([app_pod("job-0", groups=groups, policy="placeholderTimeoutInSeconds=20")])
    cycle_run(holder="test")
    time_passes(21)
    timeouts_sweep(holder="sweep")
    assert not placeholders().exists()
    assert all(g.fallen_back for g in Gang.objects.filter(application=APP))
    cycle_run(holder="test")
    assert Member.objects.get(name="job-0").node is not None


def test_a_running_application_releases_the_placeholders_no_real_pod_replaced():
    """yunikorn-core ``TestTimeoutPlaceholderAllocReleased`` (pkg/scheduler/objects/
    application_test.go; no e2e case covers it): the reservation completed and the application
    runs, but only 1 of groupa's 3 real pods came within the timeout; the 2 placeholders left
    are released and the application keeps running."""
    make_nodes(1)
    manifests_apply(
        [app_pod("originator", groups=[task_group("groupa", 3)], policy="placeholderTimeoutInSeconds=60")]
    )
    cycle_run(holder="test")
    manifests_apply([app_pod("real-0", group="groupa")])
    cycle_run(holder="test")
    assert placeholders().count() == 2 and Member.objects.get(name="real-0").node == "n0"

    time_passes(61)
    cycle_run(holder="test")
    assert not placeholders().exists()
    assert Member.objects.filter(node="n0").count() == 2  # the originator and real-0 run on
    tasks = gang("app-0001-groupa")
    assert tasks.satisfied and not tasks.fallen_back and tasks.phase != "Failed"
    assert GangEvent.objects.filter(gang=tasks, kind="released", reason__contains="2 placeholders").exists()


@pytest.mark.parametrize(
    "delete",
    [
        lambda: pods_remove([("ns", "originator")]),  # the pod, removed for good
        lambda: gang_delete(namespace="ns", name="app-0001"),  # the application's own gang
    ],
    ids=["pod", "gang"],
)
def test_deleting_the_originator_releases_the_placeholders(delete):
    """Verify_Originator_Deletion_Trigger_Placeholders_Cleanup: the originator carries the
    definition (groupa placeholders allocated, groupb's cannot be: no node matches its
    selector); deleting it deletes the placeholders, and the application holds nothing."""
    make_nodes(1)
    groups = [task_group("groupa", 2), task_group("groupb", 1, nodeSelector={"no-such": "label"})]
    manifests_apply([app_pod("originator", groups=groups)])
    cycle_run(holder="test")
    assert placeholders().count() == 3
    delete()
    cycle_run(holder="test")
    assert not placeholders().exists()
    assert not Member.objects.filter(gang__application=APP).exists()
    assert GangEvent.objects.filter(
        gang=gang("app-0001-groupa"), reason__contains="outside its task groups"
    ).exists()


def test_placeholders_stay_while_the_originator_is_there_and_after_it_succeeded():
    """The counterpart of Verify_Originator_Deletion_Trigger_Placeholders_Cleanup: an originator
    that exists (here: finished) keeps its application's placeholders until the timeout."""
    make_nodes(1)
    manifests_apply([app_pod("originator", groups=[task_group("groupa", 2)])])
    cycle_run(holder="test")
    Member.objects.filter(name="originator").update(phase="Succeeded")
    cycle_run(holder="test")
    assert placeholders().filter(node__isnull=False).count() == 2
