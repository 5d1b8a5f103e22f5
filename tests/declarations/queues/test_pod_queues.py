"""The queue a pod's own labels name (KAI's ``kai.scheduler/queue``, Kueue's
``kueue.x-k8s.io/queue-name``, YuniKorn's ``queue``) reaches its gang's queue, or the pod's own
when it is scheduled alone; two keys naming different queues are refused naming the second.

Keys from the projects: KAI-Scheduler ``docs/batch/batch-job.yaml`` (label
``kai.scheduler/queue``) and ``docs/migrationguides/v0.6.0/README.md`` (older ``runai/queue``);
YuniKorn k8shim ``pkg/common/constants/constants.go`` (``QueueLabelKeys``: the canonical
``yunikorn.apache.org/queue`` then ``queue``; a name without ``root.`` is under root)."""

import pytest
import yaml

from scheduler_core.declarations import DeclarationError
from scheduler_core.declarations.documents import Manifest
from scheduler_core.declarations.registry import manifest_load
from scheduler_core.models import Gang

from ..conftest import apply_text

pytestmark = pytest.mark.django_db


def pod(name, labels=None, annotations=None, scheduler="gangsched"):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "team-a",
            "labels": labels or {},
            "annotations": annotations or {},
        },
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        },
    }


def loaded_pod(manifest):
    return manifest_load(Manifest("", manifest)).pods[0]


def test_a_kai_labelled_pod_of_a_pod_group_puts_its_gang_in_the_kai_queue():
    """The pods come before their PodGroup: the provisional gang takes the queue they name."""
    labels = {"scheduling.x-k8s.io/pod-group": "train", "kai.scheduler/queue": "research-vision"}
    apply_text(yaml.safe_dump_all([pod("train-0", labels), pod("train-1", labels)]))

    assert Gang.objects.get(namespace="team-a", name="train").queue == "research-vision"


def test_the_older_runai_queue_label_is_read_too():
    labels = {"scheduling.x-k8s.io/pod-group": "train", "runai/queue": "research"}
    assert loaded_pod(pod("p", labels)).gang.queue == "research"
    assert loaded_pod(pod("p", labels)).queue == "research"


def test_a_lone_pod_is_charged_to_the_queue_its_label_names():
    assert loaded_pod(pod("p", {"kai.scheduler/queue": "research"})).queue == "research"
    assert loaded_pod(pod("p", {"kueue.x-k8s.io/queue-name": "user-queue"})).queue == "user-queue"
    assert loaded_pod(pod("p", annotations={"scheduling.volcano.sh/queue-name": "ml"})).queue == "ml"
    assert loaded_pod(pod("p")).queue is None  # the default queue


def test_a_kueue_pod_group_is_in_its_local_queue():
    labels = {"kueue.x-k8s.io/pod-group-name": "g", "kueue.x-k8s.io/queue-name": "user-queue"}
    annotations = {"kueue.x-k8s.io/pod-group-total-count": "1"}
    apply_text(yaml.safe_dump(pod("g-0", labels, annotations)))

    assert Gang.objects.get(namespace="team-a", name="g").queue == "user-queue"


def test_a_yunikorn_queue_label_names_the_queue_by_its_path():
    """``queue: ml.nlp`` is ``root.ml.nlp``, as the shim reads it; the task groups' gangs and the
    pod agree on it."""
    labels = {"applicationId": "app-1", "queue": "ml.nlp"}
    annotations = {
        "yunikorn.apache.org/task-group-name": "workers",
        "yunikorn.apache.org/task-groups": '[{"name": "workers", "minMember": 1, '
        '"minResource": {"cpu": "1"}}]',
    }
    apply_text(yaml.safe_dump(pod("w-0", labels, annotations)))

    assert Gang.objects.get(namespace="team-a", name="app-1-workers").queue == "root.ml.nlp"


def test_yunikorns_plain_queue_label_is_only_read_on_a_yunikorn_pod():
    assert loaded_pod(pod("p", {"queue": "ml"})).queue is None
    assert loaded_pod(pod("p", {"queue": "ml", "applicationId": "a"})).queue == "root.ml"
    assert loaded_pod(pod("p", {"yunikorn.apache.org/queue": "root.ml"})).queue == "root.ml"


def test_two_keys_naming_different_queues_are_refused_naming_the_second():
    labels = {"kai.scheduler/queue": "a", "kueue.x-k8s.io/queue-name": "b"}
    with pytest.raises(DeclarationError) as error:
        loaded_pod(pod("p", labels))
    assert error.value.field == "metadata.labels.kueue.x-k8s.io/queue-name"


def test_a_pod_label_disagreeing_with_its_gangs_queue_is_refused():
    """A Volcano PodGroup in queue ml, and a pod whose KAI label names another queue."""
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "team-a"},
        "spec": {"minMember": 1, "queue": "ml"},
    }
    member = pod("g-0", {"kai.scheduler/queue": "vision"}, {"scheduling.k8s.io/group-name": "g"})
    with pytest.raises(DeclarationError) as error:
        apply_text(yaml.safe_dump_all([group, member]))
    assert "asks for queue 'vision'" in error.value.reason
    assert not Gang.objects.exists()


def test_a_pod_group_that_names_no_queue_is_in_the_queue_its_pods_name():
    """A scheduler-plugins PodGroup has no queue key: KAI-labelled pods put it in their queue (as
    KAI's podgrouper takes the workload's ``kai.scheduler/queue``); a pod naming another queue is
    refused."""
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "team-a"},
        "spec": {"minMember": 2},
    }
    labels = {"scheduling.x-k8s.io/pod-group": "train", "kai.scheduler/queue": "research-vision"}
    other = {**labels, "kai.scheduler/queue": "research"}

    with pytest.raises(DeclarationError) as error:
        apply_text(yaml.safe_dump_all([group, pod("train-0", labels), pod("train-1", other)]))
    apply_text(yaml.safe_dump_all([group, pod("train-0", labels), pod("train-1", labels)]))

    assert "asks for queue 'research'" in error.value.reason
    assert Gang.objects.get(namespace="team-a", name="train").queue == "research-vision"


def test_pods_applied_after_their_pod_group_put_it_in_their_queue_and_it_stays():
    """As a real cluster sends them (the mirror applies each object alone): the PodGroup, then
    its KAI-labelled pods; re-applying the PodGroup keeps the queue its pods gave it."""
    group = yaml.safe_dump(
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "train", "namespace": "team-a"},
            "spec": {"minMember": 1},
        }
    )
    labels = {"scheduling.x-k8s.io/pod-group": "train", "kai.scheduler/queue": "research-vision"}
    apply_text(group)
    apply_text(yaml.safe_dump(pod("train-0", labels)))
    again = apply_text(group)

    assert Gang.objects.get(namespace="team-a", name="train").queue == "research-vision"
    assert again.lines == ["podgroup.scheduling.x-k8s.io/train unchanged", "gang team-a/train unchanged"]
