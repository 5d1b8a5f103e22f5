"""``?live=rows``: the list part of the Gangs and Timed-out pages, as a reload would render it,
for static/js/live_lists.js: the page's filters, sort, page and visibility, and nothing else."""

from __future__ import annotations

import pytest
from django.test import Client

from dashboard.pages import gangs as gangs_page
from scheduler_core.models import Gang
from tests.cast import make_gang

pytestmark = pytest.mark.django_db(transaction=True)


def client(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def rows(browser, path: str) -> dict:
    response = browser.get(path)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    return response.json()


def test_the_gangs_rows_follow_the_filters_and_the_viewer(alice, bob, olga):
    make_gang("ml", "alices-a", submitter="alice")
    make_gang("cv", "alices-b", submitter="alice")
    make_gang("ml", "bobs", submitter="bob")
    mine = rows(client(alice), "/gangs/?live=rows")
    assert mine["count"] == 2
    assert 'data-gang="ml/alices-a"' in mine["html"] and "bobs" not in mine["html"]
    assert "<html" not in mine["html"]  # the list only
    filtered = rows(client(olga), "/gangs/?namespace=ml&live=rows")
    assert filtered["count"] == 2
    assert 'data-gang="ml/bobs"' in filtered["html"] and "cv/alices-b" not in filtered["html"]
    # The sort links keep the filters, never the live parameter.
    assert "namespace=ml" in filtered["html"] and "live=" not in filtered["html"]


def test_the_gangs_rows_are_the_page_asked_for(olga, monkeypatch):
    monkeypatch.setattr(gangs_page, "PAGE_SIZE", 2)
    for name in ("first", "second", "third"):
        make_gang("ml", name, submitter="alice")
    newest_first = rows(client(olga), "/gangs/?live=rows")
    assert 'data-gang="ml/third"' in newest_first["html"] and "ml/first" not in newest_first["html"]
    second_page = rows(client(olga), "/gangs/?page=2&live=rows")
    assert 'data-gang="ml/first"' in second_page["html"] and "ml/third" not in second_page["html"]
    assert second_page["count"] == 3
    assert 'href="?page=1"' in second_page["html"]


def test_the_badge_says_provisional_in_its_own_colour(olga):
    make_gang("ml", "early", submitter="alice")
    Gang.objects.filter(name="early").update(provisional=True)
    html = rows(client(olga), "/gangs/?live=rows")["html"]
    assert '<span class="gang-state state-Provisional" data-gang="ml/early" data-state="Provisional">' in html


def test_the_timed_out_rows_list_the_viewer_s_timed_out_gangs(alice, bob):
    make_gang("ml", "late", submitter="alice")
    make_gang("ml", "on-time", submitter="alice")
    make_gang("ml", "bobs-late", submitter="bob")
    Gang.objects.filter(name__in=["late", "bobs-late"]).update(phase="TimedOut")
    answer = rows(client(alice), "/timed-out/?live=rows")
    assert answer["count"] == 1
    assert 'data-gang="ml/late"' in answer["html"]
    assert "on-time" not in answer["html"] and "bobs-late" not in answer["html"]
    # Its actions come back to the page, not to the live answer.
    assert 'name="next" value="/timed-out/"' in answer["html"]
    bobs = rows(client(bob), "/timed-out/?page=1&live=rows")["html"]
    assert bobs.count('name="next" value="/timed-out/?page=1"') == 2  # the bulk form and his row


def test_without_a_timed_out_gang_the_rows_say_so(bob):
    answer = rows(client(bob), "/timed-out/?live=rows")
    assert answer == {"count": 0, "html": answer["html"]}
    assert "No gang has timed out" in answer["html"]
