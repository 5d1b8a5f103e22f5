"""/healthz against the real PostgreSQL and Redis; the Celery check is pointed at brokers where we
know whether a worker listens, so the outcome does not depend on what else runs on the machine."""

import json

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import connection
from django.test import override_settings

from dashboard import health
from gangsched.celery import app as celery_app

pytestmark = pytest.mark.django_db

CLOSED_PORT_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1


def celery_up():
    return health.CheckResult(True, {"workers": ["worker@test"]})


def test_it_answers_200_when_everything_is_up(client, monkeypatch):
    monkeypatch.setattr(health, "check_celery", celery_up)

    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {
            "database": {"ok": True, "detail": "SELECT 1 answered"},
            "redis": {"ok": True, "detail": "PING answered"},
            "celery": {"ok": True, "detail": {"workers": ["worker@test"]}},
        },
    }


def test_it_answers_503_when_no_celery_worker_answers(client):
    # The test broker is Redis database 15, where no worker runs during tests.
    response = client.get("/healthz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["redis"]["ok"] is True
    assert body["checks"]["celery"]["ok"] is False
    assert body["checks"]["celery"]["detail"]["workers"] == []
    assert "no worker answered" in body["checks"]["celery"]["detail"]["error"]


def test_it_answers_503_when_redis_is_down(client, monkeypatch):
    monkeypatch.setattr(health, "check_celery", celery_up)

    with override_settings(REDIS_URL=CLOSED_PORT_URL):
        response = client.get("/healthz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["redis"]["ok"] is False
    assert "Connection" in body["checks"]["redis"]["detail"]
    assert body["checks"]["database"]["ok"] is True


def test_celery_check_reports_a_broker_that_is_down():
    # Not made the current app (Celery's default): the tasks this process sends later, in other
    # tests, would go to its broker.
    app = celery_app.__class__("down", broker=CLOSED_PORT_URL, set_as_current=False)

    result = health.check_celery(app)

    assert result.ok is False
    assert result.detail["workers"] == []
    assert "OperationalError" in result.detail["error"]


def test_celery_check_lists_the_workers_that_answer():
    # A real worker thread on the test broker: the ping goes through Redis and back.
    try:
        with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=10) as worker:
            result = health.check_celery(celery_app, timeout=2.0)
    finally:  # the worker named this process's sessions as the scheduler's (session_names.py)
        connection.settings_dict["OPTIONS"].pop("application_name", None)
        connection.close()

    assert result.ok is True
    # Other test runs on this machine may have workers on the same broker: look for ours.
    assert worker.hostname in result.detail["workers"]


def test_it_rejects_other_methods(client):
    assert client.post("/healthz").status_code == 405


def test_report_shape_with_custom_checks():
    report = health.health_report(
        {"a": lambda: health.CheckResult(True, "fine"), "b": lambda: health.CheckResult(False, "broken")}
    )

    assert report == {
        "status": "degraded",
        "checks": {"a": {"ok": True, "detail": "fine"}, "b": {"ok": False, "detail": "broken"}},
    }


def write_restarts(path, children) -> str:
    path.write_text(json.dumps({"supervisor_pid": 1, "children": children}))
    return str(path)


def test_without_make_run_there_is_no_restarts_field(client, monkeypatch, settings):
    monkeypatch.setattr(health, "check_celery", celery_up)
    settings.GANGSCHED_RESTARTS_FILE = ""

    assert "restarts" not in client.get("/healthz").json()


def test_under_make_run_it_reports_each_process_restarts(client, monkeypatch, settings, tmp_path):
    monkeypatch.setattr(health, "check_celery", celery_up)
    worker = {
        "restarts": 3,
        "last_exit_status": -9,
        "last_exit_at": "2026-11-28T20:31:01Z",
        "last_restart_at": "2026-11-28T20:31:05Z",
        "next_restart_in_s": 4,
    }
    settings.GANGSCHED_RESTARTS_FILE = write_restarts(
        tmp_path / "restarts.json", {"web": {"restarts": 0}, "worker": worker}
    )

    response = client.get("/healthz")

    assert response.status_code == 200  # restarts keep the loop going: not a failed check
    assert response.json()["restarts"] == {
        "web": {"restarts": 0},
        "worker": {
            "restarts": 3,
            "last_exit_status": -9,
            "last_exit_at": "2026-11-28T20:31:01Z",
            "last_restart_at": "2026-11-28T20:31:05Z",
        },
    }


@pytest.mark.parametrize("content", [None, "", "{not json", '{"children": 3}', "[]"])
def test_a_missing_or_broken_restarts_file_leaves_the_field_out(
    client, monkeypatch, settings, tmp_path, content
):
    monkeypatch.setattr(health, "check_celery", celery_up)
    path = tmp_path / "restarts.json"
    if content is not None:
        path.write_text(content)
    settings.GANGSCHED_RESTARTS_FILE = str(path)

    response = client.get("/healthz")

    assert response.status_code == 200 and "restarts" not in response.json()
