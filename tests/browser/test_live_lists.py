"""The lists follow the gangs in Chromium without a reload: a new gang's row appears on the Gangs
page where it belongs (not on a page whose filter excludes it, not on another submitter's), a
deleted gang's row goes, a timed-out gang joins the Timed-out list, a badge's colour changes with
its text, and the event feed's live and server-rendered lines show their times alike, in the
viewer's time zone. Each waiting page carries a marker in ``window`` that a reload would lose."""

from __future__ import annotations

import re
import threading
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.db import connections

from scheduler_core.events import events_publish
from scheduler_core.models import Gang
from scheduler_core.services.queues import queues_put
from tests.cast import make_gang
from tests.loop.factories import make_nodes
from tests.queues.conftest import spec

from .conftest import api_post, kick_until, log_in, wait_live
from .test_live_pages import assert_not_reloaded, gang_json, mark, phase

pytestmark = pytest.mark.django_db(transaction=True)

ZONE = "Asia/Kolkata"  # UTC+05:30: a time shown in UTC would not pass for one shown here
CLOCK = re.compile(r"^\d\d:\d\d:\d\d$")


def signed_in(browser, live: str, username: str, path: str):
    """A page of its own (own cookies) for ``username``, open on ``path``, its socket open."""
    context = browser.new_context(viewport={"width": 1440, "height": 900}, timezone_id=ZONE)
    page = context.new_page()
    log_in(page, live, username, f"{username}-pass-123")
    page.goto(live + path)
    wait_live(page)
    mark(page)
    return page


def off_the_loop(work, *args) -> None:
    """``work`` in a thread of its own: it sends to the channel layer (async_to_sync), which
    Playwright's event loop in this thread forbids."""
    thread = threading.Thread(target=lambda: (work(*args), connections.close_all()))
    thread.start()
    thread.join()


def answers(page) -> int:
    return page.evaluate("window.gangschedLists.answers")


def rows(page) -> list[str]:
    return page.eval_on_selector_all("[data-live-list] tr[data-gang]", "rs => rs.map(r => r.dataset.gang)")


def test_a_new_gang_appears_where_it_belongs_and_nowhere_else(browser, live, alice):
    User.objects.create_user("bob", password="bob-pass-123")
    make_gang("ml", "older", submitter="alice")
    everything = signed_in(browser, live, "alice", "/gangs/")
    elsewhere = signed_in(browser, live, "alice", "/gangs/?namespace=cv")
    bobs = signed_in(browser, live, "bob", "/gangs/")
    assert rows(everything) == ["ml/older"] and rows(elsewhere) == [] and rows(bobs) == []
    asked = answers(elsewhere)

    assert api_post(everything, live, "/api/v1/gangs/", gang_json("fresh", 2)).status == 201
    kick_until(lambda: rows(everything) == ["ml/fresh", "ml/older"], what="ml/fresh on the page")

    # The filtered page heard of it and read its list again: the gang is not in it.
    elsewhere.wait_for_function(f"gangschedLive.events >= 1 && gangschedLists.answers > {asked}")
    assert rows(elsewhere) == []
    assert bobs.evaluate("window.gangschedLive.events") == 0 and rows(bobs) == []
    for page in (everything, elsewhere, bobs):
        assert_not_reloaded(page)
        page.context.close()


def test_a_deleted_gang_s_row_disappears(browser, live, olga):
    make_gang("ml", "kept", submitter="alice")
    make_gang("ml", "gone", submitter="alice")
    off_the_loop(events_publish)  # their "created" events: nothing else will reach the page
    page = signed_in(browser, live, "olga", "/gangs/")
    assert sorted(rows(page)) == ["ml/gone", "ml/kept"]
    off_the_loop(Gang.objects.filter(name="gone").delete)  # as the admin deletes: no cycle, no event
    page.wait_for_function("() => !document.querySelector('[data-live-list] tr[data-gang=\"ml/gone\"]')")
    assert rows(page) == ["ml/kept"]
    assert page.evaluate("[gangschedLive.deletions, gangschedLive.events]") == [1, 0]
    assert_not_reloaded(page)
    page.context.close()


def test_a_timed_out_gang_joins_the_timed_out_list(browser, live, olga):
    make_nodes(2, cpu=2)  # two of its three members fit: NonStrict keeps them reserved, then times out
    page = signed_in(browser, live, "olga", "/timed-out/")
    assert page.locator("#timed-out-list .empty").is_visible()
    assert page.locator("[data-live-count]").inner_text() == "0"
    response = api_post(page, live, "/api/v1/gangs/", gang_json("slow", 3, mode="NonStrict", waitSeconds=1))
    assert response.status == 201, response.text()
    kick_until(lambda: phase("ml/slow") == "TimedOut", sweep=True, what="the timeout")
    page.locator('[data-live-list] tr[data-gang="ml/slow"]').wait_for()
    assert page.locator("[data-live-count]").inner_text() == "1"
    badge = page.locator('[data-live-list] .gang-state[data-gang="ml/slow"]')
    assert badge.inner_text() == "TimedOut" and "state-TimedOut" in badge.get_attribute("class")
    row = page.locator('tr[data-gang="ml/slow"]')
    assert row.get_by_role("button", name="Retry").is_visible()  # its actions came with it
    assert_not_reloaded(page)
    page.context.close()


def test_a_badge_s_colour_changes_with_its_text(browser, live, olga):
    make_gang("ml", "doomed", submitter="alice")
    page = signed_in(browser, live, "olga", "/gangs/ml/doomed/")  # updated by live.js, not re-rendered
    badge = page.locator('h1 .gang-state[data-gang="ml/doomed"]')
    assert badge.inner_text() == "Pending" and "state-Pending" in badge.get_attribute("class")
    pending_colour = badge.evaluate("el => getComputedStyle(el).backgroundColor")
    assert api_post(page, live, "/api/v1/gangs/ml/doomed/kill/").status == 200
    kick_until(lambda: badge.inner_text() == "Killed", what="the badge to say Killed")
    assert badge.get_attribute("class") == "gang-state state-Killed"
    assert badge.get_attribute("data-state") == "Killed"
    assert badge.evaluate("el => getComputedStyle(el).backgroundColor") != pending_colour
    assert_not_reloaded(page)
    page.context.close()


def feed_times(page) -> dict[str, tuple[str, str]]:
    """gang key -> (its first feed line's datetime attribute, the time shown)."""
    lines = page.eval_on_selector_all(
        "#event-feed li[data-gang]",
        "lis => lis.map(li => [li.dataset.gang, li.querySelector('time').getAttribute('datetime'),"
        " li.querySelector('time').textContent])",
    )
    found: dict[str, tuple[str, str]] = {}
    for key, stamp, shown in lines:
        found.setdefault(key, (stamp, shown))
    return found


def shown_here(stamp: str) -> str:
    return datetime.fromisoformat(stamp).astimezone(ZoneInfo(ZONE)).strftime("%H:%M:%S")


def test_the_feed_shows_live_and_server_rendered_times_alike(browser, live, olga):
    make_gang("ml", "before", submitter="alice")
    off_the_loop(events_publish)  # sent before the page opens: its line is the server's only
    page = signed_in(browser, live, "olga", "/")
    assert list(feed_times(page)) == ["ml/before"]
    assert api_post(page, live, "/api/v1/gangs/", gang_json("after", 2)).status == 201
    kick_until(lambda: "ml/after" in feed_times(page), what="ml/after in the feed")
    times = feed_times(page)
    for key in ("ml/before", "ml/after"):  # server-rendered, then live
        stamp, shown = times[key]
        assert CLOCK.match(shown), (key, shown)
        assert shown == shown_here(stamp), (key, stamp, shown)
        # The lines themselves are alike: time, gang, kind.
        line = page.locator(f'#event-feed li[data-gang="{key}"]').last
        assert line.locator("span.kind").inner_text() == "created"
    assert_not_reloaded(page)
    page.context.close()


def waiting(page, queue: str) -> str:
    return page.locator(f"#queue-{queue} .queue-waiting").get_attribute("data-waiting")


def test_the_queues_waiting_counts_follow_created_and_deleted_gangs(browser, live, olga):
    queues_put([spec("nlp", guarantee={"cpu": 4000})])  # no node: its gangs wait
    page = signed_in(browser, live, "olga", "/queues/")
    assert waiting(page, "nlp") == "0"
    response = api_post(page, live, "/api/v1/gangs/", gang_json("bert", 2, queue="nlp"))
    assert response.status == 201, response.text()
    kick_until(lambda: waiting(page, "nlp") == "1", what="nlp's waiting count to be 1")
    off_the_loop(Gang.objects.filter(name="bert").delete)
    page.wait_for_function("() => document.querySelector('#queue-nlp .queue-waiting').dataset.waiting == 0")
    assert_not_reloaded(page)
    page.context.close()
