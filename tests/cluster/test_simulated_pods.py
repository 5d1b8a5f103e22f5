"""SimulatedCluster's other calls (delete, annotate, hold) and the backend registry."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from scheduler_core.cluster import ClusterError, get_backend
from scheduler_core.cluster.simulated import DELETED_REASON, SimulatedCluster
from scheduler_core.models import Member, MemberPhase
from tests.cluster.world import cpu_node, gang, member

pytestmark = pytest.mark.django_db


def test_a_deleted_pod_is_failed_with_its_reason_and_keeps_its_node_for_history():
    cpu_node("cpu-a")
    gang("train", size=1)
    Member.objects.filter(name="train-0").update(node="cpu-a", phase=MemberPhase.RUNNING)

    assert SimulatedCluster(failure_rate=0.0).delete_pod("ml", "train-0", "preempted by ml/urgent") is True

    pod = member("train-0")
    assert (pod.phase, pod.node) == (MemberPhase.FAILED, "cpu-a")
    assert pod.finished_at is not None
    assert pod.annotations[DELETED_REASON] == "preempted by ml/urgent"


def test_deleting_a_pod_already_gone_returns_false():
    gang("train", size=1)
    cluster = SimulatedCluster(failure_rate=0.0)
    cluster.delete_pod("ml", "train-0", "first")

    assert cluster.delete_pod("ml", "train-0", "second") is False
    assert cluster.delete_pod("ml", "ghost", "never there") is False
    assert member("train-0").annotations[DELETED_REASON] == "first"


def test_an_injected_delete_failure_raises_and_changes_nothing():
    gang("train", size=1)

    with pytest.raises(ClusterError, match="injected failure"):
        SimulatedCluster(failure_rate=1.0).delete_pod("ml", "train-0", "evict")

    assert member("train-0").phase == MemberPhase.PENDING


def test_annotations_are_merged_and_a_missing_pod_is_ignored():
    gang("train", size=1)
    Member.objects.filter(name="train-0").update(annotations={"team": "nlp"})
    cluster = SimulatedCluster(failure_rate=0.0)

    cluster.annotate_pod("ml", "train-0", {"gang.scheduling.koordinator.sh/timeout": "true"})
    cluster.annotate_pod("ml", "ghost", {"a": "b"})

    assert member("train-0").annotations == {"team": "nlp", "gang.scheduling.koordinator.sh/timeout": "true"}


def test_the_database_is_the_cluster_so_it_is_always_synced_and_holds_are_no_ops():
    cluster = SimulatedCluster(failure_rate=0.0)

    assert cluster.sync() is True
    assert cluster.hold([]) is None and cluster.unhold([]) is None


def test_the_backend_comes_from_the_setting_and_is_kept():
    assert isinstance(get_backend(), SimulatedCluster)
    assert get_backend() is get_backend()


@override_settings(GANGSCHED_SIM_FAILURE_RATE=0.5, GANGSCHED_SIM_SEED=11)
def test_failure_injection_is_read_from_the_settings():
    backend = get_backend()
    twin = SimulatedCluster(seed=11)  # the rate comes from the settings too

    assert backend.failure_rate == twin.failure_rate == 0.5
    assert [backend._injected() for _ in range(20)] == [twin._injected() for _ in range(20)]


@override_settings(GANGSCHED_SIM_FAILURE_RATE=2.0)
def test_a_failure_rate_outside_0_to_1_is_a_configuration_error():
    with pytest.raises(ImproperlyConfigured, match="GANGSCHED_SIM_FAILURE_RATE"):
        get_backend()


def test_the_kubernetes_backend_without_a_cluster_says_how_to_configure_one(monkeypatch, tmp_path):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config either
    with pytest.raises(ImproperlyConfigured, match="set KUBECONFIG"):
        get_backend("kubernetes")
