"""JobSet (jobset.x-k8s.io/v1alpha2): the child Jobs' pods and the one workload Kueue admits for
the JobSet. The project's own examples (tests/declarations/manifests/jobset/, unmodified), cases
of its controller and webhook tests (kubernetes-sigs/jobset pkg/controllers/jobset_controller_test.go,
pkg/webhooks/jobset_webhook_test.go), Kueue's pod sets (kubernetes-sigs/kueue
pkg/controller/jobs/jobset), exclusive placement, bad input, ``delete -f``, another submitter's
attempts and a scheduling cycle."""

import importlib

import pytest

from scheduler_core.declarations import DeclarationError, manifests_apply
from scheduler_core.models import Gang, Member, Node
from scheduler_core.services.cycle import cycle_run
from tests.loop.factories import make_nodes

from .conftest import OWN, apply_text
from .kind_checks import delete_f_removes_everything, others_object_is_not_found
from .test_volcano import run

pytestmark = pytest.mark.django_db

JOBSET = OWN / "jobset"
URL, YAML = "/api/v1/manifests/", "application/yaml"
QUEUE = "kueue.x-k8s.io/queue-name"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODEPOOL = "cloud.google.com/gke-nodepool"
NODEPOOLS = (
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: pools}\n"
    f"spec: {{levels: [{{nodeLabel: {NODEPOOL}}}, {{nodeLabel: kubernetes.io/hostname}}]}}\n"
)


def example(name: str) -> str:
    return (JOBSET / f"{name}.yaml").read_text()


def jobset(name="js", *, labels=None, annotations=None, jobs=None, **spec) -> dict:
    """A JobSet as the controller tests' wrappers build one: replicatedJobs of 1 CPU pods."""
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "labels": labels or {},
            "annotations": annotations or {},
        },
        "spec": {"replicatedJobs": jobs or [rjob("workers", 2, 2)], **spec},
    }


def rjob(
    name, replicas=1, parallelism=1, completions=None, *, annotations=None, pod_meta=None, **pod
) -> dict:
    job_spec = {"parallelism": parallelism}
    if completions is not None:
        job_spec["completions"] = completions
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
    job_spec["template"] = {"metadata": pod_meta or {}, "spec": {"containers": [container], **pod}}
    return {
        "name": name,
        "replicas": replicas,
        "template": {"metadata": {"annotations": annotations or {}}, "spec": job_spec},
    }


def gang_of(name: str, namespace: str = "ml") -> Gang:
    return Gang.objects.get(namespace=namespace, name=name)


def names(gang: Gang) -> list[str]:
    return sorted(gang.members.values_list("name", flat=True))


def test_the_parallel_jobs_example_is_one_gang_of_all_its_pods():
    """site/static/examples/simple/paralleljobs.yaml: workers (4 pods) and driver (1 pod)."""
    result = apply_text(example("paralleljobs"))

    assert result.lines[0] == "jobset.jobset.x-k8s.io/paralleljobs created"
    gang = gang_of("paralleljobs", "default")
    assert (gang.min_member, gang.total_number, gang.queue, gang.source_format) == (5, 5, "default", "jobset")
    assert (gang.wait_seconds, gang.restart_policy) == (None, "RestartFailedOnly")
    pods = names(gang)
    assert [p.rsplit("-", 1)[0] for p in pods] == [
        "paralleljobs-driver-0-0",
        "paralleljobs-workers-0-0",
        "paralleljobs-workers-0-1",
        "paralleljobs-workers-0-2",
        "paralleljobs-workers-0-3",
    ]
    assert all(len(p.rsplit("-", 1)[1]) == 5 for p in pods)
    assert {m.owner for m in gang.members.all()} == {"jobset.jobset.x-k8s.io/paralleljobs"}
    assert not apply_text(example("paralleljobs")).changed  # the same names again: unchanged


def test_pods_carry_the_jobset_labels_of_their_child_job():
    """jobset_controller_test.go TestConstructJobsFromTemplate: each child Job and its pods are
    labelled with the JobSet, replicatedJob, job index, global index and job key."""
    manifests_apply([jobset(jobs=[rjob("a", 2, 1), rjob("b", 1, 2, 2)])])
    member = Member.objects.get(name__startswith="js-b-0-1-")
    labels = member.labels
    assert {
        k: labels[f"jobset.sigs.k8s.io/{k}"] for k in ("jobset-name", "replicatedjob-name", "job-index")
    } == {
        "jobset-name": "js",
        "replicatedjob-name": "b",
        "job-index": "0",
    }
    assert labels["jobset.sigs.k8s.io/job-global-index"] == "2"  # after a's two jobs
    assert labels["jobset.sigs.k8s.io/global-replicas"] == "3"
    assert labels["jobset.sigs.k8s.io/replicatedjob-replicas"] == "1"
    assert labels["jobset.sigs.k8s.io/restart-attempt"] == "0"
    assert labels["jobset.sigs.k8s.io/group-name"] == "default"
    assert len(labels["jobset.sigs.k8s.io/job-key"]) == 40  # SHA-1 of ml/js-b-0
    assert labels["batch.kubernetes.io/job-completion-index"] == "1"
    assert labels["batch.kubernetes.io/job-name"] == "js-b-0"
    assert member.annotations["jobset.sigs.k8s.io/jobset-name"] == "js"


def test_the_coordinator_example_labels_every_pod_with_its_endpoint():
    """site/static/examples/simple/coordinator.yaml: the coordinator is driver job 0, pod 0."""
    apply_text(example("coordinator"))
    values = {m.labels["jobset.sigs.k8s.io/coordinator"] for m in Member.objects.all()}
    assert values == {"coordinator-example-driver-0-0.coordinator-example"}
    assert gang_of("coordinator-example", "default").min_member == 5


def test_a_pod_set_counts_replicas_times_the_smaller_of_parallelism_and_completions():
    """Kueue pkg/controller/jobs/jobset ``podsCount``: replicas x min(parallelism, completions)."""
    manifests_apply([jobset(jobs=[rjob("a", 3, 4, 2), rjob("b", 2, 1)])])
    gang = gang_of("js")
    assert (gang.min_member, gang.total_number, gang.members.count()) == (8, 8, 8)


def test_the_queue_name_label_is_the_gangs_local_queue_and_the_first_template_priority():
    manifests_apply([jobset(labels={QUEUE: "main"}, jobs=[rjob("a"), rjob("b", priorityClassName="high")])])
    gang = gang_of("js")
    assert (gang.queue, gang.priority) == ("main", 1000)


def test_exclusive_placement_makes_each_child_job_a_gang_alone_in_one_domain():
    """site/static/examples/simple/exclusive-placement.yaml: 3 child Jobs of 3 pods, one node
    pool each upstream; here one gang per Job, each required in one node pool and exclusive there,
    in one gang group."""
    apply_text(NODEPOOLS)
    apply_text(example("exclusive-placement"))

    gangs = Gang.objects.filter(namespace="default").order_by("name")
    assert [g.name for g in gangs] == [f"exclusive-placement-workers-{i}" for i in range(3)]
    for gang in gangs:
        assert (gang.min_member, gang.topology_required, gang.source_format) == (3, NODEPOOL, "jobset")
        assert gang.topology_exclusive
        assert gang.group is not None and gang.group.key == "default/exclusive-placement"
        assert gang.members.count() == 3
    member = gangs[0].members.first()
    assert member.annotations[EXCLUSIVE] == NODEPOOL


def test_exclusive_placement_on_one_replicated_job_constrains_its_jobs_only():
    """The annotation on a replicatedJob's template (jobset_controller_test.go
    TestConstructJobsFromTemplate, "exclusive placement for a ReplicatedJob")."""
    apply_text(NODEPOOLS)
    manifests_apply([jobset(jobs=[rjob("driver"), rjob("workers", 2, 2, annotations={EXCLUSIVE: NODEPOOL})])])
    driver, workers = gang_of("js-driver-0"), gang_of("js-workers-1")
    assert (driver.topology_required, driver.topology_exclusive) == ("", False)
    assert (workers.topology_required, workers.topology_exclusive) == (NODEPOOL, True)
    assert gang_of("js-workers-1").group.key == "ml/js"


def test_the_node_selector_strategy_pins_pods_to_their_jobs_nodes():
    """jobset_controller_test.go TestConstructJobsFromTemplate, "exclusive placement using
    nodeSelectorStrategy for entire JobSet": nodeSelector
    alpha.jobset.sigs.k8s.io/namespaced-job and the no-schedule toleration, no affinity."""
    annotations = {EXCLUSIVE: NODEPOOL, "alpha.jobset.sigs.k8s.io/node-selector": "true"}
    manifests_apply([jobset(annotations=annotations)])
    member = Member.objects.get(name__startswith="js-workers-1-0-")
    assert member.node_selector == {"alpha.jobset.sigs.k8s.io/namespaced-job": "ml_js-workers-1"}
    assert member.tolerations[-1]["key"] == "alpha.jobset.sigs.k8s.io/no-schedule"
    gang = gang_of("js")  # the nodes keep the Jobs apart: one gang
    assert (gang.topology_required, gang.topology_exclusive) == ("", False)


def refused(manifest) -> DeclarationError:
    with pytest.raises(DeclarationError) as error:
        manifests_apply([manifest])
    assert not Gang.objects.exists() and not Member.objects.exists()
    return error.value


@pytest.mark.parametrize(
    ("manifest", "field", "words"),
    [
        (jobset(jobs=[rjob("a"), rjob("a")]), "spec.replicatedJobs[1].name", "declared twice"),
        # jobset_webhook_test.go "jobset name will result in job name being too long".
        (jobset("j" * 60, jobs=[rjob("workers")]), "spec.replicatedJobs[0].name", "DNS-1035"),
        (jobset(jobs=[rjob("a", 0)]), "spec.replicatedJobs", "at least one pod"),
        (jobset(suspend=True), "spec.suspend", "no suspended JobSet"),
        (
            jobset(labels={QUEUE: "main", "kueue.x-k8s.io/priority-class": "high"}),
            "metadata.labels.kueue.x-k8s.io/priority-class",
            "unknown WorkloadPriorityClass 'high'",
        ),
        (jobset(annotations={EXCLUSIVE: "not a key"}), f"metadata.annotations.{EXCLUSIVE}", "node-label key"),
        (
            jobset(annotations={EXCLUSIVE: "no.such/level"}),
            f"metadata.annotations.{EXCLUSIVE}",
            "unknown level",
        ),
        # jobset_webhook_test.go "coordinator replicated job does not exist".
        (
            jobset(coordinator={"replicatedJob": "nope", "jobIndex": 0, "podIndex": 0}),
            "spec.coordinator",
            "no pod 0 of job 0",
        ),
        (
            jobset(jobs=[rjob("a", pod_meta={"labels": {"scheduling.x-k8s.io/pod-group": "pg"}})]),
            "spec.replicatedJobs[0].template.spec.template.metadata.labels.scheduling.x-k8s.io/pod-group",
            "the JobSet's pods are its gang",
        ),
    ],
)
def test_bad_jobsets_are_refused_naming_the_key(manifest, field, words):
    error = refused(manifest)
    assert error.field == field
    assert words in error.reason


def test_delete_f_removes_the_gang_and_its_pods(tmp_path):
    delete_f_removes_everything(
        tmp_path,
        example("paralleljobs"),
        pods=5,
        deleted='jobset.jobset.x-k8s.io "paralleljobs" deleted from default namespace',
        not_found='jobset.jobset.x-k8s.io "paralleljobs" not found',
    )


def test_delete_f_of_an_exclusive_jobset_removes_every_child_jobs_gang(tmp_path):
    apply_text(NODEPOOLS)
    path = tmp_path / "js.yaml"
    path.write_text(example("exclusive-placement"))
    run("apply", "-f", str(path))
    run("delete", "-f", str(path))
    assert not Gang.objects.exists() and not Member.objects.exists()


def test_another_submitters_jobset_of_the_same_name_is_not_found(as_alice, as_bob):
    """Through the API a JobSet is a submitter's like any gang: alice's, bob may not touch."""
    text = example("paralleljobs")
    bobs = text.replace("parallelism: 4", "parallelism: 2")
    others_object_is_not_found(
        as_alice,
        as_bob,
        text,
        changed=bobs,
        renamed=bobs.replace("name: paralleljobs", "name: bobs-jobs"),
        bobs_gang="default/bobs-jobs",
    )


def test_the_parallel_jobs_example_schedules():
    make_nodes(2, cpu=4)
    apply_text(example("paralleljobs"))
    cycle_run(holder="test")
    gang = gang_of("paralleljobs", "default")
    assert gang.members.filter(node__isnull=False).count() == 5
    gang.refresh_from_db()
    assert gang.satisfied


def pools(count: int, nodes: int = 2, cpu: int = 4) -> dict[str, str]:
    """``count`` node pools of ``nodes`` nodes each, and the NODEPOOLS topology; node -> pool."""
    apply_text(NODEPOOLS)
    for pool in range(count):
        for node in make_nodes(nodes, cpu=cpu, prefix=f"p{pool}-"):
            node.labels = {NODEPOOL: f"pool-{pool}", "kubernetes.io/hostname": node.name}
            node.save()
    return {n.name: n.labels[NODEPOOL] for n in Node.objects.all()}


def pools_of(gang: Gang, where: dict[str, str]) -> set[str]:
    return {where[m.node] for m in gang.members.all() if m.node}


def test_the_exclusive_placement_example_schedules_each_job_alone_in_its_node_pool():
    """Three pools of two 4-CPU nodes: every child Job's 3 pods bind inside one pool, a pool
    of its own (upstream's 1:1 Job to node pool; jobset site/content/en/docs/concepts/_index.md
    "Exclusive Job to topology placement")."""
    where = pools(3)
    apply_text(example("exclusive-placement"))
    cycle_run(holder="test")

    assert Member.objects.filter(node__isnull=False).count() == 9
    taken = [pools_of(gang, where) for gang in Gang.objects.all()]
    assert all(len(pool) == 1 for pool in taken)
    assert len(set().union(*taken)) == 3


def test_two_exclusive_jobs_on_two_pools_take_one_each_though_one_pool_holds_both():
    """The pod webhook's affinity to the Job's own pods and anti-affinity to any other Job's
    (kubernetes-sigs/jobset pkg/webhooks/pod_webhook.go setExclusiveAffinities; its test
    pkg/webhooks/pod_webhook_test.go "leader pod with exclusive placement"): two Jobs of two
    1-CPU pods, two pools of two 4-CPU nodes. One pool could hold both Jobs; each gets its own."""
    where = pools(2)
    manifests_apply([jobset(annotations={EXCLUSIVE: NODEPOOL})])
    cycle_run(holder="test")

    first, second = (pools_of(gang_of(f"js-workers-{i}"), where) for i in range(2))
    assert len(first) == len(second) == 1 and first != second


def test_a_third_exclusive_job_on_two_pools_waits_saying_each_pool_is_held():
    """A JobSet whose two Jobs hold both pools, then another with one Job: upstream its pods stay
    Pending (the anti-affinity of the pods already there); here its gang waits, NoDomainFits,
    naming the pools and the gangs that hold them."""
    where = pools(2)
    manifests_apply([jobset(annotations={EXCLUSIVE: NODEPOOL})])
    cycle_run(holder="test")
    manifests_apply([jobset("late", annotations={EXCLUSIVE: NODEPOOL}, jobs=[rjob("workers", 1, 2)])])
    cycle_run(holder="test")

    late = gang_of("late-workers-0")
    assert not late.members.filter(node__isnull=False).exists()
    assert late.reason == "NoDomainFits"
    assert "every gke-nodepool holds another exclusive gang (all 2: pool-0 by ml/js-workers-" in late.message
    assert {h["gang"] for h in late.details["exclusive"]["held_by"]} == {"ml/js-workers-0", "ml/js-workers-1"}
    assert len(set().union(*(pools_of(gang_of(f"js-workers-{i}"), where) for i in range(2)))) == 2


def test_three_exclusive_jobs_of_one_jobset_on_two_pools_wait_together():
    """The JobSet binds whole (one gang group, as Kueue admits it): with a pool for only two of
    its three Jobs none starts, and the Job left over says why."""
    pools(2)
    manifests_apply([jobset(annotations={EXCLUSIVE: NODEPOOL}, jobs=[rjob("workers", 3, 2)])])
    cycle_run(holder="test")

    assert not Member.objects.filter(node__isnull=False).exists()
    messages = [gang.message for gang in Gang.objects.all()]
    assert any("every gke-nodepool holds another exclusive gang" in message for message in messages)


def test_the_migration_marks_the_exclusive_jobs_of_jobsets_applied_before_it():
    """0026_topology_exclusive: a child Job's gang required at the level its pods' annotation
    names becomes exclusive; the node-selector strategy's and plain JobSets' gangs do not."""
    from django.apps import apps

    migration = importlib.import_module("scheduler_core.migrations.0026_topology_exclusive")
    apply_text(NODEPOOLS)
    apply_text(example("exclusive-placement"))
    strategy = {EXCLUSIVE: NODEPOOL, "alpha.jobset.sigs.k8s.io/node-selector": "true"}
    manifests_apply([jobset("pinned", annotations=strategy), jobset("plain")])
    Gang.objects.update(topology_exclusive=False)  # as the column's default left them

    migration.exclusive_jobsets_mark(apps, None)

    assert set(Gang.objects.filter(topology_exclusive=True).values_list("name", flat=True)) == {
        f"exclusive-placement-workers-{i}" for i in range(3)
    }
