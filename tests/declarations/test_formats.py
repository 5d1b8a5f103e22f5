"""Each format's own keys and edges: overrides, legacy labels, task groups, workloads, Lists,
provisional gangs and their promotion, idempotent re-apply."""

import json
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from scheduler_core.declarations import manifests_apply
from scheduler_core.declarations.provisional import provisional_gangs_promote
from scheduler_core.models import Gang, GangEvent, Member
from scheduler_core.snapshot.build import build_snapshot
from tests.cast import pod_manifest as pod

from .conftest import OWN, apply_text

pytestmark = pytest.mark.django_db

PODGROUP = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: pg
  namespace: ns
  annotations: {annotations}
spec: {{minMember: 2, scheduleTimeoutSeconds: 30}}
"""


def test_koordinator_annotations_win_over_the_podgroup_fields():
    annotations = json.dumps(
        {
            "gang.scheduling.koordinator.sh/min-available": "3",
            "gang.scheduling.koordinator.sh/waiting-time": "1h30m",
            "gang.scheduling.koordinator.sh/mode": "NonStrict",
        }
    )
    apply_text(PODGROUP.format(annotations=annotations))
    gang = Gang.objects.get(name="pg")
    assert (gang.min_member, gang.wait_seconds, gang.mode, gang.source_format) == (
        3,
        5400.0,
        "NonStrict",
        "podgroup",
    )


def test_a_podgroup_without_timeout_takes_the_default():
    apply_text(PODGROUP.format(annotations="{}").replace(", scheduleTimeoutSeconds: 30", ""))
    assert Gang.objects.get(name="pg").wait_seconds == 60.0


def test_the_legacy_label_with_min_available_as_a_label():
    labels = {
        "pod-group.scheduling.sigs.k8s.io/name": "old",
        "pod-group.scheduling.sigs.k8s.io/min-available": "2",
    }
    manifests_apply(
        [{"apiVersion": "v1", "kind": "List", "items": [pod("a", labels=labels), pod("b", labels=labels)]}]
    )
    gang = Gang.objects.get(name="old")
    assert gang.min_member == 2 and not gang.provisional and gang.members.count() == 2


def test_a_yunikorn_app_with_two_task_groups_is_one_gang_group_and_members_inherit_constraints():
    groups = [
        {"name": "driver", "minMember": 1, "minResource": {"cpu": "1"}},
        {"name": "exec", "minMember": 2, "minResource": {"cpu": "2"}, "nodeSelector": {"pool": "batch"}},
    ]
    labels = {"applicationId": "app-1"}
    driver = pod(
        "drv",
        labels=labels,
        annotations={
            "yunikorn.apache.org/task-group-name": "driver",
            "yunikorn.apache.org/task-groups": json.dumps(groups),
        },
    )
    executors = [
        pod(f"ex-{i}", labels=labels, annotations={"yunikorn.apache.org/task-group-name": "exec"})
        for i in (0, 1)
    ]
    manifests_apply([driver, *executors])
    drv, exe = Gang.objects.get(name="app-1-driver"), Gang.objects.get(name="app-1-exec")
    assert drv.group_id == exe.group_id and drv.group.key == "ns/app-1"
    assert (drv.style, drv.wait_seconds, exe.min_member) == ("Soft", 900.0, 2)  # YuniKorn's defaults
    assert exe.min_resources == {"cpu": 4000}
    assert Member.objects.get(name="ex-0").node_selector == {"pool": "batch"}


def test_a_deployment_expands_into_replicas_with_requests_as_kubernetes_computes_them():
    result = apply_text((OWN / "deployment.yaml").read_text())
    assert result.lines[:4] == [
        "deployment.apps/web created",
        "pod/web-0 created",
        "pod/web-1 created",
        "pod/web-2 created",
    ]
    member = Member.objects.get(name="web-1")
    # 500m + 250m from the containers (the limit's memory stands in for a missing request),
    # but the 3-CPU init container runs alone first: the pod needs 3 CPUs.
    assert member.requests == {"cpu": 3000, "memory": 1024**3 + 256 * 1024**2}
    assert member.duration_seconds == 90.5
    assert member.affinity == [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}
    ]
    gang = Gang.objects.get(name="web")
    assert (gang.min_member, gang.total_number, gang.members.count()) == (2, 3, 3)


def test_a_json_list_applies():
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod("solo"), pod("solo-2")]})
    result = apply_text(text)
    assert result.lines == ["pod/solo created", "pod/solo-2 created"]
    assert Member.objects.get(name="solo").gang is None


def test_a_pod_before_its_podgroup_waits_in_a_provisional_gang():
    labels = {"scheduling.x-k8s.io/pod-group": "pg"}
    result = manifests_apply([pod("p-0", labels=labels), pod("p-1", labels=labels)])
    gang = Gang.objects.get(name="pg")
    assert gang.provisional and gang.provisional_until > timezone.now() and gang.min_member == 2
    assert "provisional" in result.lines[-1]
    assert build_snapshot().gangs == ()
    result = apply_text(PODGROUP.format(annotations="{}"))
    gang.refresh_from_db()
    assert not gang.provisional and gang.provisional_until is None and gang.wait_seconds == 30.0
    assert result.lines == ["podgroup.scheduling.x-k8s.io/pg configured", "gang ns/pg configured"]
    assert [g.key for g in build_snapshot().gangs] == ["ns/pg"]
    assert list(GangEvent.objects.filter(gang=gang).values_list("kind", flat=True)) == [
        "explained",
        "created",
    ]


@override_settings(GANGSCHED_PROVISIONAL_GRACE_S=5)
def test_a_provisional_gang_is_promoted_after_the_grace_period():
    labels = {"scheduling.x-k8s.io/pod-group": "late"}
    manifests_apply([pod("l-0", labels=labels)])
    manifests_apply([pod("l-1", labels=labels), pod("l-2", labels=labels)])
    gang = Gang.objects.get(name="late")
    assert gang.provisional and gang.members.count() == 3
    assert provisional_gangs_promote(timezone.now()) == 0
    assert provisional_gangs_promote(timezone.now() + timedelta(seconds=6)) == 1
    gang.refresh_from_db()
    assert not gang.provisional and gang.min_member == 3
    assert provisional_gangs_promote(timezone.now() + timedelta(seconds=6)) == 0


def test_pods_joining_a_declared_gang_later_join_it():
    apply_text(PODGROUP.format(annotations="{}"))
    result = manifests_apply([pod("j-0", labels={"scheduling.x-k8s.io/pod-group": "pg"})])
    assert result.lines == ["pod/j-0 created"]
    assert Gang.objects.get(name="pg").members.count() == 1


def test_re_applying_a_changed_podgroup_configures_it():
    apply_text(PODGROUP.format(annotations="{}"))
    result = apply_text(PODGROUP.format(annotations="{}").replace("minMember: 2", "minMember: 5"))
    assert result.lines == ["podgroup.scheduling.x-k8s.io/pg configured", "gang ns/pg configured"]
    assert Gang.objects.get(name="pg").min_member == 5


def test_a_pending_pod_may_change_but_a_bound_one_keeps_its_spec():
    manifests_apply([pod("x")])
    assert manifests_apply([pod("x", requests={"cpu": "2"})]).lines == ["pod/x configured"]
    Member.objects.filter(name="x").update(node="n0", phase="Running")
    with pytest.raises(ValueError, match="already bound: its requests cannot change"):
        manifests_apply([pod("x", requests={"cpu": "3"})])
    assert manifests_apply([pod("x", requests={"cpu": "2"}, labels={"a": "b"})]).lines == ["pod/x configured"]


def test_a_pod_of_another_scheduler_is_refused():
    with pytest.raises(ValueError) as error:
        manifests_apply([pod("other", scheduler="default-scheduler")])
    assert error.value.field == "spec.schedulerName"
    assert "belongs to scheduler 'default-scheduler'" in error.value.reason


def test_a_pod_with_a_gang_declaration_is_taken_whatever_its_scheduler_name():
    manifests_apply([pod("k", scheduler="", labels={"scheduling.x-k8s.io/pod-group": "pg"})])
    assert Member.objects.get(name="k").gang.name == "pg"


def test_priority_class_names_map_to_priorities():
    manifests_apply(
        [pod("crit") | {"spec": pod("crit")["spec"] | {"priorityClassName": "system-node-critical"}}]
    )
    assert Member.objects.get(name="crit").priority == 2000001000
    with pytest.raises(ValueError, match="unknown priority class 'gold'"):
        manifests_apply([pod("g") | {"spec": pod("g")["spec"] | {"priorityClassName": "gold"}}])


def test_the_promotion_task_is_registered_and_scheduled():
    from django.conf import settings

    from gangsched.celery import app

    task = "scheduler_core.declarations.tasks.promote_provisional"
    app.loader.import_default_modules()  # what a worker imports when it starts
    assert task in app.tasks
    assert any(entry["task"] == task for entry in settings.CELERY_BEAT_SCHEDULE.values())
