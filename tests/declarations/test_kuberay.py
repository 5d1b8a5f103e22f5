"""KubeRay's RayCluster and RayJob: the head and worker pods KubeRay makes, a gang only when the
cluster asks for one (tests/declarations/manifests/kuberay/: KubeRay's samples, unmodified),
bad input, ``delete -f``, another submitter's attempts, and the gang scheduling whole."""

import pytest
import yaml

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.models import Gang, Member
from scheduler_core.services.cycle import cycle_run
from tests.loop.factories import make_nodes

from .conftest import OWN, apply_text
from .kind_checks import delete_f_removes_everything, others_object_is_not_found
from .test_volcano import run

pytestmark = pytest.mark.django_db

RAY = OWN / "kuberay"
URL, YAML = "/api/v1/manifests/", "application/yaml"
GI, MI = 1024**3, 1024**2


def ray_file(name: str) -> str:
    return (RAY / name).read_text()


def ray_documents(name: str, kind: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(ray_file(name)) if doc and doc["kind"] == kind]


def cluster(labels=None, *, name="rc", hosts=1, autoscaling=None, **group) -> dict:
    """A RayCluster as KubeRay's volcano_scheduler_test.go ``createTestRayCluster`` builds it:
    a head of 256m / 256Mi and one worker group of 256m / 256Mi, 1 GPU (as a limit)."""

    def pod(gpu):
        limits = {"cpu": "500m", "memory": "512Mi", **({"nvidia.com/gpu": "1"} if gpu else {})}
        requests = {"cpu": "256m", "memory": "256Mi"}
        return {
            "spec": {"containers": [{"name": "ray", "resources": {"limits": limits, "requests": requests}}]}
        }

    spec = {
        "headGroupSpec": {"template": pod(False)},
        "workerGroupSpecs": [
            {
                "groupName": "workergroup",
                "replicas": 2,
                "minReplicas": 1,
                "maxReplicas": 4,
                "numOfHosts": hosts,
                "template": pod(True),
                **group,
            }
        ],
    }
    if autoscaling is not None:
        spec["enableInTreeAutoscaling"] = autoscaling
    metadata = {"name": name, "namespace": "ml", "labels": labels or {}}
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": metadata, "spec": spec}


GANG = {"ray.io/gang-scheduling-enabled": "true"}


def test_the_sample_cluster_without_gang_label_is_plain_pods_of_gangsched():
    """ray-operator/config/samples/ray-cluster.sample.yaml: no gang label, so no PodGroup (the
    scheduler-plugins integration's ``isGangSchedulingEnabled``); its pods are gangsched's
    (``AddMetadataToChildResource`` names the batch scheduler on every pod)."""
    result = apply_text(ray_file("ray-cluster.sample.yaml"))

    assert result.lines[:3] == [
        "raycluster.ray.io/raycluster-kuberay created",
        "pod/raycluster-kuberay-head-0 created",
        "pod/raycluster-kuberay-workergroup-worker-0 created",
    ]
    assert not Gang.objects.exists()
    head = Member.objects.get(name="raycluster-kuberay-head-0")
    worker = Member.objects.get(name="raycluster-kuberay-workergroup-worker-0")
    assert head.gang is None and worker.gang is None
    assert head.labels == {
        "ray.io/cluster": "raycluster-kuberay",
        "ray.io/node-type": "head",
        "ray.io/group": "headgroup",
        "ray.io/is-ray-node": "yes",
    }
    assert (worker.labels["ray.io/node-type"], worker.labels["ray.io/group"]) == ("worker", "workergroup")
    assert head.requests == {"cpu": 1000, "memory": 5 * GI}
    assert head.owner == "raycluster.ray.io/raycluster-kuberay"
    assert not apply_text(ray_file("ray-cluster.sample.yaml")).changed


def test_the_scheduler_plugins_sample_is_one_gang_of_head_and_workers():
    """ray-operator/config/samples/ray-cluster.scheduler-plugins.yaml (label
    ``ray.io/gang-scheduling-enabled``); scheduler_plugins_test.go TestCreatePodGroup: minMember
    = desired workers + 1, minResources their requests, the PodGroup named as the cluster."""
    apply_text(ray_file("ray-cluster.scheduler-plugins.yaml"))

    gang = Gang.objects.get(namespace="default", name="test-podgroup-0")
    assert (gang.min_member, gang.total_number, gang.queue, gang.source_format) == (
        3,
        3,
        "default",
        "raycluster",
    )
    assert gang.min_resources == {"cpu": 3000, "memory": 4 * GI}
    assert gang.wait_seconds is None and not gang.provisional
    assert sorted(m.name for m in gang.members.all()) == [
        "test-podgroup-0-head-0",
        "test-podgroup-0-worker-worker-0",
        "test-podgroup-0-worker-worker-1",
    ]


def test_the_volcano_queue_sample_is_a_gang_in_its_queue():
    """ray-operator/config/samples/ray-cluster.volcano-scheduler-queue.yaml: the Volcano Queue,
    then a RayCluster labelled ``volcano.sh/queue-name`` (Volcano's plugin makes its PodGroup)."""
    apply_text(ray_file("ray-cluster.volcano-scheduler-queue.yaml"))

    gang = Gang.objects.get(namespace="default", name="test-cluster-0")
    assert (gang.min_member, gang.queue) == (3, "kuberay-test-queue")


def test_num_of_hosts_multiplies_the_workers():
    """KubeRay volcano_scheduler_test.go TestCreatePodGroupForRayCluster_NumOfHosts2: 2 replicas x
    2 hosts + the head = 5; 256m x 5 = 1280m; 2 x 2 GPUs (limits standing in for requests)."""
    manifests_apply([cluster(GANG, hosts=2)])

    gang = Gang.objects.get(namespace="ml", name="rc")
    assert gang.min_member == 5 and gang.members.count() == 5
    assert gang.min_resources == {"cpu": 1280, "memory": 1280 * MI, "nvidia.com/gpu": 4}


@pytest.mark.parametrize(
    ("group", "pods"),
    [({"replicas": 0}, 1), ({"replicas": 9}, 4), ({"replicas": 2}, 2), ({"suspend": True}, 0)],
)
def test_replicas_are_bounded_by_min_and_max_replicas(group, pods):
    """KubeRay utils/util_test.go TestGetWorkerGroupDesiredReplicas: replicas below minReplicas
    are minReplicas, above maxReplicas maxReplicas; a suspended group has none."""
    manifests_apply([cluster(**group)])
    assert Member.objects.filter(labels__contains={"ray.io/node-type": "worker"}).count() == pods


def test_autoscaling_counts_min_replicas_in_the_gang():
    """KubeRay volcano_scheduler.go ``calculatePodGroupParams``: with in-tree autoscaling the
    PodGroup asks for the head and the groups' minReplicas; the pods are the desired replicas."""
    manifests_apply([cluster(GANG, autoscaling=True)])

    gang = Gang.objects.get(namespace="ml", name="rc")
    assert (gang.min_member, gang.total_number, gang.members.count()) == (2, 3, 3)
    assert gang.min_resources == {"cpu": 512, "memory": 512 * MI, "nvidia.com/gpu": 1}


def test_priority_class_label_is_the_gangs_priority():
    """KubeRay volcano_scheduler.go ``createPodGroup``: ``ray.io/priority-class-name`` is the
    PodGroup's priorityClassName."""
    manifests_apply([cluster({**GANG, "ray.io/priority-class-name": "system-cluster-critical"})])
    assert Gang.objects.get(name="rc").priority == 2_000_000_000


def test_the_rayjob_sample_is_its_cluster_and_a_submitter_pod():
    """ray-operator/config/samples/ray-job.sample.yaml's RayJob (its ConfigMap holds the script,
    which gangsched does not read): the cluster's pods, plain without a gang label, and the
    K8sJobMode submitter Job's pod with KubeRay's default submitter requests."""
    (job,) = ray_documents("ray-job.sample.yaml", "RayJob")
    result = manifests_apply([job])

    assert result.lines[:4] == [
        "rayjob.ray.io/rayjob-sample created",
        "pod/rayjob-sample-head-0 created",
        "pod/rayjob-sample-small-group-worker-0 created",
        "pod/rayjob-sample-0 created",
    ]
    submitter = Member.objects.get(name="rayjob-sample-0")
    assert (submitter.gang, submitter.owner) == (None, "job.batch/rayjob-sample")
    assert submitter.requests == {"cpu": 500, "memory": 200 * MI}
    assert not Gang.objects.exists()


def test_the_volcano_rayjob_sample_gangs_the_cluster_but_not_the_submitter():
    """ray-operator/config/samples/ray-job.volcano-scheduler-queue.yaml: the RayJob's cluster is
    one gang named as the RayJob (volcano_scheduler_test.go TestCreatePodGroupForRayJob: minMember
    = head + workers); the submitter is created outside it."""
    queue, job = (
        ray_documents("ray-job.volcano-scheduler-queue.yaml", kind)[0] for kind in ("Queue", "RayJob")
    )
    manifests_apply([queue, job])

    gang = Gang.objects.get(namespace="default", name="rayjob-sample-0")
    assert (gang.min_member, gang.queue, gang.source_format) == (3, "kuberay-test-queue", "rayjob")
    assert gang.members.count() == 3
    assert Member.objects.get(name="rayjob-sample-0-0").gang is None


@pytest.mark.parametrize(("mode", "pods", "head_cpu"), [("HTTPMode", 2, 1000), ("SidecarMode", 2, 1500)])
def test_other_submission_modes_make_no_submitter_job(mode, pods, head_cpu):
    """KubeRay volcano_scheduler.go ``getSubmitterResource``: SidecarMode's submitter is a
    container of the head pod; HTTPMode submits from the operator."""
    (job,) = ray_documents("ray-job.sample.yaml", "RayJob")
    job["spec"]["submissionMode"] = mode
    manifests_apply([job])
    assert Member.objects.count() == pods
    assert Member.objects.get(name="rayjob-sample-head-0").requests["cpu"] == head_cpu


def refused(document) -> DeclarationError:
    with pytest.raises(DeclarationError) as error:
        manifests_apply([document])
    assert not Gang.objects.exists() and not Member.objects.exists()
    return error.value


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"minReplicas": 5}, "spec.workerGroupSpecs[0].minReplicas", "more than maxReplicas 4"),
        ({"replicas": -1}, "spec.workerGroupSpecs[0].replicas", "between 0 and"),
        ({"numOfHosts": 0}, "spec.workerGroupSpecs[0].numOfHosts", "between 1 and"),
        ({"groupName": "Bad_Name"}, "spec.workerGroupSpecs[0].groupName", ""),
        ({"suspend": "yes"}, "spec.workerGroupSpecs[0].suspend", "true or false"),
        (
            {"template": {"metadata": {"labels": {"scheduling.x-k8s.io/pod-group": "pg"}}, "spec": {}}},
            "spec.workerGroupSpecs[0].template.metadata.labels.scheduling.x-k8s.io/pod-group",
            "KubeRay makes the cluster's gang",
        ),
    ],
)
def test_bad_worker_groups_are_refused_naming_the_key(change, field, words):
    error = refused(cluster(GANG, **change))
    assert error.field == field
    assert words in error.reason


def test_bad_clusters_and_jobs_are_refused_naming_the_key():
    twice = cluster()
    twice["spec"]["workerGroupSpecs"] *= 2
    assert refused(twice).field == "spec.workerGroupSpecs[1].groupName"
    headless = cluster()
    del headless["spec"]["headGroupSpec"]
    assert refused(headless).field == "spec.headGroupSpec"
    assert refused(cluster({"volcano.sh/queue-name": ""})).field == ("metadata.labels.volcano.sh/queue-name")
    (job,) = ray_documents("ray-job.sample.yaml", "RayJob")
    existing = {**job, "spec": {"entrypoint": "x", "clusterSelector": {"ray.io/cluster": "c"}}}
    error = refused(existing)
    assert error.field == "spec.rayClusterSpec" and "clusterSelector" in error.reason
    assert refused({**job, "spec": {**job["spec"], "submissionMode": "Mail"}}).field == (
        "spec.submissionMode"
    )


def test_a_suspended_rayjob_makes_nothing():
    (job,) = ray_documents("ray-job.sample.yaml", "RayJob")
    manifests_apply([{**job, "spec": {**job["spec"], "suspend": True}}])
    assert not Member.objects.exists()


def test_delete_f_removes_the_gang_and_its_pods(tmp_path):
    delete_f_removes_everything(
        tmp_path,
        ray_file("ray-cluster.scheduler-plugins.yaml"),
        pods=3,
        deleted='raycluster.ray.io "test-podgroup-0" deleted',
        not_found='"test-podgroup-0" not found',
    )


def test_delete_f_of_a_plain_cluster_removes_its_pods(tmp_path):
    path = tmp_path / "rc.yaml"
    path.write_text(ray_file("ray-cluster.sample.yaml"))
    run("apply", "-f", str(path))
    out = run("delete", "-f", str(path))
    assert 'pod "raycluster-kuberay-head-0" deleted' in out
    assert not Member.objects.exists()


def test_another_submitters_cluster_of_the_same_name_is_not_found(as_alice, as_bob):
    text = ray_file("ray-cluster.scheduler-plugins.yaml")
    others_object_is_not_found(
        as_alice,
        as_bob,
        text,
        changed=text.replace("replicas: 2", "replicas: 1"),
        renamed=text.replace("name: test-podgroup-0", "name: bobs-cluster"),
        bobs_gang="default/bobs-cluster",  # the manifest names no namespace
    )


def test_the_cluster_schedules_whole_or_not_at_all():
    """Two 2-CPU nodes hold the head and two of the three 1.5-CPU workers, not all four pods:
    the gang places none; with two more nodes it places all four."""
    make_nodes(2, cpu=2)
    manifests_apply(
        [
            cluster(
                GANG,
                replicas=3,
                template={
                    "spec": {"containers": [{"name": "w", "resources": {"requests": {"cpu": "1500m"}}}]}
                },
            )
        ]
    )

    cycle_run(holder="test")
    assert not Member.objects.filter(node__isnull=False).exists()

    make_nodes(2, cpu=2, prefix="m")
    cycle_run(holder="test")
    assert Member.objects.filter(node__isnull=False).count() == 4


def test_a_topology_annotation_on_a_cluster_without_gang_is_refused():
    """KAI's topology annotations on the top owner keep a gang together: a RayCluster without a
    gang has none to keep."""
    plain = cluster()
    plain["metadata"]["annotations"] = {"kai.scheduler/topology-required-placement": "kubernetes.io/hostname"}
    error = refused(plain)
    assert error.field == "metadata.annotations.kai.scheduler/topology-required-placement"
    assert "belongs to no gang" in error.reason
