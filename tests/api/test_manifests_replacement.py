"""POST /api/v1/manifests/ as a user replacing a deleted bare member of their Koordinator gang:
refused while the gang already holds total-number pods, accepted once the old one is deleted,
and the replacement runs with the gang (match-policy once-satisfied)."""

import pytest

from scheduler_core.models import Gang, Member
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.delete import pod_delete
from scheduler_core.services.kubelet import kubelet_tick
from tests.services.test_bare_pods import NODES, koordinator

from .conftest import errors

URL = "/api/v1/manifests/"


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: True)


def run() -> None:
    cycle_run(holder="test")
    kubelet_tick()


def post(client, items: list[dict]):
    return client.post(URL, {"apiVersion": "v1", "kind": "List", "items": items}, format="json")


def test_a_replacement_is_refused_while_the_old_member_exists_and_runs_once_it_is_deleted(as_olga, as_alice):
    assert post(as_olga, NODES).status_code == 201
    assert post(as_alice, koordinator("worker-1", "worker-2", "worker-3")).status_code == 201
    run()

    refused = post(as_alice, koordinator("worker-4"))
    assert refused.status_code == 400
    ((field, reason),) = errors(refused)
    assert field == "items[0].metadata.name"  # the pod that would be one too many
    assert reason == "gang ml/train expects 3 members in all (total-number), but would have 4"
    assert not Member.objects.filter(name="worker-4").exists()

    assert pod_delete(namespace="ml", name="worker-1", by="alice") == "removed"
    accepted = post(as_alice, koordinator("worker-4"))
    assert accepted.status_code == 201, accepted.content
    assert "pod/worker-4 created" in accepted.json()["lines"]
    run()
    gang = Gang.objects.get(namespace="ml", name="train")
    assert sorted(gang.members.filter(phase="Running").values_list("name", flat=True)) == [
        "worker-2",
        "worker-3",
        "worker-4",
    ]
