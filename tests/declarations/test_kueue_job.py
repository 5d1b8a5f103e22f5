"""A batch/v1 Job Kueue manages (its ``kueue.x-k8s.io/queue-name`` label) is one gang: Kueue's own
sample Jobs (tests/declarations/manifests/kueue/, unmodified), its TAS Job, partial admission,
bad input, ``delete -f``, and another submitter's attempts."""

import copy

import pytest
from django.core.management.base import CommandError

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.models import Gang, Member

from .conftest import OWN, apply_text
from .kind_checks import delete_f_removes_everything, others_object_is_not_found
from .test_volcano import run

pytestmark = pytest.mark.django_db

KUEUE = OWN / "kueue"
URL, YAML = "/api/v1/manifests/", "application/yaml"
QUEUE = "kueue.x-k8s.io/queue-name"
RACK = "cloud.provider.com/topology-rack"
TOPOLOGY = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "Topology",
    "metadata": {"name": "default"},
    "spec": {"levels": [{"nodeLabel": "cloud.provider.com/topology-block"}, {"nodeLabel": RACK}]},
}


def kueue_file(name: str) -> str:
    return (KUEUE / name).read_text()


def job(name="train", *, labels=None, annotations=None, template_meta=None, **spec) -> dict:
    """A Job as Kueue's e2e wrappers build it (``pkg/util/testingjobs/job``): 1 pod of 1 CPU."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "labels": {QUEUE: "main"} if labels is None else labels,
            "annotations": annotations or {},
        },
        "spec": {
            "parallelism": 1,
            **spec,
            "template": {
                "metadata": template_meta or {},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
                },
            },
        },
    }


def gang_of(namespace: str, name: str) -> Gang:
    return Gang.objects.get(namespace=namespace, name=name)


def test_kueues_quick_start_job_is_one_gang_in_its_local_queue():
    """site/static/examples/getting-started/quick-start-job.yaml, after single-clusterqueue-setup.yaml."""
    apply_text(kueue_file("single-clusterqueue-setup.yaml"))
    result = apply_text(kueue_file("quick-start-job.yaml"))

    assert result.lines[:4] == [
        "job.batch/sample-job created",
        "pod/sample-job-0 created",
        "pod/sample-job-1 created",
        "pod/sample-job-2 created",
    ]
    gang = gang_of("default", "sample-job")
    assert (gang.min_member, gang.total_number, gang.queue, gang.source_format) == (
        3,
        3,
        "user-queue",
        "kueue-job",
    )
    assert (gang.wait_seconds, gang.restart_policy, gang.provisional) == (None, "RestartFailedOnly", False)
    assert gang.declaration["metadata"]["labels"] == {QUEUE: "user-queue"}
    members = list(gang.members.order_by("name"))
    assert [m.name for m in members] == ["sample-job-0", "sample-job-1", "sample-job-2"]
    assert {m.owner for m in members} == {"job.batch/sample-job"}
    assert {str(m.requests) for m in members} == {str({"cpu": 1000, "memory": 200 * 1024**2})}
    assert not apply_text(kueue_file("quick-start-job.yaml")).changed  # applied again: unchanged


def test_kueues_sample_job_with_generate_name_is_refused_as_kubectl_apply_refuses_it():
    """site/static/examples/jobs/sample-job.yaml is the quick-start Job with generateName, which
    Kueue's docs create with ``kubectl create -f``; ``kubectl apply`` cannot apply it either."""
    with pytest.raises(DeclarationError) as error:
        apply_text(kueue_file("sample-job.yaml"))
    assert error.value.field == "metadata.generateName"
    assert "apply needs metadata.name" in error.value.reason
    assert not Member.objects.exists()


def test_kueues_sample_job_is_created_under_a_generated_name_as_kubectl_create_does(tmp_path):
    """Kueue's docs run ``kubectl create -f sample-job.yaml``: each create makes a new Job
    ``sample-job-<5 characters>`` (apimachinery's SimpleNameGenerator), its pods and its gang."""
    apply_text(kueue_file("single-clusterqueue-setup.yaml"))
    path = KUEUE / "sample-job.yaml"

    first = run("create", "-f", str(path)).splitlines()
    second = run("create", "-f", str(path)).splitlines()

    names = [line.split()[0].split("/")[1] for line in (first[0], second[0])]
    assert names[0] != names[1]
    for name, lines in zip(names, (first, second), strict=True):
        assert lines == [
            f"job.batch/{name} created",
            *(f"pod/{name}-{i} created" for i in range(3)),
            f"gang default/{name} created",
        ]
        assert name.startswith("sample-job-") and len(name) == len("sample-job-") + 5
        assert set(name[len("sample-job-") :]) <= set("bcdfghjklmnpqrstvwxz2456789")
        gang = gang_of("default", name)
        assert (gang.min_member, gang.queue, gang.source_format) == (3, "user-queue", "kueue-job")

    named = tmp_path / "named.yaml"
    named.write_text(kueue_file("quick-start-job.yaml"))
    run("create", "-f", str(named))
    with pytest.raises(CommandError, match=r"\(AlreadyExists\).*job.batch/sample-job already exists"):
        run("create", "-f", str(named))
    assert Gang.objects.filter(source_format="kueue-job").count() == 3  # the refused create wrote nothing


def test_kueues_partial_admission_sample_needs_its_min_parallelism():
    """site/static/examples/jobs/sample-job-partial-admission.yaml: 20 pods, admitted from 5."""
    apply_text(kueue_file("sample-job-partial-admission.yaml"))
    gang = gang_of("default", "sample-job-partial-admission")
    assert (gang.min_member, gang.total_number, gang.members.count()) == (5, 20, 20)


def test_kueues_tas_sample_job_asks_its_gang_for_the_template_level():
    """site/static/examples/multikueue/dev/sample-tas-job.yaml: a Job whose template requires
    ``kubernetes.io/hostname`` and one with no topology annotation."""
    apply_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: host}\n"
        "spec: {levels: [{nodeLabel: kubernetes.io/hostname}]}\n"
    )
    apply_text(kueue_file("sample-tas-job.yaml"))
    required, plain = gang_of("default", "tas-sample-job"), gang_of("default", "implicit-tas-job")
    assert (required.topology_required, required.topology_preferred, required.min_member) == (
        "kubernetes.io/hostname",
        "",
        2,
    )
    assert (plain.topology_required, plain.topology_preferred, plain.min_member) == ("", "", 3)


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        ("kueue.x-k8s.io/podset-required-topology", (RACK, "")),
        ("kueue.x-k8s.io/podset-preferred-topology", ("", RACK)),
    ],
)
def test_a_tas_job_of_kueues_e2e_tests(annotation, expected):
    """Kueue test/e2e/tas/baseline/job_test.go, "Should not admit a Job if Rack required" and
    "should admit a Job to TAS Block if Rack preferred": a Job of parallelism 3, completions 3 in
    LocalQueue ``main``, its pod template annotated with the rack level."""
    manifests_apply(
        [
            TOPOLOGY,
            job("test-job", parallelism=3, completions=3, template_meta={"annotations": {annotation: RACK}}),
        ]
    )
    gang = gang_of("ml", "test-job")
    assert (gang.topology_required, gang.topology_preferred) == expected
    assert (gang.min_member, gang.queue) == (3, "main")


def test_parallelism_below_completions_is_the_pod_count():
    """Kueue test/e2e/tas/baseline/job_test.go, "Should allow to run a Job with parallelism <
    completions": the pod set counts min(parallelism, completions) pods (``podsCount``)."""
    manifests_apply([job("a", parallelism=2, completions=3), job("b", parallelism=4, completions=2)])
    assert (gang_of("ml", "a").min_member, gang_of("ml", "a").members.count()) == (2, 2)
    assert (gang_of("ml", "b").min_member, gang_of("ml", "b").members.count()) == (2, 2)


def test_the_queue_annotation_of_older_kueue_and_the_template_priority():
    """Kueue 0.14 and earlier also read the queue from the Job's annotation (removed in
    kubernetes-sigs/kueue#7271); the gang's priority is the template's priorityClassName."""
    manifest = job("old", labels={}, annotations={QUEUE: "main"})
    manifest["spec"]["template"]["spec"]["priorityClassName"] = "high"
    manifests_apply([manifest])
    gang = gang_of("ml", "old")
    assert (gang.queue, gang.priority, gang.source_format) == ("main", 1000, "kueue-job")
    assert set(gang.members.values_list("priority", flat=True)) == {1000}


def test_a_job_without_the_label_stays_a_plain_job():
    manifest = job("plain", labels={})
    manifest["spec"]["template"]["spec"]["schedulerName"] = "gangsched"
    manifests_apply([manifest])
    assert not Gang.objects.exists()
    assert Member.objects.get(name="plain-0").gang is None


def refused(manifest) -> DeclarationError:
    with pytest.raises(DeclarationError) as error:
        manifests_apply([TOPOLOGY, manifest])
    assert not Gang.objects.exists() and not Member.objects.exists()
    return error.value


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (
            {"annotations": {"kueue.x-k8s.io/job-min-parallelism": "3"}},
            "documents[1].metadata.annotations.kueue.x-k8s.io/job-min-parallelism",
            "less than the Job's 3 pods",
        ),
        (
            {"annotations": {"kueue.x-k8s.io/job-min-parallelism": "two"}},
            "documents[1].metadata.annotations.kueue.x-k8s.io/job-min-parallelism",
            "'two' is not an integer",
        ),
        (  # a PriorityClass of that name is no WorkloadPriorityClass (test_kueue_priority.py)
            {"labels": {QUEUE: "main", "kueue.x-k8s.io/priority-class": "high"}},
            "documents[1].metadata.labels.kueue.x-k8s.io/priority-class",
            "unknown WorkloadPriorityClass 'high'",
        ),
        (
            {"labels": {QUEUE: "main"}, "annotations": {QUEUE: "other"}},
            "documents[1].metadata.annotations.kueue.x-k8s.io/queue-name",
            "names queue 'other'",
        ),
        ({"labels": {QUEUE: ""}}, "documents[1].metadata.labels.kueue.x-k8s.io/queue-name", "non-empty"),
        ({"parallelism": 0}, "documents[1].spec.parallelism", "at least one pod"),
        (
            {"template_meta": {"labels": {"scheduling.x-k8s.io/pod-group": "pg"}}},
            "documents[1].spec.template.metadata.labels.scheduling.x-k8s.io/pod-group",
            "the Job is Kueue's",
        ),
        (
            {"template_meta": {"annotations": {"kueue.x-k8s.io/podset-slice-size": "2"}}},
            "documents[1].spec.template.metadata.annotations.kueue.x-k8s.io/podset-slice-size",
            "does not split a gang",
        ),
        (
            {"template_meta": {"annotations": {"kueue.x-k8s.io/podset-required-topology": "no/such-level"}}},
            "documents[1].spec.template.metadata.annotations.kueue.x-k8s.io/podset-required-topology",
            "unknown level no/such-level",
        ),
    ],
)
def test_bad_kueue_jobs_are_refused_naming_the_key(change, field, words):
    kwargs = {"parallelism": 3, **change}
    error = refused(job("bad", **kwargs))
    assert error.field == field
    assert words in error.reason


def test_delete_f_removes_the_gang_and_its_pods(tmp_path):
    out = delete_f_removes_everything(
        tmp_path,
        kueue_file("quick-start-job.yaml"),
        pods=3,
        deleted='job.batch "sample-job" deleted from default namespace',
        not_found='job.batch "sample-job" not found',
    )
    assert 'pod "sample-job-2" deleted from default namespace' in out


def test_another_submitters_job_of_the_same_name_is_not_found(as_alice, as_bob):
    """Through the API a Kueue Job is a submitter's like any gang: alice's, bob may not touch."""
    apply_text(kueue_file("single-clusterqueue-setup.yaml"))
    text = kueue_file("quick-start-job.yaml")
    bobs = text.replace("parallelism: 3", "parallelism: 1").replace("completions: 3", "completions: 1")
    others_object_is_not_found(
        as_alice,
        as_bob,
        text,
        changed=bobs,
        renamed=bobs.replace("name: sample-job", "name: bobs-job"),
        bobs_gang="default/bobs-job",
    )


def test_a_pod_template_queue_label_must_agree_with_the_jobs():
    manifest = job("q", template_meta={"labels": {QUEUE: "other"}})
    with pytest.raises(DeclarationError, match="names queue 'other'"):
        manifests_apply([manifest])
    agreeing = copy.deepcopy(manifest)
    agreeing["spec"]["template"]["metadata"]["labels"][QUEUE] = "main"
    manifests_apply([agreeing])
    assert gang_of("ml", "q").queue == "main"
