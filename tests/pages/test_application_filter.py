"""The gang pages find a YuniKorn application: /gangs/?application= and the gang page's link."""

import re
from pathlib import Path

import pytest

from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.declarations.documents import documents_parse

pytestmark = pytest.mark.django_db

OWN = Path(__file__).parents[1] / "declarations" / "manifests"


@pytest.fixture
def applied(db, monkeypatch):
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: True)
    manifests_apply(documents_parse((OWN / "yunikorn-originator.yaml").read_text()), submitter="alice")


def keys(response) -> list[str]:
    return re.findall(r'<tr data-gang="([^"]+)"', response.content.decode())


def test_the_gang_list_filters_by_application(as_alice, applied):
    response = as_alice.get("/gangs/", {"application": "etl-0042", "sort": "namespace"})
    assert sorted(keys(response)) == ["data/etl-0042", "data/etl-0042-workers"]
    assert 'name="application" value="etl-0042"' in response.content.decode()
    assert keys(as_alice.get("/gangs/", {"application": "report-7"})) == ["data/report-7-driver"]


def test_the_gang_page_names_its_application_and_links_to_its_gangs(as_alice, applied):
    page = as_alice.get("/gangs/data/etl-0042-workers/").content.decode()
    assert re.search(
        r'<dt>Application</dt><dd class="application"><a href="/gangs/\?application=etl-0042">', page
    )
