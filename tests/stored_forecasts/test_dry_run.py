"""A dry run says when its gangs would start: ``forecast_with`` on the snapshot built inside the
dry run's transaction, where the would-be gangs exist; when it cannot, it says why (no 500)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from scheduler_core.models import Gang, GangForecast
from scheduler_core.services import forecasts
from tests.api.conftest import client_for
from tests.stored_forecasts.world import queue_world

pytestmark = pytest.mark.django_db

JOB = {
    "namespace": "ml",
    "name": "fourth",
    "minMember": 2,
    "pods": [
        {"name": f"fourth-{i}", "requests": {"cpu": "4", "memory": "1Gi"}, "durationSeconds": 60}
        for i in range(2)
    ],
}


def dry_submit(user) -> dict:
    response = client_for(user).post("/api/v1/gangs/?dryRun=All", JOB, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_the_dry_run_answers_when_the_gang_would_start(alice, olga):
    queue_world()
    answer = dry_submit(alice)
    assert answer["dryRun"] is True
    forecast = answer["forecast"]
    assert forecast["status"] == "expected"
    # Behind the three waiting gangs: alice's two count for her, all three for an operator.
    assert (forecast["positionsCount"], forecast["positionInQueue"]) == ("own", 2)
    assert dry_submit(olga)["forecast"]["positionInQueue"] == 3
    assert not Gang.objects.filter(name="fourth").exists() and not GangForecast.objects.exists()


def test_a_manifest_dry_run_too(alice):
    queue_world()
    manifest = (
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: pg, namespace: ml}\n"
        "spec: {minMember: 1}\n---\napiVersion: v1\nkind: Pod\n"
        "metadata: {name: pg-0, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: pg}}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: '4'}}}]}\n"
    )
    response = client_for(alice).post(
        "/api/v1/manifests/?dryRun=All", manifest, content_type="application/yaml"
    )
    assert response.status_code == 201, response.content
    (gang,) = response.json()["gangs"]
    assert gang["forecast"]["status"] in ("expected", "none", "later")


def test_a_forecast_that_fails_is_said_not_raised(alice, monkeypatch):
    queue_world()

    def boom(*args, **kwargs):
        raise RuntimeError("no")

    monkeypatch.setattr(forecasts, "forecast_with", boom)
    answer = dry_submit(alice)
    assert answer["forecast"] is None
    assert answer["forecastNote"] == "the forecast failed (the scheduler's log says why)"


def test_a_cluster_too_large_is_not_forecast_in_a_request(alice, monkeypatch):
    queue_world()
    monkeypatch.setattr(forecasts, "DRY_RUN_MAX_PODS", 3)
    assert dry_submit(alice)["forecastNote"] == "the cluster has over 3 pods: too many to forecast here"


def test_forecasts_off_are_said(alice, settings):
    queue_world()
    settings.GANGSCHED_FORECAST_INTERVAL_S = 0
    assert dry_submit(alice)["forecastNote"] == "forecasts are off (GANGSCHED_FORECAST_INTERVAL_S is 0)"


def test_apply_dry_run_server_prints_when_it_would_start(tmp_path):
    queue_world()
    path = tmp_path / "job.yaml"
    path.write_text(
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: pg, namespace: ml}\n"
        "spec: {minMember: 2}\n---\n"
        + "---\n".join(
            "apiVersion: v1\nkind: Pod\n"
            f"metadata: {{name: pg-{i}, namespace: ml, labels: {{scheduling.x-k8s.io/pod-group: pg}}, "
            "annotations: {gangsched.io/duration-seconds: '60'}}\n"
            "spec: {containers: [{name: c, resources: {requests: {cpu: '4'}}}]}\n"
            for i in range(2)
        )
    )
    out = io.StringIO()
    call_command("apply", "-f", str(path), "--dry-run=server", stdout=out)
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("gang ml/pg would start in ~") and last.endswith("(server dry run)"), last
    assert not Gang.objects.filter(name="pg").exists()
