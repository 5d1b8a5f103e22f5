"""The Kubernetes backend against the emulated API server, through the official client.

Each test builds a small cluster in the emulator, lets the watcher take the Lease and mirror
it, runs real scheduling cycles (``cycle_run``) through ``KubernetesCluster`` and looks at the
result where a Kubernetes user would: the pods' ``spec.nodeName``, PodGroup status, Events.
"""

from __future__ import annotations

import pytest
from kubernetes import client

from scheduler_core.cluster.base import BindOutcome, BindRequest
from scheduler_core.cluster.kube import readiness
from scheduler_core.cluster.kube.convert import PLACEHOLDER_LABEL
from scheduler_core.models import BindJournal, BindState, Gang, Member, Node
from scheduler_core.services.cycle import TIMEOUT_ANNOTATION, cycle_run
from tests.kube.cluster import PODGROUPS, Background, Harness, bound_nodes, pod, podgroup, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def submit_gang(kube_api, name, size, *, cpu="1", min_member=None):
    kube_api.create(podgroup(name, min_member or size))
    names = [f"{name}-{i}" for i in range(size)]
    for pod_name in names:
        kube_api.create(pod(pod_name, group=name, cpu=cpu))
    return names


def mirrored(name, count):
    """The gang's PodGroup and its ``count`` pods are in the database (they come on two watches,
    in either order; until the PodGroup is seen the pods wait in a provisional gang)."""
    return lambda: (
        Member.objects.filter(gang__name=name).count() == count
        and Gang.objects.filter(name=name, provisional=False).exists()
    )


def test_nodes_are_mirrored_with_their_allocatable(cluster):
    assert sorted(Node.objects.values_list("name", flat=True)) == ["node-a", "node-b"]
    assert Node.objects.get(name="node-a").allocatable["cpu"] == 4000


def test_a_gang_is_bound_through_the_api_all_at_once(cluster, kube_api):
    names = submit_gang(kube_api, "train", 6)
    wait_until(mirrored("train", 6), what="the gang's pods in the database")

    report = cluster.cycle()

    assert report.ran and report.pods_bound == 6
    placed = bound_nodes(kube_api, names)
    assert all(placed.values()), placed
    assert set(placed.values()) <= {"node-a", "node-b"}
    assert BindJournal.objects.filter(state=BindState.BOUND).count() == 6
    # Each bind went through the binding subresource, once.
    binds = [r for r in kube_api.requests() if r.method == "POST" and str(r.url).endswith("/binding")]
    assert len(binds) == 6


def test_a_gang_that_does_not_fit_binds_nothing_and_says_why(cluster, kube_api):
    names = submit_gang(kube_api, "huge", 10)  # 10 x 1 cpu on 2 x 4 cpu
    wait_until(mirrored("huge", 10), what="the gang's pods in the database")

    cluster.cycle()

    assert not any(bound_nodes(kube_api, names).values())
    gang = Gang.objects.get(name="huge")
    assert gang.reason and "cpu" in gang.message
    cluster.watcher.step()  # write-back: the explanation becomes an Event on the PodGroup
    events = kube_api.objects("v1/events", "default")
    waiting = [e for e in events if e.get("reason") == "GangWaiting"]
    assert any(
        e["involvedObject"]["kind"] == "PodGroup" and e["involvedObject"]["name"] == "huge" for e in waiting
    )
    assert any(e["involvedObject"]["kind"] == "Pod" for e in waiting)


def test_podgroup_status_follows_the_gang(cluster, kube_api):
    names = submit_gang(kube_api, "job", 2)
    wait_until(mirrored("job", 2), what="the gang's pods in the database")
    cluster.cycle()
    for name in names:  # the kubelet starts them
        kube_api.patch(
            "v1/pods", name, {"status": {"phase": "Running", "startTime": "2026-11-23T05:00:00Z"}}, "default"
        )
    wait_until(lambda: Gang.objects.get(name="job").phase == "Running", what="the gang to run")

    cluster.watcher.step()

    status = kube_api.get(f"{'/'.join(PODGROUPS[:2])}/{PODGROUPS[2]}", "job", "default")["status"]
    assert status["phase"] == "Running" and status["running"] == 2
    assert status["scheduleStartTime"]
    scheduled = [e for e in kube_api.objects("v1/events", "default") if e.get("reason") == "Scheduled"]
    assert {e["involvedObject"]["name"] for e in scheduled} >= {"job", *names}


def test_pods_of_other_schedulers_count_as_used(cluster, kube_api):
    kube_api.create(pod("web", scheduler="default-scheduler", cpu="3500m", node="node-a", phase="Running"))
    wait_until(lambda: Node.objects.get(name="node-a").external_usage.get("cpu") == 3500, what="usage")
    names = submit_gang(kube_api, "pair", 2, cpu="2")
    wait_until(mirrored("pair", 2), what="the gang's pods in the database")

    cluster.cycle()

    assert set(bound_nodes(kube_api, names).values()) == {"node-b"}
    # When the other pod finishes, its node is free again.
    kube_api.patch("v1/pods", "web", {"status": {"phase": "Succeeded"}}, "default")
    wait_until(lambda: not Node.objects.get(name="node-a").external_usage, what="usage released")


def test_a_dropped_watch_resumes_without_a_relist(cluster, kube_api):
    pods = cluster.reflector("Pod")
    lists, watches = pods.stats.lists, pods.stats.watches
    kube_api.drop_watches()
    wait_until(lambda: pods.stats.watches > watches, what="the watch to resume")
    kube_api.create(pod("late", group=None))
    wait_until(lambda: Member.objects.filter(name="late").exists(), what="the late pod")
    assert pods.stats.lists == lists  # resumed from its resourceVersion: nothing listed again
    assert pods.stats.expired == 0


def test_410_gone_relists_and_forgets_what_was_deleted_meanwhile(cluster, kube_api):
    kube_api.create(pod("doomed"))
    wait_until(lambda: Member.objects.filter(name="doomed").exists(), what="the pod")
    pods = cluster.reflector("Pod")
    lists = pods.stats.lists
    # The stream drops and the first reconnect fails (the reflector backs off); meanwhile the
    # pod is deleted and etcd compacts that event away: the resumed watch is 410 Gone.
    kube_api.fail_next("watch", r"/api/v1/pods", 500)
    kube_api.drop_watches()
    kube_api.delete("v1/pods", "doomed", "default")
    kube_api.compact()
    wait_until(lambda: pods.stats.lists > lists, what="the relist")
    assert pods.stats.expired >= 1
    wait_until(lambda: not Member.objects.filter(name="doomed").exists(), what="the deleted pod forgotten")


def test_bind_conflict_and_gone(cluster, kube_api):
    kube_api.create(pod("taken", node="node-a"))
    kube_api.create(pod("ours"))
    kube_api.create(pod("vanishing"))
    wait_until(lambda: Member.objects.filter(name="vanishing").exists(), what="pods mirrored")
    kube_api.delete("v1/pods", "vanishing", "default")

    results = cluster.backend.bind(
        [
            BindRequest("default", "taken", "node-b"),  # bound elsewhere: 409
            BindRequest("default", "taken", "node-a"),  # 409, but to this very node: a retry
            BindRequest("default", "vanishing", "node-a"),  # 404
            BindRequest("default", "ours", "node-b"),
        ]
    )

    assert [r.outcome for r in results] == [
        BindOutcome.CONFLICT,
        BindOutcome.BOUND,
        BindOutcome.GONE,
        BindOutcome.BOUND,
    ]
    assert "node-a" in results[0].error
    assert not Member.objects.filter(name="vanishing").exists()  # not retried next cycle
    assert Member.objects.get(name="ours").node == "node-b"


def test_a_failed_bind_call_is_reported_not_raised(cluster, kube_api):
    kube_api.create(pod("flaky"))
    wait_until(lambda: Member.objects.filter(name="flaky").exists(), what="pod mirrored")
    kube_api.fail_next("POST", r"/pods/flaky/binding$", 500)
    [result] = cluster.backend.bind([BindRequest("default", "flaky", "node-a")])
    assert result.outcome is BindOutcome.FAILED and "500" in result.error
    assert Member.objects.get(name="flaky").node is None


def placeholders(kube_api):
    return [
        p
        for p in kube_api.objects("v1/pods", "default")
        if (p["metadata"].get("labels") or {}).get(PLACEHOLDER_LABEL)
    ]


def test_placeholders_follow_reservations_and_go_when_the_member_binds(cluster, kube_api):
    kube_api.create(pod("held", cpu="2"))
    wait_until(lambda: Member.objects.filter(name="held").exists(), what="pod mirrored")
    Member.objects.filter(name="held").update(reserved_node="node-b")

    assert cluster.watcher.placeholders_reconcile() == (1, 0)
    [placeholder] = placeholders(kube_api)
    assert placeholder["spec"]["nodeName"] == "node-b"
    assert placeholder["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "2"}
    assert cluster.watcher.placeholders_reconcile() == (0, 0)  # idempotent
    # The placeholder is not mirrored as a gang member, nor as another scheduler's usage.
    assert not Member.objects.filter(name=placeholder["metadata"]["name"]).exists()
    assert not Node.objects.get(name="node-b").external_usage

    [result] = cluster.backend.bind([BindRequest("default", "held", "node-b")])
    assert result.outcome is BindOutcome.BOUND
    assert placeholders(kube_api) == []


def test_placeholders_are_removed_when_the_reservation_is_released(cluster, kube_api):
    kube_api.create(pod("waiting"))
    wait_until(lambda: Member.objects.filter(name="waiting").exists(), what="pod mirrored")
    Member.objects.filter(name="waiting").update(reserved_node="node-a")
    cluster.watcher.placeholders_reconcile()
    assert len(placeholders(kube_api)) == 1

    Member.objects.filter(name="waiting").update(reserved_node=None)  # e.g. the gang timed out
    assert cluster.watcher.placeholders_reconcile() == (0, 1)
    assert placeholders(kube_api) == []


def test_timeout_annotates_the_pods_and_releases_placeholders(cluster, kube_api):
    blocker = pod("blocker", cpu="3")  # runs first, on one node; too important to preempt
    blocker["spec"]["priority"] = 1000
    kube_api.create(blocker)
    wait_until(lambda: Member.objects.filter(name="blocker").exists(), what="pod mirrored")
    cluster.cycle()
    for i in range(3):  # a Koordinator NonStrict gang: accumulates reservations as room appears
        member = pod(f"slow-{i}", cpu="2")  # 2 fit beside the blocker
        member["metadata"]["annotations"] = {
            "gang.scheduling.koordinator.sh/name": "slow",
            "gang.scheduling.koordinator.sh/min-available": "3",
            "gang.scheduling.koordinator.sh/mode": "NonStrict",
            "gang.scheduling.koordinator.sh/waiting-time": "600s",
        }
        kube_api.create(member)
    wait_until(lambda: Member.objects.filter(gang__name="slow").count() == 3, what="the gang's pods")
    gang = Gang.objects.get(name="slow")
    cluster.cycle()
    assert Member.objects.filter(gang=gang, reserved_node__isnull=False).count() == 2
    cluster.watcher.placeholders_reconcile()
    assert len(placeholders(kube_api)) == 2

    Gang.objects.filter(pk=gang.pk).update(wait_seconds=0.0)  # its wait is over
    cluster.cycle()

    assert Gang.objects.get(pk=gang.pk).phase == "TimedOut"
    annotations = kube_api.get("v1/pods", "slow-0", "default")["metadata"].get("annotations") or {}
    assert annotations.get(TIMEOUT_ANNOTATION) == "true"
    cluster.watcher.placeholders_reconcile()
    assert placeholders(kube_api) == []


def test_kill_deletes_the_pods(cluster, kube_api, default_backend):
    from scheduler_core.services.operator import gang_kill

    names = submit_gang(kube_api, "victim", 2)
    wait_until(mirrored("victim", 2), what="the gang's pods in the database")
    cluster.cycle()
    assert all(bound_nodes(kube_api, names).values())

    gang_kill(gang=Gang.objects.get(name="victim"), by="olga")

    remaining = {p["metadata"]["name"] for p in kube_api.objects("v1/pods", "default")}
    assert not remaining & set(names)


def test_a_failed_pod_runs_the_restart_policy_and_makes_way_for_its_replacement(
    cluster, kube_api, default_backend
):
    names = submit_gang(kube_api, "mpi", 2)
    wait_until(mirrored("mpi", 2), what="the gang's pods in the database")
    cluster.cycle()
    for name in names:
        kube_api.patch("v1/pods", name, {"status": {"phase": "Running"}}, "default")
    wait_until(lambda: Gang.objects.get(name="mpi").phase == "Running", what="the gang to run")

    kube_api.patch("v1/pods", names[0], {"status": {"phase": "Failed", "reason": "Error"}}, "default")

    # Below minMember: the whole gang restarts; its old pods are deleted for their controller
    # to replace, and the rows wait (unschedulable) for the replacements.
    wait_until(
        lambda: not ({p["metadata"]["name"] for p in kube_api.objects("v1/pods", "default")} & set(names)),
        what="the old pods deleted",
    )
    kube_api.create(pod(names[0], group="mpi"))  # the controller's replacement
    kube_api.create(pod(names[1], group="mpi"))
    wait_until(
        lambda: Member.objects.filter(gang__name="mpi", phase="Pending", terminating=False).count() == 2,
        what="the replacements mirrored",
    )
    cluster.cycle()
    assert all(bound_nodes(kube_api, names).values())


def test_the_backend_is_chosen_by_settings(kube_api, tmp_path, monkeypatch, settings):
    from scheduler_core.cluster import get_backend

    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
        f"clusters: [{{name: t, cluster: {{server: '{kube_api.url}'}}}}]\n"
        "contexts: [{name: t, context: {cluster: t, user: u}}]\nusers: [{name: u, user: {}}]\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    settings.CLUSTER_BACKEND = "kubernetes"
    backend = get_backend()
    assert backend.name == "kubernetes"
    assert client.CoreV1Api(backend.api).list_node().items == []
    readiness.ready_clear()
    assert backend.sync() is False  # no watcher leads: nothing is scheduled


def test_cycles_wait_for_the_watcher(kube_api):
    kube_api.add_crd(*PODGROUPS, kind="PodGroup")
    harness = Harness(kube_api)
    readiness.ready_clear()
    report = cycle_run(holder="test", backend=harness.backend)
    assert not report.ran
    with Background(harness):
        wait_until(harness.backend.sync, what="the watcher to be ready")
    harness.stop()
    assert harness.backend.sync() is False  # a stopped watcher clears the flag at once


VOLCANO = ("scheduling.volcano.sh", "v1beta1", "podgroups")


def test_optional_kinds_are_watched_only_when_served(cluster, kube_api):
    kinds = {(r.kind, getattr(r.mirror, "api_version", "v1")) for r in cluster.watcher.reflectors}
    assert ("PodGroup", "scheduling.x-k8s.io/v1alpha1") in kinds
    assert ("PodGroup", "scheduling.volcano.sh/v1beta1") not in kinds  # no Volcano here: skipped

    kube_api.add_crd(*VOLCANO, kind="PodGroup")
    cluster.stop()
    cluster.start()
    kinds = {(r.kind, getattr(r.mirror, "api_version", "v1")) for r in cluster.watcher.reflectors}
    assert ("PodGroup", "scheduling.volcano.sh/v1beta1") in kinds


def test_a_volcano_podgroup_is_scheduled_and_gets_its_status(cluster, kube_api):
    kube_api.add_crd(*VOLCANO, kind="PodGroup")
    cluster.stop()
    cluster.start()
    kube_api.create(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "vc", "namespace": "default"},
            "spec": {"minMember": 2, "queue": "default"},
        }
    )
    names = ["vc-0", "vc-1"]
    for name in names:
        member = pod(name)
        member["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "vc"}
        kube_api.create(member)
    wait_until(mirrored("vc", 2), what="the Volcano gang in the database")

    cluster.cycle()
    assert all(bound_nodes(kube_api, names).values())
    cluster.watcher.step()

    status = kube_api.get("scheduling.volcano.sh/v1beta1/podgroups", "vc", "default")["status"]
    assert status["phase"] == "Inqueue"  # bound, not yet running
    for name in names:
        kube_api.patch("v1/pods", name, {"status": {"phase": "Running"}}, "default")
    wait_until(lambda: Gang.objects.get(name="vc").phase == "Running", what="the gang to run")
    cluster.watcher.step()
    status = kube_api.get("scheduling.volcano.sh/v1beta1/podgroups", "vc", "default")["status"]
    assert status["phase"] == "Running" and status["running"] == 2


def test_an_upstream_podgroup_gets_a_scheduled_condition(cluster, kube_api):
    kube_api.add_crd("scheduling.k8s.io", "v1alpha2", "podgroups", kind="PodGroup")
    cluster.stop()
    cluster.start()
    kube_api.create(
        {
            "apiVersion": "scheduling.k8s.io/v1alpha2",
            "kind": "PodGroup",
            "metadata": {"name": "up", "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
        }
    )
    names = ["up-0", "up-1"]
    for name in names:
        member = pod(name)
        member["spec"]["schedulingGroup"] = {"podGroupName": "up"}
        kube_api.create(member)
    wait_until(mirrored("up", 2), what="the upstream gang in the database")
    cluster.watcher.step()
    [waiting] = kube_api.get("scheduling.k8s.io/v1alpha2/podgroups", "up", "default")["status"]["conditions"]
    assert (waiting["type"], waiting["status"]) == ("PodGroupScheduled", "False")

    cluster.cycle()
    assert all(bound_nodes(kube_api, names).values())
    cluster.watcher.step()
    [scheduled] = kube_api.get("scheduling.k8s.io/v1alpha2/podgroups", "up", "default")["status"][
        "conditions"
    ]
    assert scheduled["status"] == "True"


VOLCANO_JOBS = ("batch.volcano.sh", "v1alpha1", "jobs")


def test_a_volcano_job_whose_pods_fail_past_max_retry_ends_failed(cluster, kube_api, default_backend):
    kube_api.add_crd(*VOLCANO, kind="PodGroup")
    kube_api.add_crd(*VOLCANO_JOBS, kind="Job")
    cluster.stop()
    cluster.start()
    job = kube_api.create(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "vj", "namespace": "default"},
            "spec": {
                "minAvailable": 2,
                "schedulerName": "gangsched",
                "maxRetry": 1,
                "policies": [{"event": "PodFailed", "action": "RestartJob"}],
                "tasks": [{"name": "worker", "replicas": 2, "template": {"spec": {"containers": []}}}],
            },
        }
    )
    owner = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": "vj",
        "uid": job["metadata"]["uid"],
    }
    kube_api.create(  # what Volcano's job controller makes of it
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "vj", "namespace": "default", "ownerReferences": [owner]},
            "spec": {"minMember": 2},
        }
    )
    names = ["vj-worker-0", "vj-worker-1"]

    def run_pods():
        uids = set()
        for name in names:
            member = pod(name)
            member["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "vj"}
            uids.add(kube_api.create(member)["metadata"]["uid"])
        pending = Member.objects.filter(gang__name="vj", phase="Pending", terminating=False)
        wait_until(  # the mirror has seen these very pods, not the rows of the ones they replace
            lambda: set(pending.values_list("uid", flat=True)) == uids,
            what="the job's pods in the database",
        )
        cluster.cycle()
        assert all(bound_nodes(kube_api, names).values())
        for name in names:
            kube_api.patch("v1/pods", name, {"status": {"phase": "Running"}}, "default")
        wait_until(lambda: Gang.objects.get(name="vj").phase == "Running", what="the job to run")

    wait_until(
        lambda: Gang.objects.filter(name="vj", max_retry=1, failure_policy="RestartJob").exists(),
        what="policy",
    )
    run_pods()
    kube_api.patch("v1/pods", names[0], {"status": {"phase": "Failed", "reason": "Error"}}, "default")
    wait_until(lambda: Gang.objects.get(name="vj").retries == 1, what="the first restart")
    wait_until(
        lambda: not ({p["metadata"]["name"] for p in kube_api.objects("v1/pods", "default")} & set(names)),
        what="the old pods deleted",
    )
    run_pods()  # the controller's replacements run again
    kube_api.patch("v1/pods", names[1], {"status": {"phase": "Failed", "reason": "Error"}}, "default")

    gang = wait_until(lambda: Gang.objects.filter(name="vj", phase="Failed").first(), what="the job to fail")
    assert gang.message.startswith("maxRetry 1 exceeded")
    cluster.watcher.step()  # and kubectl describe shows it
    failed = [e for e in kube_api.objects("v1/events", "default") if e.get("reason") == "GangFailed"]
    assert any("maxRetry 1 exceeded" in e["message"] for e in failed)
