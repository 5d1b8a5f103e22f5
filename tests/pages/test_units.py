"""One style of units on pages, the admin and the CLI: quantities as displayed (``244Gi``,
``16.5``), the exact Kubernetes form on hover and in JSON, durations with their unit."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from scheduler_core.models import Gang, Member, Queue

pytestmark = pytest.mark.django_db
MI = 2**20


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def big_queue():
    queue = Queue.objects.create(
        name="ml", guarantee={"cpu": 16500, "memory": 250000 * MI}, max={"memory": 192 * 2**30}
    )
    gang = Gang.objects.create(
        namespace="team", name="bert", min_member=1, queue="ml", phase="Pending", wait_seconds=600.0,
        reason="InsufficientResources", message="no node fits",
        details={"requests": {"cpu": 16500, "memory": 34359738368}},
    )  # fmt: skip
    Member.objects.create(
        namespace="team", name="bert-0", gang=gang, requests={"cpu": 16500, "memory": 125000 * MI}
    )
    return queue


def test_queues_page_displays_amounts_with_the_exact_form_on_hover(client, olga, big_queue):
    client.force_login(olga)
    html = client.get("/queues/").content.decode()
    assert "guarantee 244Gi" in html and "max 192Gi" in html  # not 250000Mi beside 192Gi
    assert "250000Mi" in html  # the exact form, in the bar's title
    row = client.get("/queues/live/").json()["queues"][0]
    memory = next(bar for bar in row["bars"] if bar["resource"] == "memory")
    assert memory["guarantee"] == 250000 * MI  # canonical numbers stay canonical
    assert memory["label"] == "0 used · guarantee 244Gi · max 192Gi"
    assert memory["exact_label"] == "0 used · guarantee 250000Mi · max 192Gi"
    cpu = next(bar for bar in row["bars"] if bar["resource"] == "cpu")
    assert "guarantee 16.5" in cpu["label"] and "guarantee 16500m" in cpu["exact_label"]


def test_gang_page_shows_requests_and_details_displayed(client, olga, big_queue):
    client.force_login(olga)
    html = client.get("/gangs/team/bert/").content.decode()
    assert '<span class="qty" title="125000Mi">122Gi</span>' in html
    assert '<span class="qty" title="16500m">16.5</span>' in html
    assert "34359738368" not in html
    assert "&quot;memory&quot;: &quot;32Gi&quot;" in html
    api = client.get("/api/v1/gangs/team/bert/").json()
    assert "34359738368" in json.dumps(api)  # the API keeps the canonical integer


def test_admin_queue_list_shows_displayed_quantities(client, big_queue):
    client.force_login(User.objects.create_superuser("root", password="root-pass-123"))
    html = client.get("/admin/scheduler_core/queue/").content.decode()
    assert "262144000000" not in html and "{&quot;cpu&quot;" not in html
    assert '<span class="qty" title="250000Mi">244Gi</span>' in html and "memory 192Gi" in html


def test_cli_wait_has_a_unit_and_json_stays_canonical(big_queue):
    table = run("get", "gangs", "-A")
    header, row = table.splitlines()[:2]
    assert "WAIT" in header and "10min" in row.split()
    assert json.loads(run("get", "gangs", "-A", "-o", "json"))[0]["wait_seconds"] == 600.0
    assert "memory=244Gi" in run("get", "queues")
    assert json.loads(run("get", "queues", "-o", "json"))[0]["guarantee"] == "cpu=16500m,memory=250000Mi"
    described = run("describe", "gang", "team/bert")
    assert "cpu 16.5, memory 122Gi (125000Mi)" in described
