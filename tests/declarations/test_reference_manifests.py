"""Every reference manifest loads and produces the gangs its format describes."""

import pytest

from scheduler_core.models import Gang, GangEvent, Member

from .conftest import REFERENCE, apply_text

pytestmark = pytest.mark.django_db

GIB = 1024**3


def _apply(name: str):
    return apply_text((REFERENCE / name).read_text())


def _gang(key: str) -> Gang:
    namespace, name = key.split("/")
    return Gang.objects.get(namespace=namespace, name=name)


def test_the_reference_directory_is_there():
    assert sorted(p.name for p in REFERENCE.glob("*.yaml")) == [
        "koordinator-gang-group.yaml",
        "legacy-label.yaml",
        "minavailable-job.yaml",
        "scheduler-plugins-podgroup.yaml",
        "yunikorn-spark.yaml",
    ]


def test_it_maps_a_podgroup_and_its_job():
    result = _apply("scheduler-plugins-podgroup.yaml")
    assert result.lines == [
        "podgroup.scheduling.x-k8s.io/trainer created",
        "job.batch/trainer created",
        *[f"pod/trainer-{i} created" for i in range(4)],
        "gang team-a/trainer created",
    ]
    gang = _gang("team-a/trainer")
    assert (gang.min_member, gang.wait_seconds, gang.mode, gang.style) == (4, 120.0, "Strict", "Hard")
    assert gang.min_resources == {"cpu": 8000, "memory": 16 * GIB}
    assert gang.source_format == "podgroup" and not gang.provisional
    assert gang.declaration["kind"] == "PodGroup"
    members = list(gang.members.all())
    assert [m.name for m in members] == [f"trainer-{i}" for i in range(4)]
    assert {str(m.requests) for m in members} == {str({"cpu": 2000, "memory": 4 * GIB})}
    assert GangEvent.objects.filter(gang=gang, kind="created").count() == 1


def test_it_maps_a_koordinator_gang_group_across_namespaces():
    _apply("koordinator-gang-group.yaml")
    ps, worker = _gang("ns-a/gang-ps"), _gang("ns-b/gang-worker")
    assert (ps.min_member, ps.total_number, ps.wait_seconds, ps.mode) == (2, 2, 300.0, "Strict")
    assert (worker.min_member, worker.total_number, worker.wait_seconds, worker.mode) == (
        2,
        2,
        600.0,
        "NonStrict",
    )
    assert ps.group_id == worker.group_id is not None
    assert ps.group.members == ["ns-a/gang-ps", "ns-b/gang-worker"]
    assert Member.objects.get(name="worker-0").requests == {
        "cpu": 1000,
        "memory": 2 * GIB,
        "nvidia.com/gpu": 1,
    }
    assert ps.members.count() == worker.members.count() == 2


def test_it_maps_the_legacy_label_on_a_statefulset():
    result = _apply("legacy-label.yaml")
    assert result.lines[0] == "statefulset.apps/etl created"
    gang = _gang("data/etl")
    assert (gang.min_member, gang.source_format, gang.wait_seconds) == (3, "podgroup-legacy", 60.0)
    assert [m.name for m in gang.members.all()] == ["etl-0", "etl-1", "etl-2"]
    assert gang.members.first().labels["app"] == "etl"


def test_it_expands_a_gangjob_into_its_tasks_pods():
    result = _apply("minavailable-job.yaml")
    assert result.pods == 4
    gang = _gang("hpc/mpi-allreduce")
    assert (gang.min_member, gang.total_number, gang.priority) == (3, 4, 1000)
    assert gang.restart_policy == "RestartGangWhenBelowMin"
    names = [m.name for m in gang.members.all()]
    assert names == ["mpi-allreduce-master-0", *[f"mpi-allreduce-worker-{i}" for i in range(3)]]
    worker = Member.objects.get(name="mpi-allreduce-worker-0")
    assert worker.requests == {"cpu": 4000, "memory": 8 * GIB}
    assert worker.node_selector == {"interconnect": "infiniband"} and worker.priority == 1000


def test_it_maps_yunikorn_task_groups_to_one_gang_group():
    _apply("yunikorn-spark.yaml")
    driver, executor = _gang("spark/spark-pi-0001-spark-driver"), _gang("spark/spark-pi-0001-spark-executor")
    assert (driver.min_member, executor.min_member) == (1, 3)
    assert driver.style == executor.style == "Hard" and driver.wait_seconds == executor.wait_seconds == 60.0
    assert driver.queue == "root.analytics"
    assert executor.min_resources == {"cpu": 6000, "memory": 12 * GIB}  # 3 x the task group's minResource
    assert driver.group.key == "spark/spark-pi-0001" and driver.group_id == executor.group_id
    assert driver.group.members == ["spark/spark-pi-0001-spark-driver", "spark/spark-pi-0001-spark-executor"]
    # The executors not applied yet are held by placeholders (YuniKorn's tg-<app>-<group>-...).
    assert [m.name for m in executor.members.order_by("name")] == [
        "spark-pi-exec-1",
        "tg-spark-pi-0001-spark-executor-0",
        "tg-spark-pi-0001-spark-executor-1",
    ]
    assert executor.application == driver.application == "spark-pi-0001"


@pytest.mark.parametrize("name", sorted(p.name for p in REFERENCE.glob("*.yaml")))
def test_re_applying_a_reference_manifest_changes_nothing(name):
    _apply(name)
    before = list(Gang.objects.values())
    again = _apply(name)
    assert again.lines and all(line.endswith(" unchanged") for line in again.lines)
    assert not again.changed and again.pods == 0
    assert list(Gang.objects.values()) == before
