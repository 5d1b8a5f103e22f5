"""GET /api/v1/gangs/?application=: a YuniKorn application's gangs, found by its applicationId,
after its originator pod was applied through the manifest endpoint."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db

OWN = Path(__file__).parents[1] / "declarations" / "manifests"

MANIFESTS = "/api/v1/manifests/"
GANGS = "/api/v1/gangs/"


def keys(response) -> list[str]:
    assert response.status_code == 200, response.content
    return sorted(gang["key"] for gang in response.json()["results"])


@pytest.fixture
def applied(as_alice, monkeypatch):
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: True)
    text = (OWN / "yunikorn-originator.yaml").read_text()
    response = as_alice.post(MANIFESTS, text, content_type="application/yaml")
    assert response.status_code == 201, response.content


def test_the_filter_returns_every_gang_of_the_application_and_nothing_else(as_alice, applied):
    assert keys(as_alice.get(GANGS, {"application": "etl-0042"})) == [
        "data/etl-0042",
        "data/etl-0042-workers",
    ]
    assert keys(as_alice.get(GANGS, {"application": "report-7"})) == ["data/report-7-driver"]
    assert keys(as_alice.get(GANGS, {"application": "etl-0042", "search": "workers"})) == [
        "data/etl-0042-workers"
    ]
    assert keys(as_alice.get(GANGS, {"application": "etl"})) == []  # an exact id, not a prefix


def test_another_submitter_finds_nothing_of_it(as_bob, applied):
    assert keys(as_bob.get(GANGS, {"application": "etl-0042"})) == []


def test_each_gang_answer_names_its_application(as_alice, applied):
    rows = as_alice.get(GANGS, {"application": "etl-0042"}).json()["results"]
    assert {row["application"] for row in rows} == {"etl-0042"}
    detail = as_alice.get("/api/v1/gangs/data/etl-0042-workers/").json()
    assert detail["application"] == "etl-0042"
