"""YuniKorn placeholders on a real cluster: pods that hold an application's task groups.

The originator pod is created in the emulated API server, as a user's ``kubectl apply`` would;
the watcher mirrors it, which declares the application and its placeholder members; scheduling
cycles (``cycle_run`` through ``KubernetesCluster``) create the placeholder pods, bound, and
delete them again. Each test re-expresses a case of apache/yunikorn-k8shim: its e2e gang tests
(``test/e2e/gang_scheduling/gang_scheduling_test.go``) or its placeholder unit tests
(``pkg/cache/placeholder_test.go``, ``pkg/cache/placeholder_manager_test.go``), named in the
docstring. The placeholder timeout is reached by moving the application's timer back.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from scheduler_core.cluster.base import BindOutcome, BindRequest
from scheduler_core.cluster.kube.convert import PLACEHOLDER_LABEL
from scheduler_core.declarations.yunikorn import TASK_GROUP_NAME
from scheduler_core.models import Gang, Member, Node
from scheduler_core.specs.yunikorn import PLACEHOLDER
from tests.cast import yunikorn_pod
from tests.kube.cluster import bound_nodes, node, pod, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

APP, NS = "app-0001", "ns"
RESOURCES = {"cpu": "1", "memory": "1Gi"}
POOL = {"pool": "train"}
GROUPA = {
    "name": "groupa",
    "minMember": 3,
    "minResource": RESOURCES,
    "nodeSelector": POOL,
    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}],
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["train"]}]}
                ]
            }
        }
    },
    "labels": {"team": "ml"},
    "annotations": {"cost-center": "42"},
}


@pytest.fixture
def nodes():
    """node-a and node-b are the task group's pool; node-c is not."""
    out = [node(name, cpu="4") for name in ("node-a", "node-b", "node-c")]
    for obj in out[:2]:
        obj["metadata"]["labels"].update(POOL)
    return out


def placeholder_members():
    return Member.objects.filter(annotations__contains={PLACEHOLDER: "true"})


def placeholder_pods(kube_api) -> dict[str, dict]:
    return {
        p["metadata"]["name"]: p
        for p in kube_api.objects("v1/pods", NS)
        if (p["metadata"].get("annotations") or {}).get(PLACEHOLDER) == "true"
    }


def create(kube_api, name: str, **declared) -> dict:
    """A pod of the application, created in the cluster (the watch brings it to the database)."""
    return kube_api.create(yunikorn_pod(name, app=APP, requests=RESOURCES, **declared))


def apply_app(kube_api, groups: list[dict], policy: str = "") -> dict:
    """The originator pod, carrying the definition; returns it once its placeholders are declared."""
    originator = create(kube_api, "originator", groups=groups, policy=policy)
    count = sum(group["minMember"] for group in groups)
    wait_until(lambda: placeholder_members().count() == count, what="the placeholder members")
    return originator


def time_passes(seconds: float) -> None:
    """The application's placeholder timer started ``seconds`` earlier than it did."""
    for row in Gang.objects.filter(application=APP, wait_started__isnull=False):
        Gang.objects.filter(pk=row.pk).update(wait_started=row.wait_started - timedelta(seconds=seconds))


def test_the_originator_reserves_its_task_group_with_placeholder_pods_on_their_nodes(
    cluster, kube_api, settings
):
    """Verify_Annotation_TaskGroup_Def (e2e), first half: the originator carries the definition
    (groupa, minMember 3) and its placeholders are allocated with it, at once. Each placeholder
    pod has the shape k8shim gives it: TestNewPlaceholder (name, namespace, schedulerName, the
    task group's labels and annotations under applicationId, queue, placeholder and
    task-group-name), TestNewPlaceholderWithNodeSelectors, TestNewPlaceholderWithTolerations,
    TestNewPlaceholderWithAffinity (the task group's, as declared),
    TestNewPlaceholderExtendedResources (limits equal to requests), and
    TestCreateAppPlaceholdersWithOwnReference (owned by the originator pod)."""
    originator = apply_app(kube_api, [GROUPA])

    cluster.cycle()

    pods = placeholder_pods(kube_api)
    assert sorted(pods) == [f"tg-{APP}-groupa-{i}" for i in range(3)]
    placed = dict(placeholder_members().values_list("name", "node"))
    assert {name: p["spec"]["nodeName"] for name, p in pods.items()} == placed
    assert set(placed.values()) <= {"node-a", "node-b"}  # the task group's pool only
    for placeholder in pods.values():
        meta, spec = placeholder["metadata"], placeholder["spec"]
        assert meta["namespace"] == NS
        assert meta["labels"] == {
            "applicationId": APP,
            "queue": "default",
            "placeholder": "true",
            "team": "ml",
            PLACEHOLDER_LABEL: "true",
        }
        assert meta["annotations"] == {PLACEHOLDER: "true", TASK_GROUP_NAME: "groupa", "cost-center": "42"}
        assert meta["ownerReferences"] == [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "originator",
                "uid": originator["metadata"]["uid"],
                "controller": False,
                "blockOwnerDeletion": True,
            }
        ]
        assert spec["schedulerName"] == settings.GANGSCHED_SCHEDULER_NAME
        assert (spec["nodeSelector"], spec["tolerations"], spec["affinity"]) == (
            GROUPA["nodeSelector"],
            GROUPA["tolerations"],
            GROUPA["affinity"],
        )
        assert (spec["restartPolicy"], spec["terminationGracePeriodSeconds"]) == ("Never", 0)
        [container] = spec["containers"]
        assert container["image"] == settings.GANGSCHED_PLACEHOLDER_IMAGE
        assert container["resources"] == {"requests": RESOURCES, "limits": RESOURCES}
    assert bound_nodes(kube_api, ["originator"], NS)["originator"]  # the application runs
    # The placeholders were created on their nodes: only the originator went through a binding.
    binds = [
        str(r.url) for r in kube_api.requests() if r.method == "POST" and str(r.url).endswith("/binding")
    ]
    assert binds == [b for b in binds if "/pods/originator/" in b] and len(binds) == 1


def test_the_watch_keeps_placeholder_pods_as_their_members(cluster, kube_api):
    """What the watch makes of the placeholder pods (YuniKorn's shim recognises its own by the
    placeholder annotation): they are no new pods to declare, no other scheduler's usage and no
    reservation's placeholder; a placeholder that runs makes its member Running; a relist (410
    Gone) keeps them."""
    apply_app(kube_api, [GROUPA])
    cluster.cycle()
    for name in placeholder_pods(kube_api):  # the kubelet starts them
        kube_api.patch("v1/pods", name, {"status": {"phase": "Running"}}, NS)
    wait_until(
        lambda: placeholder_members().filter(phase="Running").count() == 3, what="placeholders running"
    )

    assert Member.objects.count() == 4  # the originator and its 3 placeholders, nothing more
    assert not any(Node.objects.values_list("external_usage", flat=True))
    assert cluster.backend.held() == []
    assert cluster.watcher.placeholders_reconcile() == (0, 0)

    pods = cluster.reflector("Pod")
    lists = pods.stats.lists
    kube_api.fail_next("watch", r"/api/v1/pods", 500)
    kube_api.drop_watches()
    kube_api.create(pod("web", scheduler="default-scheduler"))  # history moves on, then is compacted
    kube_api.compact()
    wait_until(lambda: pods.stats.lists > lists, what="the relist")
    assert placeholder_members().filter(node__isnull=False, phase="Running").count() == 3
    assert len(placeholder_pods(kube_api)) == 3


def test_real_pods_replace_the_placeholder_pods_on_their_nodes(cluster, kube_api):
    """Verify_Annotation_TaskGroup_Def (e2e), second half, with Verify_Multiple_TaskGroups_Nodes'
    check: the real pods of groupa come; the placeholder pods are deleted and each real pod is
    bound where a placeholder was."""
    apply_app(kube_api, [GROUPA])
    cluster.cycle()
    held = Counter(p["spec"]["nodeName"] for p in placeholder_pods(kube_api).values())

    real = [f"real-{i}" for i in range(3)]
    for name in real:
        create(kube_api, name, group="groupa")
    wait_until(
        lambda: Member.objects.filter(name__in=real).count() == 3, what="the real pods in the database"
    )
    cluster.cycle()

    assert placeholder_pods(kube_api) == {}
    assert not placeholder_members().exists()
    assert Counter(bound_nodes(kube_api, real, NS).values()) == held
    assert Counter(Member.objects.filter(name__in=real).values_list("node", flat=True)) == held


def test_soft_timeout_deletes_the_placeholder_pods_no_real_pod_replaced(cluster, kube_api):
    """Verify_Default_GS_Style (e2e; Soft is the default) with yunikorn-core
    TestTimeoutPlaceholderAllocReleased: the application was reserved and runs, but only one
    real pod of groupa came within placeholderTimeoutInSeconds; the two placeholder pods left
    are deleted from the cluster and the application keeps running."""
    apply_app(kube_api, [GROUPA], policy="placeholderTimeoutInSeconds=60")
    cluster.cycle()
    create(kube_api, "real-0", group="groupa")
    wait_until(lambda: Member.objects.filter(name="real-0").exists(), what="the real pod")
    cluster.cycle()
    assert len(placeholder_pods(kube_api)) == 2

    time_passes(61)
    cluster.cycle()

    assert placeholder_pods(kube_api) == {}
    assert not placeholder_members().exists()
    assert all(bound_nodes(kube_api, ["originator", "real-0"], NS).values())
    assert Gang.objects.get(name=f"{APP}-groupa").phase != "Failed"


def test_soft_timeout_of_an_application_never_reserved_creates_no_placeholder_pod(cluster, kube_api):
    """Verify_Default_GS_Style (e2e): groupb's node selector matches no node, so the application
    is never reserved whole: no placeholder pod holds anything meanwhile (gangsched places an
    application's task groups together); after the timeout the placeholders are released and
    the originator is scheduled on its own."""
    groupb = {
        "name": "groupb",
        "minMember": 1,
        "minResource": RESOURCES,
        "nodeSelector": {"no-such": "label"},
    }
    apply_app(kube_api, [GROUPA, groupb], policy="placeholderTimeoutInSeconds=20")
    cluster.cycle()
    assert placeholder_pods(kube_api) == {} and not bound_nodes(kube_api, ["originator"], NS)["originator"]

    time_passes(21)
    cluster.cycle()

    assert not placeholder_members().exists() and placeholder_pods(kube_api) == {}
    assert bound_nodes(kube_api, ["originator"], NS)["originator"]


def test_hard_timeout_deletes_the_placeholder_pods_and_fails_the_application(cluster, kube_api):
    """Verify_Hard_GS_Failed_State (e2e): groupa's placeholders hold their nodes while groupb
    is not reserved, with gangSchedulingStyle=Hard; at the placeholder timeout the placeholder
    pods are deleted from the cluster and every gang of the application fails. (gangsched
    places an application's task groups together, so groupb is made unreserved here directly:
    YuniKorn allocates each placeholder on its own.)"""
    groupb = {"name": "groupb", "minMember": 1, "minResource": RESOURCES}
    apply_app(kube_api, [GROUPA, groupb], policy="placeholderTimeoutInSeconds=20 gangSchedulingStyle=Hard")
    cluster.cycle()
    assert len(placeholder_pods(kube_api)) == 4
    Gang.objects.filter(name=f"{APP}-groupb").update(satisfied=False)

    time_passes(21)
    cluster.cycle()

    assert placeholder_pods(kube_api) == {}
    assert not placeholder_members().exists()
    assert set(Gang.objects.filter(application=APP).values_list("phase", flat=True)) == {"Failed"}


def test_deleting_the_originator_deletes_the_placeholder_pods(cluster, kube_api, default_backend):
    """Verify_OriginatorDeletion_Trigger_Placeholders_Cleanup (e2e): the originator pod is
    deleted from the cluster; its application's placeholder pods are deleted too (here by
    gangsched: the emulator has no garbage collector to follow their ownerReference)."""
    apply_app(kube_api, [GROUPA])
    cluster.cycle()
    assert len(placeholder_pods(kube_api)) == 3

    kube_api.delete("v1/pods", "originator", NS)
    wait_until(lambda: not Member.objects.filter(name="originator").exists(), what="the originator forgotten")
    cluster.cycle()

    assert placeholder_pods(kube_api) == {}
    assert not placeholder_members().exists()


@pytest.mark.parametrize(
    "lose",
    [
        lambda kube_api, name: kube_api.delete("v1/pods", name, NS),  # kubectl delete
        lambda kube_api, name: kube_api.patch(  # the kubelet refuses it
            "v1/pods", name, {"status": {"phase": "Failed", "reason": "OutOfcpu"}}, NS
        ),
    ],
    ids=["deleted", "failed"],
)
def test_placeholder_pods_deleted_by_someone_else_release_their_members(cluster, kube_api, lose):
    """Verify_Deleted_Placeholders (e2e): groupa's placeholder pods run, then are deleted with
    kubectl (or fail); the application's allocations on their nodes are gone, and no
    placeholder is created in their place."""
    apply_app(kube_api, [GROUPA])
    cluster.cycle()
    for name in placeholder_pods(kube_api):
        lose(kube_api, name)
    wait_until(lambda: not placeholder_members().exists(), what="the placeholders released")

    cluster.cycle()

    assert placeholder_pods(kube_api) == {}
    assert Member.objects.filter(node__isnull=False).count() == 1  # the originator alone


def test_an_orphan_placeholder_pod_is_deleted_when_the_watch_sees_it(cluster, kube_api):
    """TestCleanOrphanPlaceholders (pkg/cache/placeholder_manager_test.go): a placeholder pod
    whose deletion did not happen (its member was released meanwhile) is deleted once seen."""
    apply_app(kube_api, [GROUPA])
    cluster.cycle()
    orphan = f"tg-{APP}-groupa-0"
    Member.objects.filter(name=orphan).delete()  # released while the API server was unreachable

    kube_api.patch("v1/pods", orphan, {"status": {"phase": "Running"}}, NS)

    wait_until(lambda: orphan not in placeholder_pods(kube_api), what="the orphan deleted")
    assert len(placeholder_pods(kube_api)) == 2


def test_creating_a_placeholder_pod_is_a_bind_retried_safely(cluster, kube_api):
    """The bind journal retries a bind after a crash (every backend call is idempotent): placing
    a placeholder member creates its pod on the node once, a retry finds it there and answers
    bound; a create the API server refuses is a failed bind that leaves the member unplaced."""
    apply_app(kube_api, [GROUPA])
    first, second, third = (BindRequest(NS, f"tg-{APP}-groupa-{i}", "node-a") for i in range(3))

    assert [r.outcome for r in cluster.backend.bind([first])] == [BindOutcome.BOUND]
    assert [r.outcome for r in cluster.backend.bind([first])] == [BindOutcome.BOUND]  # a retry
    pod_uid = kube_api.get("v1/pods", first.name, NS)["metadata"]["uid"]
    assert Member.objects.get(name=first.name).uid == pod_uid
    assert bound_nodes(kube_api, [first.name], NS) == {first.name: "node-a"}

    assert cluster.backend.bind([second])[0].outcome is BindOutcome.BOUND
    assert cluster.backend.bind([BindRequest(NS, second.name, "node-b")])[0].outcome is BindOutcome.CONFLICT

    kube_api.fail_next("POST", rf"/namespaces/{NS}/pods$", 500)
    [refused] = cluster.backend.bind([third])
    assert refused.outcome is BindOutcome.FAILED and "500" in refused.error
    assert Member.objects.get(name=third.name).node is None
    assert third.name not in placeholder_pods(kube_api)
