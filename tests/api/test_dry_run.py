"""``?dryRun=All`` on POST /api/v1/gangs/ and /api/v1/manifests/ (dashboard/api/dry_run.py): the
real submission's checks and answer, plus ``"dryRun": true``, and nothing written, sent,
triggered or queued. Each "nothing" is checked beside a real submission that does it, so a spy
that saw nothing is known to be looking."""

from __future__ import annotations

import pytest
from celery.signals import before_task_publish
from channels.layers import get_channel_layer
from django.apps import apps

from scheduler_core import tasks
from scheduler_core.events import events_publish
from scheduler_core.models import Gang, Queue, QueueAccess
from tests.cast import make_gang
from tests.reference import REFERENCE

from .conftest import errors, job
from .test_gang_submit import REFUSALS

pytestmark = pytest.mark.django_db

GANGS = "/api/v1/gangs/"
MANIFESTS = "/api/v1/manifests/"
DRY = "?dryRun=All"
YAML = "application/yaml"


def row_counts() -> dict[str, int]:
    """Rows of every model of every app (the scheduler's, the dashboard's, auth, tokens...)."""
    return {model._meta.label: model._base_manager.count() for model in apps.get_models()}


class Wire:
    """What leaves the process but through the database: channel-layer messages, Celery
    publishes, cycle triggers."""

    def __init__(self, monkeypatch):
        self.messages: list = []
        self.published: list = []
        self.triggers = 0
        layer = get_channel_layer()

        async def group_send(group, message):
            self.messages.append((group, message))

        async def send(channel, message):
            self.messages.append((channel, message))

        monkeypatch.setattr(layer, "group_send", group_send)
        monkeypatch.setattr(layer, "send", send)
        monkeypatch.setattr(tasks._waker, "request", self._trigger)
        before_task_publish.connect(self._published, weak=False)

    def _trigger(self) -> None:
        self.triggers += 1

    def _published(self, sender=None, **kwargs) -> None:
        self.published.append(sender)

    def close(self) -> None:
        before_task_publish.disconnect(self._published)

    def quiet(self) -> bool:
        return not self.messages and not self.published and self.triggers == 0


@pytest.fixture
def wire(monkeypatch):
    spy = Wire(monkeypatch)
    yield spy
    spy.close()


def submit(client, url, body, *, dry: bool, yaml: bool = False):
    path = url + (DRY if dry else "")
    if yaml:
        return client.post(path, body, content_type=YAML)
    return client.post(path, body, format="json")


def without_times(answer: dict) -> dict:
    """The answer but its times and what a dry run adds: ``dryRun``, and when the gang would
    start (a real submission's gang has no forecast yet: tests/stored_forecasts/test_dry_run.py)."""
    added = ("created", "updated", "dryRun", "forecast", "forecastNote")
    return {key: value for key, value in answer.items() if key not in added}


def test_a_dry_run_writes_sends_and_queues_nothing(as_alice, wire, django_capture_on_commit_callbacks):
    make_gang("other", "worker", submitter="alice")
    body = job(groups=["other/worker"], tasks=[{"name": "w", "replicas": 2}], pods=None)
    del body["pods"]
    events_publish()  # the listed gang's own creation, sent before we look
    wire.messages.clear()
    before = row_counts()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = submit(as_alice, GANGS, body, dry=True)
    events_publish()  # what the publisher would send of it: nothing is in the outbox

    assert response.status_code == 201, response.content
    assert response.json()["dryRun"] is True and response.json()["group"] == "ml/train,other/worker"
    assert callbacks == []
    assert row_counts() == before
    assert wire.quiet()

    # The same body for real: every spy sees what a submission does.
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        real = submit(as_alice, GANGS, body, dry=False)
    events_publish()
    assert real.status_code == 201 and callbacks and wire.triggers == 1 and wire.messages
    changed = {label for label, count in row_counts().items() if count != before[label]}
    assert {"scheduler_core.Gang", "scheduler_core.Member", "scheduler_core.GangEvent"} <= changed
    assert without_times(response.json()) == without_times(real.json())
    assert "dryRun" not in real.json()


def test_a_manifest_dry_run_writes_nothing_and_answers_as_the_real_apply(as_alice, wire):
    text = (REFERENCE / "koordinator-gang-group.yaml").read_text()
    before = row_counts()

    response = submit(as_alice, MANIFESTS, text, dry=True, yaml=True)
    events_publish()

    assert response.status_code == 201, response.content
    assert row_counts() == before and wire.quiet()
    real = submit(as_alice, MANIFESTS, text, dry=False, yaml=True)
    assert real.status_code == 201
    dry, applied = response.json(), real.json()
    assert dry["dryRun"] is True and dry["pods"] == applied["pods"] == 4
    assert dry["lines"] == [f"{line} (server dry run)" for line in applied["lines"]]
    assert [without_times(g) for g in dry["gangs"]] == [without_times(g) for g in applied["gangs"]]


def test_a_dry_run_sees_what_exists_as_the_real_one_does(as_alice):
    """Applying again: ``unchanged``; a changed setting: ``configured``, and still nothing kept."""
    text = (REFERENCE / "scheduler-plugins-podgroup.yaml").read_text()
    assert submit(as_alice, MANIFESTS, text, dry=False, yaml=True).status_code == 201
    stored = list(Gang.objects.values())

    again = submit(as_alice, MANIFESTS, text, dry=True, yaml=True).json()["lines"]
    changed = submit(as_alice, MANIFESTS, text.replace("minMember: 4", "minMember: 3"), dry=True, yaml=True)

    assert "gang team-a/trainer unchanged (server dry run)" in again
    assert "gang team-a/trainer configured (server dry run)" in changed.json()["lines"]
    assert changed.json()["gangs"][0]["minMember"] == 3
    assert list(Gang.objects.values()) == stored


@pytest.mark.parametrize(("body", "field", "words"), REFUSALS, ids=[f"{r[1]}:{r[2]}" for r in REFUSALS])
def test_a_dry_run_refuses_exactly_as_a_submission(as_alice, body, field, words):
    real = submit(as_alice, GANGS, body, dry=False)
    dry = submit(as_alice, GANGS, body, dry=True)
    assert (dry.status_code, dry.content) == (real.status_code, real.content) == (400, dry.content)


def test_the_services_refusals_are_the_same_too(as_alice):
    """Refusals that come from the services and the database, past the serializer: a key taken,
    a group naming no gang, a topology that does not exist, a manifest's bad field."""
    make_gang("ml", "taken", submitter="alice")
    bodies = [
        job(name="taken", pods=[{"name": "x-0"}], minMember=1),
        job(groups=["ml/nobody"]),
        job(topologyRequired="example.com/rack"),
    ]
    for body in bodies:
        real, dry = submit(as_alice, GANGS, body, dry=False), submit(as_alice, GANGS, body, dry=True)
        assert dry.status_code == real.status_code == 400
        assert dry.content == real.content
    bad = (REFERENCE / "scheduler-plugins-podgroup.yaml").read_text().replace("minMember: 4", "minMember: 0")
    real, dry = (submit(as_alice, MANIFESTS, bad, dry=d, yaml=True) for d in (False, True))
    assert (dry.status_code, dry.content) == (real.status_code, real.content)
    assert errors(dry)[0][0] == "documents[0].spec.minMember"


def test_a_queue_the_submitter_may_not_use_is_refused_alike(alice, as_bob):
    """alice's queue reads to bob as one that does not exist, dry run or not."""
    QueueAccess.objects.create(queue=Queue.objects.create(name="alices"), user=alice)
    for queue in ("alices", "no-such-queue"):
        body = job(queue=queue)
        real, dry = submit(as_bob, GANGS, body, dry=False), submit(as_bob, GANGS, body, dry=True)
        assert (dry.status_code, dry.content) == (real.status_code, real.content)
        assert errors(dry) == [("queue", f"queue {queue} not found")]


BAD_OPTIONS = ["", "all", "None", "server", "All,All"]


@pytest.mark.parametrize("url", [GANGS, MANIFESTS])
@pytest.mark.parametrize("value", BAD_OPTIONS)
def test_any_dry_run_value_but_all_is_a_400_naming_dry_run(as_alice, url, value):
    """Checked before the body: an empty body gets the option's refusal, not the body's."""
    before = row_counts()
    response = as_alice.post(f"{url}?dryRun={value}", b"", content_type="application/json")
    assert response.status_code == 400
    assert errors(response) == [("dryRun", f"unsupported dry run option {value!r}: the only one is All")]
    repeated = as_alice.post(f"{url}?dryRun=All&dryRun={value or 'x'}", b"", content_type="application/json")
    assert errors(repeated)[0][0] == "dryRun"
    assert row_counts() == before


def test_all_given_twice_is_all(as_alice):
    response = as_alice.post(f"{GANGS}?dryRun=All&dryRun=All", job(), format="json")
    assert response.status_code == 201 and response.json()["dryRun"] is True
    assert not Gang.objects.exists()


def test_dry_runs_have_a_throttle_budget_of_their_own(as_alice, settings):
    """A dry run is limited as a submission is (it runs the whole write path), in a budget of its
    own: checking a job never uses up the submissions that would run it."""
    settings.GANGSCHED_SUBMIT_RATE = "1/min"
    assert submit(as_alice, GANGS, job(), dry=True).status_code == 201
    assert submit(as_alice, GANGS, job(), dry=False).status_code == 201
    assert (
        submit(as_alice, GANGS, job(name="b", pods=[{"name": "b-0"}], minMember=1), dry=True).status_code
        == 429
    )
    assert (
        submit(as_alice, GANGS, job(name="c", pods=[{"name": "c-0"}], minMember=1), dry=False).status_code
        == 429
    )
    # A bad option counts in the dry runs' budget, never in the submissions'.
    settings.GANGSCHED_SUBMIT_RATE = "2/min"
    assert as_alice.post(f"{GANGS}?dryRun=x", job(), format="json").status_code == 400
    assert (
        submit(as_alice, GANGS, job(name="d", pods=[{"name": "d-0"}], minMember=1), dry=False).status_code
        == 201
    )


def test_reads_ignore_the_option(as_alice):
    make_gang("ml", "train", submitter="alice")
    assert as_alice.get(f"{GANGS}?dryRun=nonsense").status_code == 200


def test_the_schema_documents_the_option(as_alice):
    schema = as_alice.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for path in (GANGS, MANIFESTS):
        parameters = schema["paths"][path]["post"]["parameters"]
        (option,) = [p for p in parameters if p["name"] == "dryRun"]
        assert option["in"] == "query" and option["schema"]["enum"] == ["All"]


@pytest.mark.django_db(transaction=True)
def test_outside_a_test_transaction_the_dry_run_is_rolled_back_for_real(as_alice, wire):
    """Served as in production, no test transaction around it: the dry run's transaction is the
    outermost one, so its rollback is a real ROLLBACK and its commit hooks never run."""
    before = row_counts()
    response = submit(as_alice, GANGS, job(), dry=True)
    events_publish()
    assert response.status_code == 201, response.content
    assert row_counts() == before and wire.quiet()
    assert submit(as_alice, GANGS, job(), dry=False).status_code == 201
    assert wire.triggers == 1  # a real submission's commit hook: the spy is looking
