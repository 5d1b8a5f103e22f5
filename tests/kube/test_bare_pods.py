"""On Kubernetes: a bare pod deleted in the cluster is gone for gangsched too, and its gang keeps
running; a pod whose ownerReferences name a controller still runs its gang's restart policy."""

from __future__ import annotations

import pytest

from scheduler_core.models import Gang, Member
from tests.kube.cluster import bound_nodes, pod, podgroup, wait_until
from tests.kube.test_backend import mirrored, submit_gang

pytestmark = pytest.mark.django_db(transaction=True)

JOB = {"apiVersion": "batch/v1", "kind": "Job", "name": "mpi", "uid": "j1", "controller": True}


def running_gang(cluster, kube_api, names):
    wait_until(mirrored("mpi", len(names)), what="the gang's pods in the database")
    cluster.cycle()
    for name in names:
        kube_api.patch("v1/pods", name, {"status": {"phase": "Running"}}, "default")
    wait_until(lambda: Gang.objects.get(name="mpi").phase == "Running", what="the gang to run")


def api_pods(kube_api) -> set[str]:
    return {p["metadata"]["name"] for p in kube_api.objects("v1/pods", "default")}


def test_a_bare_pod_deleted_in_the_cluster_is_gone_and_its_replacement_joins(
    cluster, kube_api, default_backend
):
    names = submit_gang(kube_api, "mpi", 2)
    running_gang(cluster, kube_api, names)

    kube_api.delete("v1/pods", names[0], "default")
    wait_until(lambda: not Member.objects.filter(name=names[0]).exists(), what="the row removed")
    cluster.cycle()
    assert names[1] in api_pods(kube_api)  # its sibling was not deleted by a gang restart
    assert Gang.objects.get(name="mpi").satisfied

    kube_api.create(pod("mpi-new", group="mpi"))  # its creator's replacement, a new name
    wait_until(lambda: Member.objects.filter(name="mpi-new", gang__name="mpi").exists(), what="mirrored")
    cluster.cycle()
    assert bound_nodes(kube_api, ["mpi-new"])["mpi-new"]  # 1 running + 1 new reach minMember 2


def test_a_pod_with_a_controller_runs_its_gangs_restart_policy_when_deleted(
    cluster, kube_api, default_backend
):
    kube_api.create(podgroup("mpi", 2))
    names = ["mpi-0", "mpi-1"]
    for name in names:
        owned = pod(name, group="mpi")
        owned["metadata"]["ownerReferences"] = [JOB]  # created by a Job's controller
        kube_api.create(owned)
    running_gang(cluster, kube_api, names)
    assert set(Member.objects.filter(gang__name="mpi").values_list("owner", flat=True)) == {"job.batch/mpi"}

    kube_api.delete("v1/pods", names[0], "default")
    # Below minMember: the whole gang restarts; its other pod is deleted for its controller.
    wait_until(lambda: names[1] not in api_pods(kube_api), what="the sibling deleted by the restart")
