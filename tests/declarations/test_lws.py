"""A LeaderWorkerSet is one gang per group (leader + workers): LWS's own samples
(tests/declarations/manifests/lws/, unmodified), startup and restart policies, exclusive
placement, bad input, ``delete -f``, another submitter's attempts, and groups scheduling as gangs."""

import pytest

from scheduler_core.declarations import DeclarationError
from scheduler_core.models import Gang, Member
from scheduler_core.services.cycle import cycle_run
from tests.loop.factories import make_nodes

from .conftest import OWN, apply_text
from .kind_checks import delete_f_removes_everything, others_object_is_not_found
from .test_jobset import NODEPOOL, NODEPOOLS, pools

pytestmark = pytest.mark.django_db

LWS = OWN / "lws"
URL, YAML = "/api/v1/manifests/", "application/yaml"
NAME, GROUP_INDEX, WORKER_INDEX = (
    "leaderworkerset.sigs.k8s.io/name",
    "leaderworkerset.sigs.k8s.io/group-index",
    "leaderworkerset.sigs.k8s.io/worker-index",
)
EXCLUSIVE = "leaderworkerset.sigs.k8s.io/exclusive-topology"
SUBGROUP_EXCLUSIVE = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"


def lws_file(name: str) -> str:
    return (LWS / name).read_text()


def lws(spec: str = "", *, name: str = "set", annotations: str = "{}", template: str = "") -> str:
    """A LeaderWorkerSet of 1-CPU pods, ``spec`` and ``template`` lines added to its spec and
    its leaderWorkerTemplate."""
    return f"""
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {{name: {name}, namespace: ml, annotations: {annotations}}}
spec:
  {spec or "replicas: 2"}
  leaderWorkerTemplate:
    size: 3
    {template or "restartPolicy: RecreateGroupOnPodRestart"}
    workerTemplate:
      spec:
        containers: [{{name: w, image: i, resources: {{requests: {{cpu: "1"}}}}}}]
"""


def gang_of(namespace: str, name: str) -> Gang:
    return Gang.objects.get(namespace=namespace, name=name)


def test_lws_sample_makes_a_leader_and_workers_per_group_each_group_a_gang():
    """kubernetes-sigs/lws docs/examples/sample/lws.yaml: 3 groups of size 4, no leaderTemplate
    (the leader is made from workerTemplate); pod names and labels as in LWS's
    test/e2e/e2e_test.go "Can deploy lws with 'replicas', 'size', and 'restart policy' set"
    (leader ``<lws>-<i>``, workers ``<lws>-<i>-<j>``)."""
    result = apply_text(lws_file("lws.yaml"))

    assert result.lines[:5] == [
        "leaderworkerset.leaderworkerset.x-k8s.io/leaderworkerset-sample created",
        "pod/leaderworkerset-sample-0 created",
        "pod/leaderworkerset-sample-0-1 created",
        "pod/leaderworkerset-sample-0-2 created",
        "pod/leaderworkerset-sample-0-3 created",
    ]
    assert Gang.objects.count() == 3 and Member.objects.count() == 12
    for index in range(3):
        gang = gang_of("default", f"leaderworkerset-sample-{index}")
        assert (gang.min_member, gang.total_number, gang.queue, gang.source_format) == (
            4,
            4,
            "default",
            "leaderworkerset",
        )
        assert gang.min_resources == {"cpu": 200}  # 4 pods of 50m (CalculatePGMinResources)
        assert (gang.wait_seconds, gang.restart_policy, gang.provisional) == (
            None,
            "RestartGangWhenBelowMin",
            False,
        )
        assert gang.declaration["metadata"]["name"] == "leaderworkerset-sample"
        members = {m.name: m for m in gang.members.all()}
        leader = f"leaderworkerset-sample-{index}"
        assert sorted(members) == [leader, *(f"{leader}-{j}" for j in range(1, 4))]
        for j, name in enumerate([leader, *(f"{leader}-{j}" for j in range(1, 4))]):
            labels = members[name].labels
            assert (labels[NAME], labels[GROUP_INDEX], labels[WORKER_INDEX]) == (
                "leaderworkerset-sample",
                str(index),
                str(j),
            )
            assert members[name].annotations["leaderworkerset.sigs.k8s.io/size"] == "4"
            assert members[name].owner == "leaderworkerset.leaderworkerset.x-k8s.io/leaderworkerset-sample"
            assert members[name].requests == {"cpu": 50}
        assert members[f"{leader}-2"].annotations["leaderworkerset.sigs.k8s.io/leader-name"] == leader
        assert "leaderworkerset.sigs.k8s.io/leader-name" not in members[leader].annotations
    assert not apply_text(lws_file("lws.yaml")).changed  # applied again: unchanged


def test_multi_template_sample_makes_the_leader_from_its_own_template():
    """kubernetes-sigs/lws docs/examples/sample/lws-multi-template.yaml: the leader's container is
    ``nginx2`` (leaderTemplate), the workers' ``nginx``; min_resources counts both templates."""
    apply_text(lws_file("lws-multi-template.yaml"))

    gang = gang_of("default", "leaderworkerset-multi-template-1")
    assert (gang.min_member, gang.members.count(), gang.min_resources) == (4, 4, {"cpu": 200})
    assert Member.objects.count() == 12


def test_volcano_gang_scheduling_sample_applies_with_its_scheduler_name():
    """kubernetes-sigs/lws docs/examples/sample/gang-scheduling/lws-sample-volcano.yaml: the
    template's ``schedulerName: volcano`` (the PodGroup per group is gangsched's gang)."""
    apply_text(lws_file("lws-sample-volcano.yaml"))

    assert [g.name for g in Gang.objects.order_by("name")] == ["lws-sample-volcano-0", "lws-sample-volcano-1"]
    assert {g.min_member for g in Gang.objects.all()} == {4}
    pod = Member.objects.get(name="lws-sample-volcano-1-3")
    assert pod.gang.name == "lws-sample-volcano-1"
    assert pod.annotations["scheduling.k8s.io/group-name"] == "lws-sample-volcano-1"


def test_leader_ready_asks_for_the_leader_alone_but_reserves_the_whole_group():
    """LWS pkg/schedulerprovider/volcano_provider_test.go TestVolcanoProvider_CreatePodGroupIfNotExists,
    "create podgroup for LeaderReady policy": minMember 1, minResources of leader + workers."""
    apply_text(lws("replicas: 1\n  startupPolicy: LeaderReady"))

    gang = gang_of("ml", "set-0")
    assert (gang.min_member, gang.total_number, gang.min_resources) == (1, 3, {"cpu": 3000})


def test_queue_annotation_and_inherited_volcano_annotations():
    """LWS volcano_provider_test.go, "create podgroup inherit volcano annotations", and the
    gang-scheduling README's queue annotation: the set's ``scheduling.volcano.sh/queue-name``
    is each group's queue; ``volcano.sh/preemptable`` goes with the inherited annotations."""
    apply_text(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: lws-queue}\n"
        "spec: {weight: 1}\n"
    )
    apply_text(
        lws(annotations='{scheduling.volcano.sh/queue-name: lws-queue, volcano.sh/preemptable: "false"}')
    )

    gangs = list(Gang.objects.order_by("name"))
    assert [(g.name, g.queue, g.preemptible) for g in gangs] == [
        ("set-0", "lws-queue", False),
        ("set-1", "lws-queue", False),
    ]


@pytest.mark.parametrize(
    ("policy", "expected"), [("None", "RestartFailedOnly"), ("Default", "RestartFailedOnly")]
)
def test_restart_policy_none_replaces_only_the_failed_pod(policy, expected):
    apply_text(lws(template=f"restartPolicy: {policy}"))
    assert gang_of("ml", "set-0").restart_policy == expected


def test_size_one_is_a_leader_alone_and_replicas_zero_no_pods():
    """LWS api: ``size`` 1 is the leader with a 0-replica worker StatefulSet; replicas may be 0."""
    apply_text(lws("replicas: 2", name="solo").replace("size: 3", "size: 1"))
    assert [m.name for m in Member.objects.order_by("name")] == ["solo-0", "solo-1"]
    assert gang_of("ml", "solo-1").min_member == 1
    apply_text(lws("replicas: 0", name="none"))
    assert not Gang.objects.filter(name__startswith="none").exists()


def test_the_exclusive_placement_sample_makes_each_groups_gang_exclusive_in_its_node_pool():
    """docs/examples/sample/lws-exclusive-placement.yaml: 3 groups of 4, each alone in one node
    pool upstream. Each group's gang is required in one pool and exclusive there; every pod
    carries the annotation, as the controller copies it onto the leader and worker templates
    (pkg/controllers/leaderworkerset_controller.go, pod_controller.go)."""
    apply_text(NODEPOOLS)
    apply_text(lws_file("lws-exclusive-placement.yaml"))

    gangs = Gang.objects.order_by("name")
    assert [g.name for g in gangs] == [f"leaderworkerset-sample-{i}" for i in range(3)]
    for gang in gangs:
        assert (gang.topology_required, gang.topology_exclusive, gang.min_member) == (NODEPOOL, True, 4)
    assert {m.annotations[EXCLUSIVE] for m in Member.objects.all()} == {NODEPOOL}


def test_a_third_exclusive_group_on_two_pools_waits_saying_each_pool_is_held():
    """The leader's affinity to its group and anti-affinity to any other group at the exclusive
    key (pkg/webhooks/pod_webhook.go SetExclusiveAffinities; site/content/en/docs/concepts/
    _index.md "Exclusive LWS to Topology Placement": 1:1 replica to domain). Two pools, each
    of one node that could hold all three groups: two groups bind, a pool each; the third waits."""
    where = pools(2, nodes=1)
    apply_text(lws_file("lws-exclusive-placement.yaml"))
    cycle_run(holder="test")

    placed = {}
    for gang in Gang.objects.order_by("name"):
        nodes = set(gang.members.exclude(node__isnull=True).values_list("node", flat=True))
        if nodes:
            placed[gang.name] = {where[node] for node in nodes}
            assert gang.members.filter(node__isnull=True).count() == 0
        else:
            waiting = gang
    assert sorted(len(p) for p in placed.values()) == [1, 1]
    assert set().union(*placed.values()) == {"pool-0", "pool-1"}
    assert waiting.reason == "NoDomainFits"
    assert "of its own; every gke-nodepool holds another exclusive gang (all 2:" in waiting.message


def refused(text: str) -> DeclarationError:
    with pytest.raises(DeclarationError) as error:
        apply_text(text)
    assert not Gang.objects.exists() and not Member.objects.exists()
    return error.value


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        (lws("replicas: -1"), "spec.replicas", "between 0 and"),
        (lws().replace("size: 3", "size: 0"), "spec.leaderWorkerTemplate.size", "between 1 and"),
        (lws("replicas: 1\n  startupPolicy: Eventually"), "spec.startupPolicy", "Eventually"),
        (
            lws(template="restartPolicy: Always"),
            "spec.leaderWorkerTemplate.restartPolicy",
            "not a restart policy",
        ),
        (lws("replicas: 5000"), "spec.replicas", "too many pods"),
        (
            lws(template="leaderTemplate: {spec: {containers: []}}"),
            "spec.leaderWorkerTemplate.leaderTemplate.spec.containers",
            "at least one container",
        ),
        (
            lws(
                template="leaderTemplate: {metadata: {labels: {scheduling.x-k8s.io/pod-group: pg}}, spec: {}}"
            ),
            "spec.leaderWorkerTemplate.leaderTemplate.metadata.labels.scheduling.x-k8s.io/pod-group",
            "the LeaderWorkerSet makes one gang per group",
        ),
        (
            lws(annotations="{scheduling.volcano.sh/queue-name: ''}"),
            "metadata.annotations.scheduling.volcano.sh/queue-name",
            "non-empty",
        ),
        (
            lws(annotations="{volcano.sh/preemptable: maybe}"),
            "metadata.annotations.volcano.sh/preemptable",
            "not true or false",
        ),
        (
            lws(annotations="{leaderworkerset.sigs.k8s.io/exclusive-topology: 'not a key'}"),
            f"metadata.annotations.{EXCLUSIVE}",
            "node-label key",
        ),
        (
            lws(annotations="{leaderworkerset.sigs.k8s.io/exclusive-topology: no.such/level}"),
            f"metadata.annotations.{EXCLUSIVE}",
            "unknown level",
        ),
        # site/content/en/docs/concepts/_index.md "Subgroup": parts of a group in domains of their own.
        (
            lws(annotations="{leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology: rack}"),
            f"metadata.annotations.{SUBGROUP_EXCLUSIVE}",
            "does not split a group into subgroups",
        ),
        (
            lws(template="subGroupPolicy: {subGroupSize: 1}"),
            "spec.leaderWorkerTemplate.subGroupPolicy",
            "does not split a group into subgroups",
        ),
        (
            "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: x}\nspec: {}\n",
            "spec.leaderWorkerTemplate",
            "",
        ),
        (
            "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: x}\n"
            "spec: {leaderWorkerTemplate: {size: 2}}\n",
            "spec.leaderWorkerTemplate.workerTemplate",
            "",
        ),
    ],
)
def test_bad_leader_worker_sets_are_refused_naming_the_key(text, field, words):
    error = refused(text)
    assert error.field == field
    assert words in error.reason


def test_delete_f_removes_every_groups_gang_and_pods(tmp_path):
    delete_f_removes_everything(
        tmp_path,
        lws_file("lws.yaml"),
        pods=12,
        deleted='leaderworkerset.leaderworkerset.x-k8s.io "leaderworkerset-sample" deleted',
        not_found='"leaderworkerset-sample" not found',
    )


def test_another_submitters_set_of_the_same_name_is_not_found(as_alice, as_bob):
    """Through the API a LeaderWorkerSet's gangs are a submitter's like any: alice's, bob may not touch."""
    text = lws_file("lws.yaml")
    others_object_is_not_found(
        as_alice,
        as_bob,
        text,
        changed=text.replace("replicas: 3", "replicas: 1"),
        renamed=text.replace("name: leaderworkerset-sample", "name: bobs-set"),
        bobs_gang="default/bobs-set-0",
    )


def test_each_group_schedules_as_a_gang():
    """Two 4-CPU nodes hold two groups of three 1-CPU pods (a leader and two workers) but not a
    third whole group: the third gets no pod at all, though two CPUs are free."""
    make_nodes(2, cpu=4)
    apply_text(lws("replicas: 3"))

    cycle_run(holder="test")

    bound = Member.objects.filter(node__isnull=False)
    assert bound.count() == 6
    placed = {m.gang.name for m in bound}
    assert len(placed) == 2
    for name in placed:
        assert gang_of("ml", name).members.filter(node__isnull=False).count() == 3
    (waiting,) = {"set-0", "set-1", "set-2"} - placed
    assert not gang_of("ml", waiting).members.filter(node__isnull=False).exists()
