"""Kubeflow's training jobs (kubeflow.org/v1): the training-operator's own examples, unmodified,
become the pods its controllers make and the gang its gang-scheduling code makes; schedulingPolicy
keys; refusals naming the field; delete -f; tenancy; one scheduling cycle.

The manifests under manifests/kubeflow/ are the training-operator's (release-1.9), each naming its
source file at its top. Behaviour cited from kubeflow/training-operator at that release.
"""

import io
import json
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from scheduler_core.declarations import DeclarationError
from scheduler_core.models import Gang, Member
from scheduler_core.services.cycle import cycle_run
from tests.loop.factories import make_nodes

from .conftest import EXAMPLES, OWN, apply_text

pytestmark = pytest.mark.django_db

KUBEFLOW = OWN / "kubeflow"
LABEL = "training.kubeflow.org/"


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def pytorch(spec_extra: str = "", run_policy: str = "", name: str = "train", namespace: str = "ns") -> str:
    """A PyTorchJob with a Master and 2 Workers of 1 CPU each (requests), and what is added."""
    replica = (
        "      template:\n        spec:\n          containers:\n"
        "          - {name: pytorch, image: img, resources: {requests: {cpu: '1'}}}\n"
    )
    return (
        f"apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
        f"spec:\n{spec_extra}"
        + (f"  runPolicy: {run_policy}\n" if run_policy else "")
        + "  pytorchReplicaSpecs:\n"
        + "    Master:\n      replicas: 1\n"
        + replica
        + "    Worker:\n      replicas: 2\n"
        + replica
    )


# ---------------------------------------------------------------- upstream's examples


def test_the_pytorch_example_applies_unmodified_as_its_pods_and_gang():
    """examples/pytorch/simple.yaml: a Master and a Worker, named by GenGeneralName
    (pkg/controller.v1/common/util_test.go TestGenGeneralName: ``<job>-<type lowercase>-<i>``),
    labelled as createNewPod labels them (pkg/controller.v1/common/pod.go), the master being the
    Master (PyTorchJobReconciler.IsMasterRole); one gang of both, as ReconcileJobs fills its
    PodGroup (pkg/controller.v1/common/job.go: minMember = all replicas, queue default)."""
    out = run("apply", "-f", str(KUBEFLOW / "pytorch-simple.yaml"))

    assert "pytorchjob.kubeflow.org/pytorch-simple created" in out
    gang = Gang.objects.get(namespace="kubeflow", name="pytorch-simple")
    assert (gang.min_member, gang.total_number, gang.queue, gang.source_format) == (
        2,
        2,
        "default",
        "pytorchjob",
    )
    assert gang.wait_seconds is None and gang.priority is None and not gang.provisional
    assert gang.restart_policy == "RestartFailedOnly"  # restartPolicy: OnFailure
    assert gang.declaration["kind"] == "PyTorchJob"
    members = {m.name: m for m in gang.members.all()}
    assert sorted(members) == ["pytorch-simple-master-0", "pytorch-simple-worker-0"]
    master, worker = members["pytorch-simple-master-0"], members["pytorch-simple-worker-0"]
    assert master.labels == {
        f"{LABEL}operator-name": "pytorchjob-controller",
        f"{LABEL}job-name": "pytorch-simple",
        f"{LABEL}replica-type": "master",
        f"{LABEL}replica-index": "0",
        f"{LABEL}job-role": "master",
        "scheduling.x-k8s.io/pod-group": "pytorch-simple",
    }
    assert worker.labels[f"{LABEL}replica-type"] == "worker" and f"{LABEL}job-role" not in worker.labels
    assert master.owner == "pytorchjob.kubeflow.org/pytorch-simple"
    rows = json.loads(run("get", "gangs", "-A", "-o", "json"))
    assert [row["source"] for row in rows] == ["pytorchjob"]


@pytest.mark.parametrize(
    ("file", "kind", "namespace", "job", "pods", "master", "restart"),
    [
        (
            "tf-simple.yaml",
            "tfjob",
            "kubeflow",
            "tfjob-simple",
            ["worker-0", "worker-1"],
            "worker-0",
            "RestartFailedOnly",
        ),
        (
            "xgboostjob.yaml",
            "xgboostjob",
            "default",
            "xgboost-dist-iris-test-train",
            ["master-0", "worker-0", "worker-1"],
            "master-0",
            "Never",
        ),
        (
            "paddle-simple-cpu.yaml",
            "paddlejob",
            "kubeflow",
            "paddle-simple-cpu",
            ["worker-0", "worker-1"],
            None,
            "RestartFailedOnly",
        ),
        (
            "jax-cpu-demo.yaml",
            "jaxjob",
            "kubeflow",
            "jaxjob-simple",
            ["worker-0", "worker-1"],
            "worker-0",
            "RestartFailedOnly",
        ),
    ],
)
def test_the_other_kinds_examples_apply_unmodified(file, kind, namespace, job, pods, master, restart):
    """examples/tensorflow/simple.yaml, examples/xgboost/xgboostjob.yaml,
    examples/paddlepaddle/simple-cpu.yaml, examples/jax/cpu-demo/demo.yaml; the master role as each
    controller's IsMasterRole says (TF: worker 0 without a Chief; XGBoost and Paddle: the Master
    only; JAX: index 0); XGBoost's Master is ``restartPolicy: Never``, so a failure fails the job."""
    out = run("apply", "-f", str(KUBEFLOW / file))

    assert f"{kind}.kubeflow.org/{job} created" in out
    gang = Gang.objects.get(namespace=namespace, name=job)
    assert (gang.min_member, gang.total_number, gang.source_format) == (len(pods), len(pods), kind)
    assert gang.restart_policy == restart
    names = sorted(gang.members.values_list("name", flat=True))
    assert names == [f"{job}-{pod}" for pod in pods]
    masters = [m.name for m in gang.members.all() if m.labels.get(f"{LABEL}job-role") == "master"]
    assert masters == ([f"{job}-{master}"] if master else [])


def test_the_example_of_every_kind_applies():
    """examples/kubeflow-training-jobs.yaml: one gang per job, with its schedulingPolicy."""
    run("apply", "-f", str(EXAMPLES / "kubeflow-training-jobs.yaml"))
    gangs = {gang.name: gang for gang in Gang.objects.filter(namespace="research")}
    assert {name: (g.min_member, g.total_number, g.source_format) for name, g in gangs.items()} == {
        "bert-finetune": (3, 4, "pytorchjob"),
        "mnist-tf": (3, 3, "tfjob"),
        "iris-xgb": (3, 3, "xgboostjob"),
        "paddle-cpu": (2, 2, "paddlejob"),
        "jax-spmd": (2, 2, "jaxjob"),
    }
    assert gangs["bert-finetune"].min_resources == {"cpu": 6000, "memory": 12 * 2**30}
    assert gangs["bert-finetune"].wait_seconds == 600 and gangs["jax-spmd"].min_resources == {"cpu": 2000}
    assert gangs["mnist-tf"].restart_policy == "Never"  # the PS takes TFJob's default, Never


def test_replica_type_keys_are_read_whatever_their_case():
    """pkg/apis/kubeflow.org/v1/defaulting_utils.go setTypeNameToCamelCase: ``worker`` is Worker."""
    apply_text(pytorch().replace("    Master:", "    MASTER:").replace("    Worker:", "    worker:"))
    names = sorted(Member.objects.values_list("name", flat=True))
    assert names == ["train-master-0", "train-worker-0", "train-worker-1"]


# ---------------------------------------------------------------- schedulingPolicy


def test_scheduling_policy_keys_map_to_the_gang():
    """job.go ReconcileJobs: minAvailable, queue, priorityClass, minResources and
    scheduleTimeoutSeconds of runPolicy.schedulingPolicy fill the PodGroup."""
    classes = (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n"
    )
    apply_text(
        classes
        + pytorch(
            run_policy="{schedulingPolicy: {minAvailable: 2, queue: gpu, priorityClass: high, "
            "minResources: {cpu: '5'}, scheduleTimeoutSeconds: 120}}"
        )
    )
    gang = Gang.objects.get(name="train")
    assert (gang.min_member, gang.total_number, gang.queue, gang.priority) == (2, 3, "gpu", 1000)
    assert gang.min_resources == {"cpu": 5000} and gang.wait_seconds == 120


def test_min_resources_default_to_the_first_min_available_pods_requests():
    """pkg/controller.v1/common/util.go CalcPGMinResources: the requests of the first minMember
    pods, replica types of higher priority first (here 2 of 3 pods of 1 CPU)."""
    apply_text(pytorch(run_policy="{schedulingPolicy: {minAvailable: 2}}"))
    assert Gang.objects.get(name="train").min_resources == {"cpu": 2000}


def test_the_elastic_policy_bounds_change_nothing_of_the_gang():
    """The PodGroup never reads elasticPolicy (only the HPA does, pkg/controller.v1/pytorch/hpa.go):
    min stays every replica."""
    apply_text(pytorch(spec_extra="  elasticPolicy: {minReplicas: 1, maxReplicas: 3}\n  nprocPerNode: '2'\n"))
    assert Gang.objects.get(name="train").min_member == 3


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("old", "new", "field", "words"),
    [
        (
            "    Worker:",
            "    Launcher:",
            "spec.pytorchReplicaSpecs.Launcher",
            "not a replica type of PyTorchJob",
        ),
        ("      replicas: 1", "      replicas: 2", "spec.pytorchReplicaSpecs.Master.replicas", "must be 1"),
        (
            "{name: pytorch,",
            "{name: main,",
            "spec.pytorchReplicaSpecs.Master.template.spec.containers",
            "named 'pytorch'",
        ),
        (
            "image: img,",
            "",
            "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].image",
            "must be given",
        ),
        (
            "spec:\n",
            "spec:\n  runPolicy: {schedulingPolicy: {minAvailable: 4}}\n",
            "spec.runPolicy.schedulingPolicy.minAvailable",
            "more than the job's 3 pods",
        ),
        (
            "spec:\n",
            "spec:\n  runPolicy: {schedulingPolicy: {priorityClass: nope}}\n",
            "spec.runPolicy.schedulingPolicy.priorityClass",
            "unknown priority class",
        ),
        ("spec:\n", "spec:\n  runPolicy: {suspend: true}\n", "spec.runPolicy.suspend", "suspended"),
        (
            "spec:\n",
            "spec:\n  runPolicy: {managedBy: kueue.x-k8s.io/multikueue}\n",
            "spec.runPolicy.managedBy",
            "not played here",
        ),
        (
            "spec:\n",
            "spec:\n  elasticPolicy: {metrics: [{type: Resource}]}\n",
            "spec.elasticPolicy.metrics",
            "does not resize",
        ),
        (
            "spec:\n",
            "spec:\n  elasticPolicy: {minReplicas: 3, maxReplicas: 2}\n",
            "spec.elasticPolicy.minReplicas",
            "more than maxReplicas",
        ),
        ("      restartPolicy: OnFailure\n", "", None, None),  # the default: accepted
        (
            "    Master:",
            "    Master:\n      restartPolicy: Sometimes",
            "spec.pytorchReplicaSpecs.Master.restartPolicy",
            "not one of",
        ),
        (
            "spec:\n",
            "spec:\n  runPolicy: {schedulingPolicy: {minAvailable: 2}}\n",
            None,
            None,
        ),
        (  # Kueue admits all the pods: minAvailable contradicts its label
            "namespace: ns}\nspec:\n",
            "namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec:\n"
            "  runPolicy: {schedulingPolicy: {minAvailable: 2}}\n",
            "spec.runPolicy.schedulingPolicy.minAvailable",
            "Kueue's",
        ),
        (
            "namespace: ns}",
            "namespace: ns, labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: p}}",
            "metadata.labels.kueue.x-k8s.io/priority-class",
            "unknown WorkloadPriorityClass 'p'",
        ),
        ("name: train,", "name: 1train,", "metadata.name", "DNS-1035"),
    ],
)
def test_bad_jobs_are_refused_naming_the_field(old, new, field, words):
    """pkg/webhooks/pytorch/pytorchjob_webhook.go validateSpec / validatePyTorchReplicaSpecs and
    pkg/common/util/webhooks.go ValidateRunPolicy, as far as gangsched plays them."""
    text = pytorch().replace(old, new, 1)
    if field is None:
        apply_text(text)
        return
    with pytest.raises(DeclarationError) as error:
        apply_text(text)
    assert error.value.field == field and words in error.value.reason, error.value
    assert not Gang.objects.exists() and not Member.objects.exists()


def test_a_kueue_labelled_pytorchjob_is_admitted_whole_in_its_local_queue():
    """Kueue's kubeflow integration (pkg/controller/jobs/kubeflow/jobs/pytorchjob,
    pytorch_controller_test.go): the job's queue-name label names its LocalQueue and every
    replica is a pod set of the one workload, admitted whole."""
    apply_text(
        pytorch().replace("namespace: ns}", "namespace: ns, labels: {kueue.x-k8s.io/queue-name: team}}")
    )
    gang = Gang.objects.get(namespace="ns", name="train")
    assert (gang.min_member, gang.total_number, gang.queue) == (3, 3, "team")


def test_xgboost_needs_its_master_and_tf_one_chief_or_master():
    """pkg/webhooks/xgboost/xgboostjob_webhook.go (Master must be present) and
    pkg/webhooks/tensorflow/tfjob_webhook.go (not more than 1 Chief or Master role)."""
    xgb = yaml.safe_load((KUBEFLOW / "xgboostjob.yaml").read_text())
    del xgb["spec"]["xgbReplicaSpecs"]["Master"]
    with pytest.raises(DeclarationError) as error:
        apply_text(json.dumps(xgb))
    assert error.value.field == "spec.xgbReplicaSpecs.Master"
    tf = yaml.safe_load((KUBEFLOW / "tf-simple.yaml").read_text())
    worker = tf["spec"]["tfReplicaSpecs"]["Worker"]
    tf["spec"]["tfReplicaSpecs"].update(Chief=worker, Master=worker)
    with pytest.raises(DeclarationError) as error:
        apply_text(json.dumps(tf))
    assert error.value.field == "spec.tfReplicaSpecs" and "Chief or Master" in error.value.reason


# ---------------------------------------------------------------- delete, tenancy


def test_delete_f_removes_the_jobs_gang_and_pods(tmp_path: Path):
    manifest = tmp_path / "job.yaml"
    manifest.write_text(pytorch())
    run("apply", "-f", str(manifest))
    assert Member.objects.count() == 3

    out = run("delete", "-f", str(manifest))

    assert out.splitlines() == [
        'pytorchjob.kubeflow.org "train" deleted from ns namespace',
        *(f'pod "train-{pod}" deleted from ns namespace' for pod in ("master-0", "worker-0", "worker-1")),
    ]
    assert not Gang.objects.exists() and not Member.objects.exists()


def test_another_submitters_job_is_not_theirs_to_change(as_alice, as_bob):
    body = pytorch(namespace="team-a")
    assert as_alice.post("/api/v1/manifests/", body, content_type="application/yaml").status_code == 201
    changed = pytorch(namespace="team-a", run_policy="{schedulingPolicy: {minAvailable: 1}}")
    assert as_bob.post("/api/v1/manifests/", changed, content_type="application/yaml").status_code == 404
    gang = Gang.objects.get(name="train")
    assert (gang.submitter, gang.min_member) == ("alice", 3)


# ---------------------------------------------------------------- scheduling


def test_the_pytorch_examples_gang_schedules():
    """The acceptance case: Kubeflow's PyTorchJob example, applied as written, binds whole."""
    make_nodes(2)
    run("apply", "-f", str(KUBEFLOW / "pytorch-simple.yaml"))

    cycle_run(holder="test")

    gang = Gang.objects.get(name="pytorch-simple")
    assert gang.satisfied and gang.members.filter(node__isnull=False).count() == 2


def test_a_job_bigger_than_the_cluster_binds_nothing_until_its_min_available_fits():
    """All-or-nothing: 3 pods of 1 CPU on one 2-CPU node bind none; minAvailable 2 binds 2."""
    make_nodes(1, cpu=2)
    apply_text(pytorch())
    cycle_run(holder="test")
    assert not Member.objects.filter(node__isnull=False).exists()

    Gang.objects.all().delete()
    Member.objects.all().delete()
    apply_text(pytorch(run_policy="{schedulingPolicy: {minAvailable: 2}}"))
    cycle_run(holder="test")
    assert Member.objects.filter(node__isnull=False).count() == 2
