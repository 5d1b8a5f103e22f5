"""GET /api/v1/events/ as a history: filters by gang, queue, kind, actor and time, who did each
event, cursor pages, a 400 naming the field for a bad value, and the schema's parameters."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml
from django.core.management import call_command
from django.utils import timezone

from scheduler_core.models import GangEvent
from tests.api.conftest import errors
from tests.cast import make_gang

pytestmark = pytest.mark.django_db

T0 = dt.datetime(2025, 5, 1, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def history(db):
    train = make_gang("ml", "train", submitter="alice", queue="gpu")
    detect = make_gang("cv", "detect", submitter="bob", queue="cpu")
    GangEvent.objects.filter(gang=train).update(created=T0)
    GangEvent.objects.filter(gang=detect).update(created=T0 + dt.timedelta(minutes=1))
    for minute, gang, kind, details in [
        (2, train, "bound", {}),
        (3, train, "killed", {"by": "olga"}),
        (4, detect, "timed_out", {}),
    ]:
        created = T0 + dt.timedelta(minutes=minute)
        GangEvent.objects.create(gang=gang, kind=kind, details=details, created=created)


def listed(client, **query) -> list[tuple]:
    response = client.get("/api/v1/events/", query)
    assert response.status_code == 200, response.content
    return [(e["gang"], e["kind"], e["actor"], e["queue"]) for e in response.json()["results"]]


def test_each_event_says_its_queue_and_who_did_it(as_olga, history):
    assert listed(as_olga) == [
        ("cv/detect", "timed_out", "scheduler", "cpu"),
        ("ml/train", "killed", "olga", "gpu"),
        ("ml/train", "bound", "scheduler", "gpu"),
        ("cv/detect", "created", "bob", "cpu"),
        ("ml/train", "created", "alice", "gpu"),
    ]


@pytest.mark.parametrize(
    ("query", "kinds"),
    [
        ({"gang": "train"}, ["killed", "bound", "created"]),
        ({"gang": "cv/detect"}, ["timed_out", "created"]),
        ({"queue": "cpu"}, ["timed_out", "created"]),
        ({"kind": ["killed", "timed_out"]}, ["timed_out", "killed"]),
        ({"actor": "olga"}, ["killed"]),
        ({"actor": "bob"}, ["created"]),
        ({"actor": "scheduler"}, ["timed_out", "bound"]),
        ({"from": "2025-05-01T12:02:00Z"}, ["timed_out", "killed", "bound"]),
        ({"to": "2025-05-01T12:01:00Z"}, ["created", "created"]),
        ({"from": "2025-05-01T14:02:00+02:00", "to": "2025-05-01T12:03:00"}, ["killed", "bound"]),
    ],
)
def test_it_filters(as_olga, history, query, kinds):
    assert [row[1] for row in listed(as_olga, **query)] == kinds


def test_since_counts_back_from_now(as_olga, history):
    gang = make_gang("ml", "fresh")
    GangEvent.objects.create(gang=gang, kind="bound", created=timezone.now() - dt.timedelta(minutes=30))
    assert [row[:2] for row in listed(as_olga, since="1h")] == [
        ("ml/fresh", "created"),
        ("ml/fresh", "bound"),
    ]
    assert len(listed(as_olga, since="24h")) == 2


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"kind": "exploded"}, "kind"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2025-02-30T00:00:00Z"}, "to"),
        ({"from": "2025-05-02T00:00:00Z", "to": "2025-05-01T00:00:00Z"}, "to"),
        ({"since": "1 hour"}, "since"),
        ({"since": "0m"}, "since"),
        ({"gang": "ml/\x00"}, "gang"),
        ({"actor": "\x00"}, "actor"),
    ],
)
def test_a_bad_value_is_a_400_naming_the_field(as_olga, history, query, field):
    response = as_olga.get("/api/v1/events/", query)
    assert response.status_code == 400
    assert field in [f for f, _ in errors(response)], response.json()


def test_pages_follow_the_cursor(as_olga, history):
    first = as_olga.get("/api/v1/events/", {"pageSize": 2}).json()
    second = as_olga.get(first["next"]).json()
    third = as_olga.get(second["next"]).json()
    kinds = [e["kind"] for page in (first, second, third) for e in page["results"]]
    assert kinds == ["timed_out", "killed", "bound", "created", "created"]
    assert third["next"] is None


def test_the_schema_lists_the_filters(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--file", str(out), "--validate", "--fail-on-warn")
    operation = yaml.safe_load(out.read_text())["paths"]["/api/v1/events/"]["get"]
    names = {parameter["name"] for parameter in operation["parameters"]}
    assert {"gang", "queue", "kind", "actor", "from", "to", "since", "cursor", "pageSize"} <= names
    result = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert "$ref" in result or "properties" in result
