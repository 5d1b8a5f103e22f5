"""The API's gang objects carry their ``forecast``: the stored one, as the requester may read
it; null when the gang does not wait or forecasts are off; documented in the schema."""

from __future__ import annotations

from datetime import timedelta

import pytest
from drf_spectacular.generators import SchemaGenerator

from scheduler_core.models import Gang, GangForecast
from scheduler_core.services.forecasts import forecasts_run
from tests.api.conftest import client_for
from tests.stored_forecasts.world import queue_world

pytestmark = pytest.mark.django_db

FOREIGN = "blocked behind ml/second, which is first in the queue and has capacity reserved"


@pytest.fixture
def world():
    gangs = queue_world()
    forecasts_run()
    # The explanation named bob's gang: as the run stores such a message (test_privacy.py).
    GangForecast.objects.filter(gang=gangs["third"]).update(
        waiting_reason="BlockedBehind",
        waiting_message=FOREIGN,
        waiting_message_own="blocked behind another's",
    )
    return gangs


def forecast_of(client, name: str) -> dict | None:
    response = client.get(f"/api/v1/gangs/ml/{name}/")
    assert response.status_code == 200, response.content
    return response.json()["forecast"]


def test_the_detail_gives_the_operator_kueues_positions_and_the_message(world, olga):
    forecast = forecast_of(client_for(olga), "third")
    row = GangForecast.objects.get(gang=world["third"])
    assert forecast["status"] == "expected"
    assert forecast["positionsCount"] == "all"
    assert (forecast["positionInQueue"], forecast["positionInLocalQueue"], forecast["positionInCluster"]) == (
        2,
        2,
        2,
    )
    assert forecast["waitingFor"] == {"reason": "BlockedBehind", "message": FOREIGN}
    assert forecast["startP50"].startswith(row.start_p50.isoformat()[:19])
    assert forecast["startP10"] <= forecast["startP50"] <= forecast["startP90"]
    made = GangForecast.objects.get(gang=world["third"]).made_at
    assert forecast["staleAfter"].startswith((made + timedelta(seconds=90)).isoformat()[:19])


def test_the_submitter_reads_their_own_count_and_no_name_of_anothers(world, alice):
    forecast = forecast_of(client_for(alice), "third")
    assert forecast["positionsCount"] == "own"
    assert (forecast["positionInQueue"], forecast["positionInLocalQueue"], forecast["positionInCluster"]) == (
        1,
        1,
        1,
    )
    assert forecast["waitingFor"]["message"] == "blocked behind another's"
    assert "second" not in str(forecast)


@pytest.mark.parametrize("query", [{}, {"phase": "Pending"}])  # the hand-written list and the ORM's
def test_the_list_gives_each_waiting_gang_its_forecast(world, alice, olga, query):
    for user, ahead in ((alice, {"first": 0, "third": 1}), (olga, {"first": 0, "second": 1, "third": 2})):
        rows = client_for(user).get("/api/v1/gangs/", query).json()["results"]
        forecasts = {row["name"]: row["forecast"] for row in rows}
        assert {name: f["positionInQueue"] for name, f in forecasts.items() if f} == ahead
        if not query:
            assert forecasts["running"] is None  # it runs: nothing to forecast


def test_a_gang_that_started_since_the_run_shows_no_forecast(world, olga):
    Gang.objects.filter(pk=world["first"].pk).update(phase="Scheduling", satisfied=True)
    assert forecast_of(client_for(olga), "first") is None


def test_no_forecast_is_shown_while_forecasts_are_off(world, olga, settings):
    settings.GANGSCHED_FORECAST_INTERVAL_S = 0
    assert forecast_of(client_for(olga), "third") is None


def test_the_schema_documents_the_forecast_object():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    gang = components["GangListOutput"]["properties"]["forecast"]
    assert gang.get("nullable") is True
    forecast = components["GangForecastOutput"]["properties"]
    assert {
        "madeAt",
        "staleAfter",
        "startP10",
        "startP50",
        "startP90",
        "positionsCount",
        "waitingFor",
    } <= set(forecast)
    assert "positionsCount" in schema["components"]["schemas"]["GangForecastOutput"]["required"]
    assert "forecast" in components["GangDetailOutput"]["properties"]
