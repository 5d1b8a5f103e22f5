"""The pages show the stored forecasts: the Gangs list's Starts column, the gang page's card
(and its ?live=forecast answer), each Queues lane's next start; stale forecasts say so; a
submitter reads their own positions and no name of another submitter's gang."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest
from django.utils import timezone

from scheduler_core.models import GangForecast, Queue, QueueAccess
from scheduler_core.services.forecasts import forecasts_run
from tests.pages.conftest import login
from tests.stored_forecasts.world import queue_world

pytestmark = pytest.mark.django_db

FOREIGN = "blocked behind ml/second, which is first in the queue and has capacity reserved"
REDACTED = "blocked behind another submitter's gang, which is first in the queue and has capacity reserved"


@pytest.fixture
def world(alice, bob, olga):
    QueueAccess.objects.create(queue=Queue.objects.create(name="default"), user=alice)
    gangs = queue_world()
    forecasts_run()
    GangForecast.objects.filter(gang=gangs["third"]).update(
        waiting_reason="BlockedBehind", waiting_message=FOREIGN, waiting_message_own=REDACTED
    )
    return gangs


def cell(html: str, key: str) -> str:
    row = re.search(rf'<tr data-gang="{key}">(.*?)</tr>', html, re.S).group(1)
    return re.search(r'<td class="starts"[^>]*>(.*?)</td>', row, re.S).group(1).strip()


def test_the_gangs_list_has_a_starts_column(world, olga):
    html = login(olga).get("/gangs/").content.decode()
    assert ">Starts</th>" in html
    assert re.fullmatch(r"in ~\d+ min \(\d+(\.\d+)?( min)?–\d+ min\)", cell(html, "ml/third")), cell(
        html, "ml/third"
    )
    assert cell(html, "ml/running") == "—"
    live = login(olga).get("/gangs/", {"live": "rows"}).json()["html"]  # the live refresh too
    assert cell(live, "ml/third").startswith("in ~")  # read a moment later: the minute may differ


def test_a_stale_forecast_says_so(world, olga):
    GangForecast.objects.update(made_at=timezone.now() - timedelta(seconds=91))
    html = login(olga).get("/gangs/").content.decode()
    assert "(stale)" in cell(html, "ml/third")
    page = login(olga).get("/gangs/ml/third/").content.decode()
    assert "made 1 min ago: <strong>stale</strong>, older than 90 s" in page
    GangForecast.objects.update(made_at=timezone.now() - timedelta(seconds=40))
    page = login(olga).get("/gangs/ml/third/").content.decode()
    assert "made 40 s ago; made again every 30 s" in page and "stale" not in page


def test_the_gang_page_shows_start_place_and_what_it_waits_for(world, olga):
    page = login(olga).get("/gangs/ml/third/").content.decode()
    assert "<h2>When it will start</h2>" in page
    assert re.search(r"Starts in ~\d+ min", page)
    assert "3rd in queue default; 3rd in the cluster" in page
    assert FOREIGN in page


def test_the_submitter_reads_their_own_count_and_no_name_of_anothers(world, alice):
    page = unescape(login(alice).get("/gangs/ml/third/").content.decode())
    assert "2nd of your pending gangs in queue default; 2nd of them in the cluster" in page
    assert REDACTED in page and "ml/second" not in page
    card = login(alice).get("/gangs/ml/third/", {"live": "forecast"}).json()["html"]
    assert "2nd of your pending gangs" in card and "ml/second" not in card
    html = login(alice).get("/gangs/").content.decode()
    assert "second" not in html and "in ~" in cell(html, "ml/third")


def test_the_queues_page_says_when_each_queue_starts_its_next_gang(world, alice, olga):
    html = login(olga).get("/queues/").content.decode()
    assert re.search(r'class="next-start"[^>]*>· next start in ~\d+ min', html)
    mine = login(alice).get("/queues/").content.decode()
    assert re.search(r'class="next-start"[^>]*>· your next start in ~\d+ min', mine)
    live = login(alice).get("/queues/live/").json()
    (row,) = [row for row in live["queues"] if row["name"] == "default"]
    assert row["next_start"]["text"].startswith("in ~")
    assert "your next start" in live["pending_html"]


def test_nothing_is_shown_while_forecasts_are_off(world, olga, settings):
    settings.GANGSCHED_FORECAST_INTERVAL_S = 0
    html = login(olga).get("/gangs/").content.decode()
    assert cell(html, "ml/third") == "—"
    assert "Forecasts are off" in login(olga).get("/gangs/ml/third/").content.decode()
    assert "next-start" not in login(olga).get("/queues/").content.decode()
