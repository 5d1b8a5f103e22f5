"""PodGroups that an operator running in the cluster makes, read and scheduled by the Kubernetes
backend as it reads a user's (against the emulated API server, through the official client).

Each case re-expresses what the operator's own code writes:
- mpi-operator with ``--gang-scheduling=gangsched``: a scheduler-plugins PodGroup named after the
  MPIJob, owned by it, minMember = workers + launcher, and pods labelled with it whose
  schedulerName the operator overwrites with the flag's value (kubeflow/mpi-operator,
  ``pkg/controller/podgroup.go``: ``newPodGroup`` and ``decoratePodTemplateSpec`` of
  ``SchedulerPluginsCtrl``);
- KubeRay with ``--batch-scheduler=volcano``: a Volcano PodGroup ``ray-<cluster>-pg`` of the head
  and the workers, and pods annotated with it whose schedulerName KubeRay overwrites with
  ``volcano`` (ray-project/kuberay, ``ray-operator/controllers/ray/batchscheduler/volcano/``):
  gangsched takes them only with ``volcano`` among ``GANGSCHED_SCHEDULER_ALIASES``;
- KAI-Scheduler's podgrouper: a ``scheduling.run.ai/v2alpha2`` PodGroup with subGroups, and pods
  annotated ``pod-group-name`` and labelled with their subgroup (NVIDIA/KAI-Scheduler,
  ``pkg/apis/scheduling/v2alpha2/podgroup_types.go``); deleting the PodGroup removes every
  subgroup's gang.
"""

from __future__ import annotations

import pytest

from scheduler_core.models import Gang, GangGroup, Member
from tests.kube.cluster import bound_nodes, node, pod, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

VOLCANO = ("scheduling.volcano.sh", "v1beta1", "podgroups")
KAI = ("scheduling.run.ai", "v2alpha2", "podgroups")


@pytest.fixture
def nodes():
    return [node(name, cpu="4") for name in ("node-a", "node-b", "node-c")]


def owned_by(obj: dict, kind: str, api_version: str, name: str) -> dict:
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{name}", "controller": True}
    ]
    return obj


def restart_with(cluster, kube_api, *crds, aliases=None) -> None:
    for group, version, plural in crds:
        kube_api.add_crd(group, version, plural, kind="PodGroup")
    if aliases is not None:
        cluster.watcher.aliases = aliases
    cluster.stop()
    cluster.start()


def test_an_mpijob_s_podgroup_made_by_mpi_operator_is_scheduled(cluster, kube_api):
    mpijob = ("MPIJob", "kubeflow.org/v2beta1", "pi")
    podgroup = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {"minMember": 3, "scheduleTimeoutSeconds": 0, "minResources": {"cpu": "6"}},
    }
    kube_api.create(owned_by(podgroup, *mpijob))
    names = ["pi-launcher", "pi-worker-0", "pi-worker-1"]
    for name in names:
        member = owned_by(pod(name, group="pi", cpu="2"), *mpijob)
        member["metadata"]["labels"]["training.kubeflow.org/job-role"] = (
            "launcher" if "launcher" in name else "worker"
        )
        kube_api.create(member)
    wait_until(
        lambda: (
            Member.objects.filter(gang__name="pi").count() == 3
            and Gang.objects.filter(name="pi", provisional=False).exists()
        ),
        what="the MPIJob's PodGroup and pods in the database",
    )
    gang = Gang.objects.get(name="pi")
    assert gang.min_member == 3  # the launcher counts, as mpi-operator counts it
    assert gang.wait_seconds == 60  # its scheduleTimeoutSeconds 0: the plugin's default

    report = cluster.cycle()

    assert report.pods_bound == 3 and all(bound_nodes(kube_api, names).values())
    owners = set(Member.objects.filter(gang=gang).values_list("owner", flat=True))
    assert owners == {"mpijob.kubeflow.org/pi"}  # what `get gangs` shows as OWNER


def test_kuberay_pods_naming_volcano_are_taken_only_as_an_alias(cluster, kube_api, settings):
    restart_with(cluster, kube_api, VOLCANO)
    cluster_owner = ("RayCluster", "ray.io/v1", "raycluster-mini")
    podgroup = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "ray-raycluster-mini-pg", "namespace": "default"},
        "spec": {"minMember": 2, "minResources": {"cpu": "4"}},
    }
    kube_api.create(owned_by(podgroup, *cluster_owner))
    names = ["raycluster-mini-head-abcde", "raycluster-mini-small-group-worker-fghij"]
    for name in names:
        member = owned_by(pod(name, cpu="2", scheduler="volcano"), *cluster_owner)
        member["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "ray-raycluster-mini-pg"}
        kube_api.create(member)
    wait_until(lambda: Gang.objects.filter(name="ray-raycluster-mini-pg").exists(), what="the PodGroup")
    # Without the alias these pods are Volcano's: gangsched neither takes nor binds them.
    assert not Member.objects.filter(name__in=names).exists()
    cluster.cycle()
    assert not any(bound_nodes(kube_api, names).values())

    settings.GANGSCHED_SCHEDULER_ALIASES = ["volcano"]
    restart_with(cluster, kube_api, aliases=["volcano"])
    wait_until(
        lambda: Member.objects.filter(gang__name="ray-raycluster-mini-pg").count() == 2,
        what="the Ray pods in their gang",
    )
    report = cluster.cycle()
    assert report.pods_bound == 2 and all(bound_nodes(kube_api, names).values())


def test_a_kai_podgroup_with_subgroups_is_one_gang_group_and_goes_with_its_podgroup(
    cluster, kube_api, settings
):
    settings.GANGSCHED_SCHEDULER_ALIASES = ["kai-scheduler"]
    restart_with(cluster, kube_api, KAI, aliases=["kai-scheduler"])
    kube_api.create(
        {
            "apiVersion": "scheduling.run.ai/v2alpha2",
            "kind": "PodGroup",
            "metadata": {"name": "disagg", "namespace": "default"},
            "spec": {
                "minMember": 3,
                "queue": "default",
                "subGroups": [{"name": "prefill", "minMember": 1}, {"name": "decode", "minMember": 2}],
            },
        }
    )
    names = {"disagg-prefill-0": "prefill", "disagg-decode-0": "decode", "disagg-decode-1": "decode"}
    for name, subgroup in names.items():
        member = pod(name, cpu="2", scheduler="kai-scheduler")
        member["metadata"]["annotations"] = {"pod-group-name": "disagg"}
        member["metadata"]["labels"] = {"kai.scheduler/subgroup-name": subgroup}
        kube_api.create(member)
    wait_until(
        lambda: Member.objects.filter(gang__name__in=["disagg-prefill", "disagg-decode"]).count() == 3,
        what="the subgroups' pods in their gangs",
    )
    assert {g.name: g.min_member for g in Gang.objects.filter(group__key="default/disagg")} == {
        "disagg-prefill": 1,
        "disagg-decode": 2,
    }

    report = cluster.cycle()
    assert report.pods_bound == 3 and all(bound_nodes(kube_api, list(names)).values())

    for name in names:  # the pods finish, then KAI's owner deletes the PodGroup
        kube_api.patch("v1/pods", name, {"status": {"phase": "Succeeded"}}, "default")
    wait_until(
        lambda: not Member.objects.filter(name__in=list(names), phase__in=["Pending", "Running"]).exists(),
        what="the pods to finish",
    )
    kube_api.delete(f"{'/'.join(KAI[:2])}/{KAI[2]}", "disagg", "default")
    wait_until(
        lambda: not Gang.objects.filter(name__in=["disagg-prefill", "disagg-decode"]).exists(),
        what="both subgroup gangs gone with their PodGroup",
    )
    assert not GangGroup.objects.filter(key="default/disagg", gangs__isnull=False).exists()
