"""gang_submit / pod_submit: one transaction, canonical units, errors that name the culprit."""

import pytest
from django.db import connection

from scheduler_core.models import Gang, GangEvent, GangEventKind, Member
from scheduler_core.services.submit import _taken_sql, gang_submit, pod_submit, taken

pytestmark = pytest.mark.django_db


def pod(name, **fields):
    return {"name": name, "requests": {"cpu": "500m", "memory": "2Gi"}, **fields}


def test_a_gang_and_its_pods_are_created_with_a_created_event():
    gang = gang_submit(
        namespace="ml",
        name="train",
        min_member=2,
        pods=[
            pod(
                "w-0",
                priority=10,
                duration_seconds=60,
                node_selector={"node-pool": "gpu"},
                tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                labels={"role": "worker"},
            ),
            pod("w-1"),
        ],
        mode="NonStrict",
        wait_seconds=30,
    )

    assert (gang.mode, gang.wait_seconds, gang.min_member) == ("NonStrict", 30, 2)
    first = Member.objects.get(name="w-0")
    assert first.gang == gang
    assert first.requests == {"cpu": 500, "memory": 2 * 2**30}
    assert (first.priority, first.duration_seconds, first.node_selector) == (10, 60, {"node-pool": "gpu"})
    assert GangEvent.objects.get(gang=gang).kind == GangEventKind.CREATED


def test_a_pods_whole_kubernetes_affinity_is_stored_as_its_required_terms():
    terms = [{"matchExpressions": [{"key": "gpu-model", "operator": "In", "values": ["a100"]}]}]
    required = {"nodeSelectorTerms": terms}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}

    gang_submit(namespace="ml", name="train", min_member=1, pods=[pod("w-0", affinity=affinity)])

    assert Member.objects.get(name="w-0").affinity == terms


def test_min_member_above_the_pod_count_is_refused_unless_more_will_come():
    with pytest.raises(ValueError, match="min_member 3 but only 2 pods"):
        gang_submit(namespace="ml", name="train", min_member=3, pods=[pod("a"), pod("b")])

    gang_submit(namespace="ml", name="train", min_member=3, total_number=4, pods=[pod("a"), pod("b")])
    assert Gang.objects.get(name="train").total_number == 4


def test_a_duplicate_pod_name_is_named():
    with pytest.raises(ValueError, match="pod name w-0 is used twice"):
        gang_submit(namespace="ml", name="train", min_member=1, pods=[pod("w-0"), pod("w-0")])


def test_a_bad_quantity_names_the_pod_and_the_resource():
    with pytest.raises(ValueError, match=r"gang ml/train: pod w-1: invalid quantity '2 cores' for cpu"):
        bad = {"name": "w-1", "requests": {"cpu": "2 cores"}}
        gang_submit(namespace="ml", name="train", min_member=1, pods=[pod("w-0"), bad])
    assert not Gang.objects.exists() and not Member.objects.exists()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"mode": "Lenient"}, "mode 'Lenient' is not one of Strict, NonStrict"),
        ({"restart_policy": "Always"}, "restart_policy 'Always'"),
        ({"phase": "Running"}, "unknown field"),
        ({"wait_seconds": -1}, "wait_seconds must not be negative"),
        ({"total_number": 1}, "total_number 1 is below min_member 2"),
    ],
)
def test_bad_gang_fields_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        gang_submit(namespace="ml", name="train", min_member=2, pods=[pod("a"), pod("b")], **fields)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"request": {"cpu": "1"}}, "pod a: unknown field.*request"),
        ({"tolerations": [{"operator": "Maybe"}]}, "pod a: tolerations"),
        ({"duration_seconds": -5}, "pod a: duration_seconds"),
        ({"labels": {"team": 7}}, "pod a: labels"),
    ],
)
def test_bad_pod_fields_name_the_pod(extra, message):
    with pytest.raises(ValueError, match=message):
        gang_submit(namespace="ml", name="train", min_member=1, pods=[pod("a", **extra)])


def test_names_already_taken_are_refused():
    gang_submit(namespace="ml", name="train", min_member=1, pods=[pod("w-0")])

    with pytest.raises(ValueError, match="gang ml/train already exists"):
        gang_submit(namespace="ml", name="train", min_member=1, pods=[pod("w-9")])
    with pytest.raises(ValueError, match="pod ml/w-0 already exists"):
        gang_submit(namespace="ml", name="other", min_member=1, pods=[pod("w-0")])


def test_a_pod_can_be_submitted_alone():
    member = pod_submit(namespace="batch", name="solo", requests={"cpu": "2"}, duration_seconds=30)

    assert (member.gang, member.requests, member.key) == (None, {"cpu": 2000}, "batch/solo")
    with pytest.raises(ValueError, match="pod batch/solo already exists"):
        pod_submit(namespace="batch", name="solo")


def test_of_several_pods_taken_the_first_by_name_is_named_with_its_submitter():
    gang_submit(namespace="ml", name="a", min_member=2, pods=[pod("w-7"), pod("w-3")], submitter="alice")

    assert taken("ml", "a", ["x-1", "w-7", "w-3"]) == ("alice", ("w-3", "alice"))
    assert taken("ml", "b", ["x-1"]) == (None, None)
    assert taken("other", "a", ["w-3"]) == (None, None)


def test_taken_probes_each_pod_by_its_whole_key_even_without_table_statistics():
    """Asked as ``name = ANY(pods)`` PostgreSQL scanned the namespace's part of the unique index
    and filtered by name when the table had no statistics yet (a new installation under a burst
    of submissions): each submission cost more as the namespace grew. The plan must look every
    pod up by namespace and name."""
    gang_submit(namespace="ml", name="a", min_member=1, pods=[pod(f"w-{i}") for i in range(50)])
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM pg_statistic WHERE starelid = %s::regclass", [Member._meta.db_table])
        cursor.execute("EXPLAIN " + _taken_sql(), {"namespace": "ml", "gang": "a", "pods": ["w-1", "w-2"]})
        plan = "\n".join(row[0] for row in cursor.fetchall())
    lines = plan.splitlines()
    at = next(i for i, line in enumerate(lines) if "Index Cond" in line and "p.name" in line)
    assert "namespace" in lines[at], plan
    # Only the pods' probe is asked about: the gang's single-row lookup may take either index of
    # the gangs table, depending on whether autovacuum has analysed it yet.
    assert "Filter" not in "".join(lines[at - 1 : at + 2]), plan
