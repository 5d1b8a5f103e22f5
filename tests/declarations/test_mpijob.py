"""Kubeflow's MPIJob (kubeflow.org/v2beta1): the mpi-operator's launcher and worker pods and the
PodGroup its gang-scheduling integration makes, as one gang. The operator's own example
(tests/declarations/manifests/mpi-operator/pi.yaml, unmodified), cases of its unit tests
(kubeflow/mpi-operator pkg/controller/podgroup_test.go, pkg/apis/kubeflow/validation), bad
input, ``delete -f``, another submitter's attempts and a scheduling cycle."""

import copy

import pytest

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.models import Gang, Member
from scheduler_core.services.cycle import cycle_run
from tests.loop.factories import make_nodes

from .conftest import OWN, apply_text
from .kind_checks import delete_f_removes_everything, others_object_is_not_found

pytestmark = pytest.mark.django_db

PI = OWN / "mpi-operator" / "pi.yaml"
URL, YAML = "/api/v1/manifests/", "application/yaml"
GI = 1 << 30


def replica(cpu: str, memory: str, replicas: int | None = None, **pod) -> dict:
    """A replica spec of one container requesting ``cpu`` and ``memory``."""
    spec = {
        "template": {
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
                **pod,
            }
        }
    }
    return spec if replicas is None else {"replicas": replicas, **spec}


def mpijob(name="test", *, annotations=None, policy=None, launcher=None, worker=None, **spec) -> dict:
    """An MPIJob as podgroup_test.go builds them: a launcher of 1 CPU / 2Gi, two workers of 10 / 20Gi."""
    run_policy = {"cleanPodPolicy": "Running"}
    if policy is not None:
        run_policy["schedulingPolicy"] = policy
    replicas = {"Launcher": launcher or replica("1", "2Gi", 1)}
    if worker is not False:
        replicas["Worker"] = worker or replica("10", "20Gi", 2)
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "ml", "annotations": annotations or {}},
        "spec": {"slotsPerWorker": 1, "runPolicy": run_policy, "mpiReplicaSpecs": replicas, **spec},
    }


def gang_of(name: str, namespace: str = "ml") -> Gang:
    return Gang.objects.get(namespace=namespace, name=name)


def test_the_operators_pi_example_is_one_gang_of_launcher_and_workers():
    """examples/v2beta1/pi/pi.yaml: a launcher and 2 workers of 1 CPU, 1Gi (limits)."""
    result = apply_text(PI.read_text())

    assert result.lines[:4] == [
        "mpijob.kubeflow.org/pi created",
        "pod/pi-launcher created",
        "pod/pi-worker-0 created",
        "pod/pi-worker-1 created",
    ]
    gang = gang_of("pi", "default")
    assert (gang.min_member, gang.total_number, gang.queue, gang.source_format) == (3, 3, "default", "mpijob")
    assert (gang.wait_seconds, gang.priority, gang.match_policy) == (60.0, None, "waiting-and-running")
    assert gang.min_resources == {"cpu": 3000, "memory": 3 * GI}
    assert gang.declaration["metadata"]["name"] == "pi"
    members = {m.name: m for m in gang.members.all()}
    assert set(members) == {"pi-launcher", "pi-worker-0", "pi-worker-1"}
    assert {m.owner for m in members.values()} == {"mpijob.kubeflow.org/pi"}
    assert {str(m.requests) for m in members.values()} == {str({"cpu": 1000, "memory": GI})}
    assert members["pi-launcher"].labels == {
        "training.kubeflow.org/operator-name": "mpi-operator",
        "training.kubeflow.org/job-name": "pi",
        "training.kubeflow.org/job-role": "launcher",
    }
    assert members["pi-worker-1"].labels["training.kubeflow.org/job-role"] == "worker"
    assert members["pi-worker-1"].labels["training.kubeflow.org/replica-index"] == "1"
    assert not apply_text(PI.read_text()).changed  # applied again: unchanged


def test_every_scheduling_policy_field_is_the_gangs():
    """podgroup_test.go TestNewPodGroup, "all schedulingPolicy fields are set": minAvailable 2,
    queue project-y (over the Volcano annotation's project-x), priority class high, minResources,
    scheduleTimeoutSeconds 100."""
    policy = {
        "minAvailable": 2,
        "queue": "project-y",
        "priorityClass": "high",
        "minResources": {"cpu": "100", "memory": "512Gi"},
        "scheduleTimeoutSeconds": 100,
    }
    manifests_apply([mpijob(annotations={"scheduling.volcano.sh/queue-name": "project-x"}, policy=policy)])

    gang = gang_of("test")
    assert (gang.min_member, gang.total_number, gang.queue, gang.priority, gang.wait_seconds) == (
        2,
        3,
        "project-y",
        1000,
        100.0,
    )
    assert gang.min_resources == {"cpu": 100_000, "memory": 512 * GI}
    assert set(gang.members.values_list("priority", flat=True)) == {0}  # the pods keep their own


def test_without_a_scheduling_policy_the_volcano_annotation_names_the_queue():
    """podgroup_test.go TestNewPodGroup, "schedulingPolicy is nil": the queue is the job's
    ``scheduling.volcano.sh/queue-name`` annotation, the priority the launcher's class."""
    launcher = replica("1", "2Gi", 1, priorityClassName="high")
    manifests_apply(
        [mpijob(annotations={"scheduling.volcano.sh/queue-name": "project-x"}, launcher=launcher)]
    )

    gang = gang_of("test")
    assert (gang.min_member, gang.queue, gang.priority) == (3, "project-x", 1000)


def test_a_kueue_labelled_mpijob_is_admitted_whole_in_its_local_queue():
    """Kueue's mpijob integration (pkg/controller/jobs/mpijob, mpijob_controller_test.go): the
    queue-name label names the LocalQueue; the launcher and the workers are pod sets of one
    workload, admitted whole, and Kueue times nothing out."""
    job = mpijob()
    job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team"}
    manifests_apply([job])
    gang = gang_of("test")
    assert (gang.min_member, gang.total_number, gang.queue, gang.wait_seconds) == (3, 3, "team", None)

    job = mpijob("other", policy={"minAvailable": 2, "queue": "q"})
    job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team"}
    with pytest.raises(DeclarationError) as error:
        manifests_apply([job])
    assert error.value.field == "spec.runPolicy.schedulingPolicy.minAvailable"
    assert "Kueue's (metadata.labels.kueue.x-k8s.io/queue-name)" in error.value.reason


@pytest.mark.parametrize(
    ("launcher", "worker", "min_available", "expected"),
    [
        # "without priorityClass": all pods (minMember 3 = launcher + 2 workers).
        (replica("2", "1Gi", 1), replica("10", "32Gi", 2), None, {"cpu": 22_000, "memory": 65 * GI}),
        # "with non-existence priorityClass" (here: no class): equal priorities cut the workers.
        (replica("2", "2Gi", 1), replica("5", "16Gi", 2), 2, {"cpu": 7000, "memory": 18 * GI}),
        # "with existence priorityClass": the lower-priority workers are cut to minMember - 1.
        (
            replica("2", "4Gi", 1, priorityClassName="high"),
            replica("20", "64Gi", 100, priorityClassName="low"),
            2,
            {"cpu": 22_000, "memory": 68 * GI},
        ),
        # "without worker without priorityClass": the launcher alone.
        (replica("2", "1Gi", 1), False, None, {"cpu": 2000, "memory": GI}),
    ],
)
def test_min_resources_count_min_member_pods_as_the_operator_does(launcher, worker, min_available, expected):
    """podgroup_test.go TestCalculatePGMinResources (scheduler-plugins cases)."""
    policy = None if min_available is None else {"minAvailable": min_available}
    manifests_apply([mpijob(launcher=launcher, worker=worker, policy=policy)])
    assert gang_of("test").min_resources == expected


def test_min_available_defaults_to_the_workers_and_the_launcher():
    """podgroup_test.go TestCalculateMinAvailable, "minAvailable is empty": 99 workers -> 100."""
    manifests_apply([mpijob(worker=replica("100m", "1Mi", 99))])
    gang = gang_of("test")
    assert (gang.min_member, gang.total_number, gang.members.count()) == (100, 100, 100)


def test_a_launcher_running_as_a_worker_shifts_the_workers_replica_index():
    """mpi_job_controller.go workerReplicaIndexLabel: with runLauncherAsWorker the launcher is
    index 0 and the workers 1..n; the launcher still counts once in minMember."""
    manifests_apply([mpijob(runLauncherAsWorker=True)])
    gang = gang_of("test")
    indexes = dict((m.name, m.labels["training.kubeflow.org/replica-index"]) for m in gang.members.all())
    assert indexes == {"test-launcher": "0", "test-worker-0": "1", "test-worker-1": "2"}
    assert gang.min_member == 3


def test_the_templates_scheduler_name_is_overwritten_by_the_gang_scheduler():
    """podgroup.go decoratePodTemplateSpec: the operator sets every pod's schedulerName."""
    manifests_apply([mpijob(launcher=replica("1", "1Gi", 1, schedulerName="default-scheduler"))])
    assert Member.objects.get(name="test-launcher").gang == gang_of("test")


def refused(manifest) -> DeclarationError:
    with pytest.raises(DeclarationError) as error:
        manifests_apply([manifest])
    assert not Gang.objects.exists() and not Member.objects.exists()
    return error.value


SPECS = "spec.mpiReplicaSpecs"


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        # validation_test.go TestValidateMPIJob, "invalid replica fields": launcher replicas 2.
        ({"launcher": replica("1", "1Gi", 2)}, f"{SPECS}.Launcher.replicas", "must be 1"),
        ({"worker": replica("1", "1Gi", 0)}, f"{SPECS}.Worker.replicas", "between 1 and"),
        # "missing replica spec fields": no replicas on the worker.
        ({"worker": replica("1", "1Gi")}, f"{SPECS}.Worker.replicas", "number of workers"),
        (
            {"worker": {**replica("1", "1Gi", 1), "restartPolicy": "Always"}},
            f"{SPECS}.Worker.restartPolicy",
            "not one of Never, OnFailure",
        ),
        ({"mpiImplementation": "LAM"}, "spec.mpiImplementation", "not one of OpenMPI"),
        (
            {"policy": {"minAvailable": 4}},
            "spec.runPolicy.schedulingPolicy.minAvailable",
            "more than",
        ),
        (
            {"policy": {"priorityClass": "nope"}},
            "spec.runPolicy.schedulingPolicy.priorityClass",
            "unknown priority class",
        ),
        (
            {"policy": {"scheduleTimeoutSeconds": -1}},
            "spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds",
            "must be positive",
        ),
        (
            {"worker": replica("1", "1Gi", 1, containers=[])},
            f"{SPECS}.Worker.template.spec.containers",
            "at least one container",
        ),
    ],
)
def test_bad_mpijobs_are_refused_naming_the_key(change, field, words):
    error = refused(mpijob(**change))
    assert error.field == field
    assert words in error.reason


def test_missing_or_unknown_replica_types_are_refused():
    """validation_test.go "empty replica specs": a Launcher is required; a third type would be
    dropped by the operator, so it is refused here."""
    no_launcher = mpijob()
    del no_launcher["spec"]["mpiReplicaSpecs"]["Launcher"]
    assert refused(no_launcher).field == f"{SPECS}.Launcher"
    third = mpijob()
    third["spec"]["mpiReplicaSpecs"]["PS"] = replica("1", "1Gi", 1)
    assert refused(third).field == f"{SPECS}.PS"


def test_a_name_too_long_for_the_workers_hostnames_is_refused():
    """validation_test.go "invalid mpiJob name": ``<name>-worker-<n-1>`` must be a DNS-1035 label."""
    error = refused(mpijob("a" * 55, worker=replica("1", "1Gi", 1000)))
    assert error.field == "metadata.name" and "DNS-1035" in error.reason
    assert refused(mpijob("1job")).field == "metadata.name"


def test_a_template_naming_another_gang_or_a_suspended_job_is_refused():
    worker = replica("1", "1Gi", 1)
    worker["template"]["metadata"] = {"labels": {"scheduling.x-k8s.io/pod-group": "other"}}
    error = refused(mpijob(worker=worker))
    assert error.field == f"{SPECS}.Worker.template.metadata.labels.scheduling.x-k8s.io/pod-group"
    suspended = mpijob()
    suspended["spec"]["runPolicy"]["suspend"] = True
    assert refused(suspended).field == "spec.runPolicy.suspend"


def test_delete_f_removes_the_gang_and_its_pods(tmp_path):
    delete_f_removes_everything(
        tmp_path,
        PI.read_text(),
        pods=3,
        deleted='mpijob.kubeflow.org "pi" deleted from default namespace',
        not_found='mpijob.kubeflow.org "pi" not found',
    )


def test_another_submitters_mpijob_of_the_same_name_is_not_found(as_alice, as_bob):
    """Through the API an MPIJob is a submitter's like any gang: alice's, bob may not touch."""
    bobs = PI.read_text().replace("replicas: 2", "replicas: 1")
    others_object_is_not_found(
        as_alice,
        as_bob,
        PI.read_text(),
        changed=bobs,
        renamed=bobs.replace("name: pi", "name: bobs-pi"),
        bobs_gang="default/bobs-pi",
    )


def test_the_pi_example_schedules_whole():
    """The launcher and both workers bind together once the cluster has room for all three."""
    make_nodes(1, cpu=2)
    apply_text(PI.read_text())
    cycle_run(holder="test")
    assert not Member.objects.filter(node__isnull=False).exists()  # 3 CPUs asked, 2 there

    make_nodes(1, cpu=2, prefix="m")
    cycle_run(holder="test")
    gang = gang_of("pi", "default")
    assert gang.members.filter(node__isnull=False).count() == 3
    gang.refresh_from_db()
    assert gang.satisfied


def test_the_launcher_template_is_read_unmodified():
    manifest = mpijob()
    before = copy.deepcopy(manifest)
    manifests_apply([manifest])
    assert manifest == before
