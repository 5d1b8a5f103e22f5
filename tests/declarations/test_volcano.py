"""Volcano: PodGroup (scheduling.volcano.sh/v1beta1) with annotated pods, and the examples/
manifest through manage.py apply and the API; queue and preemptable keys; precedence."""

import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from scheduler_core.declarations import manifests_apply
from scheduler_core.models import Gang, Member
from scheduler_core.snapshot.build import build_snapshot
from tests.api.conftest import _own_cache_prefix, client_for  # noqa: F401 (an autouse fixture)

from .conftest import EXAMPLES, apply_text
from .test_formats import pod

pytestmark = pytest.mark.django_db

GROUP_NAME = "scheduling.k8s.io/group-name"
VOLCANO_PODGROUP = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: vg, namespace: ns}
spec: {minMember: 2, queue: gpu}
"""


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def check_llm_finetune():
    gang = Gang.objects.get(namespace="research", name="llm-finetune")
    assert (gang.min_member, gang.queue, gang.priority, gang.source_format) == (
        3,
        "gpu",
        1000,
        "volcano-podgroup",
    )
    assert gang.min_resources == {"cpu": 6000, "memory": 12 * 1024**3, "nvidia.com/gpu": 3}
    assert gang.wait_seconds is None and gang.preemptible and not gang.provisional
    members = list(gang.members.order_by("name"))
    assert [m.name for m in members] == [f"llm-finetune-{i}" for i in range(3)]
    assert {m.preemptible for m in members} == {False}  # volcano.sh/preemptable: "false"
    assert members[0].requests == {"cpu": 2000, "memory": 4 * 1024**3, "nvidia.com/gpu": 1}


def test_the_example_loads_through_manage_py_apply():
    out = run("apply", "-f", str(EXAMPLES / "volcano-podgroup.yaml"))
    assert "podgroup.scheduling.volcano.sh/llm-finetune created" in out
    assert "gang research/llm-finetune created" in out
    check_llm_finetune()
    rows = json.loads(run("get", "gangs", "-A", "-o", "json"))
    assert [row["source"] for row in rows] == ["volcano-podgroup"]
    assert "volcano-podgroup" in run("get", "gangs", "-A", "-o", "wide")


def test_the_example_loads_through_the_api():
    client = client_for(User.objects.create_user("alice", password="alice-pass-123"))
    text = (EXAMPLES / "volcano-podgroup.yaml").read_text()
    response = client.post("/api/v1/manifests/", text, content_type="application/yaml")
    assert response.status_code == 201, response.content
    assert [g["key"] for g in response.json()["gangs"]] == ["research/llm-finetune"]
    check_llm_finetune()


def test_a_pod_before_its_volcano_podgroup_waits_and_says_why():
    manifests_apply([pod("w-0", annotations={GROUP_NAME: "vg", "scheduling.volcano.sh/queue-name": "gpu"})])
    gang = Gang.objects.get(name="vg")
    assert gang.provisional and gang.queue == "gpu" and gang.source_format == "volcano-podgroup"
    assert gang.message == "waiting for PodGroup ns/vg (scheduling.volcano.sh) to be created"
    assert build_snapshot().gangs == ()
    text = run("describe", "gang", "ns/vg")
    assert "waiting for PodGroup ns/vg (scheduling.volcano.sh) to be created" in text
    apply_text(VOLCANO_PODGROUP)
    gang.refresh_from_db()
    assert not gang.provisional and gang.min_member == 2 and gang.message == "" and gang.reason == ""
    assert [g.key for g in build_snapshot().gangs] == ["ns/vg"]


def test_the_pods_queue_must_agree_with_the_podgroups():
    apply_text(VOLCANO_PODGROUP)
    with pytest.raises(ValueError, match="asks for queue 'cpu' but gang ns/vg is in queue 'gpu'"):
        manifests_apply([pod("q", annotations={GROUP_NAME: "vg", "scheduling.volcano.sh/queue-name": "cpu"})])
    text = (
        VOLCANO_PODGROUP
        + "---\n"
        + json.dumps(pod("q", annotations={GROUP_NAME: "vg", "scheduling.volcano.sh/queue-name": "cpu"}))
    )
    with pytest.raises(ValueError, match="asks for queue 'cpu'"):
        apply_text(text)
    assert not Member.objects.exists()


def test_preemptable_on_the_podgroup_makes_the_gang_non_preemptible_and_is_validated():
    apply_text(
        VOLCANO_PODGROUP.replace("{name: vg,", '{annotations: {volcano.sh/preemptable: "false"}, name: vg,')
    )
    assert not Gang.objects.get(name="vg").preemptible
    manifests_apply([pod("p", annotations={GROUP_NAME: "vg"})])
    assert Member.objects.get(name="p").preemptible  # the pod's own default
    with pytest.raises(ValueError, match="'maybe' is not true or false"):
        manifests_apply([pod("m", annotations={GROUP_NAME: "vg", "volcano.sh/preemptable": "maybe"})])


def test_min_task_member_may_not_exceed_min_member():
    with pytest.raises(ValueError, match="add up to 3, more than minMember 2"):
        apply_text(VOLCANO_PODGROUP.replace("queue: gpu", "minTaskMember: {a: 1, b: 2}"))


def test_two_declarations_naming_different_gangs_for_one_pod_are_an_error():
    labels = {"scheduling.x-k8s.io/pod-group": "pg-a"}
    with pytest.raises(ValueError) as error:
        manifests_apply([pod("both", labels=labels, annotations={GROUP_NAME: "pg-b"})])
    assert error.value.field == "metadata.annotations.scheduling.k8s.io/group-name"
    assert "names gang ns/pg-b but metadata.labels.scheduling.x-k8s.io/pod-group names gang ns/pg-a" in str(
        error.value
    )


def test_two_declarations_naming_the_same_gang_agree_and_the_first_reader_wins():
    labels = {"scheduling.x-k8s.io/pod-group": "same"}
    manifests_apply([pod("agree", labels=labels, annotations={GROUP_NAME: "same"})])
    gang = Gang.objects.get(name="same")
    # scheduler-plugins' reader comes before Volcano's (registry.POD_READERS).
    assert gang.provisional and gang.source_format == "podgroup"


# ---------------------------------------------------------------- Volcano Job (vcjob)

VCJOB = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj, namespace: ml}
spec:
  schedulerName: volcano
  minAvailable: 2
  maxRetry: 1
  policies: [{event: PodFailed, action: RestartJob}, {event: PodEvicted, action: AbortJob}]
  tasks:
    - name: worker
      replicas: 3
      template:
        spec:
          containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
"""


def check_mpi_bench():
    launcher, worker = Gang.objects.get(name="mpi-bench-launcher"), Gang.objects.get(name="mpi-bench-worker")
    assert launcher.group_id == worker.group_id and launcher.group.key == "hpc/mpi-bench"
    assert launcher.group.members == ["hpc/mpi-bench-launcher", "hpc/mpi-bench-worker"]
    assert (launcher.min_member, launcher.total_number, worker.min_member, worker.total_number) == (
        1,
        1,
        2,
        3,
    )
    for gang in (launcher, worker):
        assert (gang.queue, gang.priority, gang.max_retry, gang.source_format) == (
            "batch",
            -100,
            2,
            "volcano-job",
        )
        assert (gang.failure_policy, gang.eviction_policy, gang.wait_seconds) == (
            "RestartJob",
            "RestartJob",
            None,
        )
    assert sorted(worker.members.values_list("name", flat=True)) == [
        f"mpi-bench-worker-{i}" for i in range(3)
    ]
    pod = Member.objects.get(name="mpi-bench-worker-0")
    assert pod.annotations["volcano.sh/task-spec"] == "worker" and pod.priority == -100
    assert pod.requests == {"cpu": 4000, "memory": 8 * 1024**3}


def test_the_vcjob_example_loads_through_manage_py_apply_as_a_gang_group_of_task_gangs():
    out = run("apply", "-f", str(EXAMPLES / "volcano-job.yaml"))
    assert out.splitlines()[0] == "job.batch.volcano.sh/mpi-bench created"
    check_mpi_bench()
    assert run("apply", "-f", str(EXAMPLES / "volcano-job.yaml")).splitlines()[0].endswith("unchanged")


def test_the_vcjob_example_loads_through_the_api():
    client = client_for(User.objects.create_user("alice", password="alice-pass-123"))
    text = (EXAMPLES / "volcano-job.yaml").read_text()
    response = client.post("/api/v1/manifests/", text, content_type="application/yaml")
    assert response.status_code == 201, response.content
    assert sorted(g["key"] for g in response.json()["gangs"]) == [
        "hpc/mpi-bench-launcher",
        "hpc/mpi-bench-worker",
    ]
    check_mpi_bench()


def test_a_vcjob_without_task_minimums_is_one_gang():
    result = apply_text(VCJOB)
    assert result.lines[:2] == ["job.batch.volcano.sh/vj created", "pod/vj-worker-0 created"]
    gang = Gang.objects.get(name="vj")
    assert (gang.min_member, gang.total_number, gang.group, gang.max_retry) == (2, 3, None, 1)
    assert (gang.failure_policy, gang.eviction_policy, gang.restart_policy) == (
        "RestartJob",
        "AbortJob",
        "RestartGangWhenBelowMin",
    )
    assert Member.objects.get(name="vj-worker-2").annotations["scheduling.k8s.io/group-name"] == "vj"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (("minAvailable: 2", "minAvailable: 4"), "4 is more than the job's 3 pods"),
        (("action: AbortJob", "action: ResumeJob"), "'ResumeJob' on PodEvicted is not supported"),
        (("event: PodEvicted", "exitCode: 3"), "exit-code policies are not supported"),
        (("maxRetry: 1", "maxRetry: -1"), "-1 is out of range"),
        (("replicas: 3", "replicas: 3\n      minAvailable: 4"), "4 is more than the task's 3 replicas"),
        (
            ("replicas: 3", "replicas: 3\n      minAvailable: 1"),
            r"2 is more than the tasks. minAvailable add up to \(1\)",
        ),
        (("action: AbortJob}]", "action: AbortJob}, {event: PodFailed, action: AbortJob}]"), "two actions"),
    ],
)
def test_vcjob_values_gangsched_cannot_honour_are_refused(change, words):
    with pytest.raises(ValueError, match=words):
        apply_text(VCJOB.replace(*change))
    assert not Gang.objects.exists()


def test_a_vcjob_whose_pods_fail_past_max_retry_ends_failed():
    from scheduler_core.engine.model import GangPhase
    from scheduler_core.services.kubelet import kubelet_tick, pod_fail
    from tests.cluster.world import NOW, bind_directly, cpu_node, later

    cpu_node("cpu-a", cpu="64")
    apply_text(VCJOB)
    gang = Gang.objects.get(name="vj")
    for attempt in (1, 2):
        Gang.objects.filter(pk=gang.pk).update(satisfied=True, phase=GangPhase.SCHEDULING.value)
        bind_directly(gang, "cpu-a")
        kubelet_tick(now=NOW)
        pod_fail("ml", "vj-worker-1", "exit code 2", now=later(attempt))
        gang.refresh_from_db()
    assert (gang.phase, gang.retries, gang.message) == ("Failed", 1, "maxRetry 1 exceeded (exit code 2)")
    assert "maxRetry 1 exceeded" in run("describe", "gang", "ml/vj")
