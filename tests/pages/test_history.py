"""/history/: the scheduling events, newest first; filters in the query string, keyset pages, bad
values named on the page, times in the viewer's zone, and the links to it."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from scheduler_core.models import GangEvent
from tests.pages.conftest import make_gang

pytestmark = pytest.mark.django_db

T0 = dt.datetime(2025, 5, 1, 12, 0, tzinfo=dt.UTC)


def rows(response) -> list[tuple[str, str, str]]:
    """(gang, kind, actor) of each row, top to bottom."""
    html = response.content.decode()
    found = re.findall(
        r'<tr data-gang="([^"]+)" data-kind="([^"]+)">.*?<td class="actor">([^<]*)</td>', html, re.S
    )
    return [tuple(row) for row in found]


def errors(response) -> dict[str, str]:
    html = response.content.decode()
    return dict(
        re.findall(r'<p class="form-error" role="alert" data-field="([^"]+)">[^:]+: ([^<]*)</p>', html)
    )


def at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


@pytest.fixture
def history(db):
    """alice's ml/train (queue gpu) and ml/etl (queue cpu), bob's cv/detect (queue gpu); their
    created events set at T0, then, a minute apart: bound, olga's retry, alice's change, bob's
    kill of his own, a timeout."""
    train = make_gang("ml", "train", submitter="alice", queue="gpu")
    etl = make_gang("ml", "etl", submitter="alice", queue="cpu")
    detect = make_gang("cv", "detect", submitter="bob", queue="gpu")
    GangEvent.objects.filter(gang=train).update(created=at(0))
    GangEvent.objects.filter(gang=etl).update(created=at(0.5))
    GangEvent.objects.filter(gang=detect).update(created=at(0.7))
    for minute, gang, kind, details in [
        (1, train, "bound", {}),
        (2, train, "retried", {"by": "olga"}),
        (3, etl, "configured", {"by": "alice"}),
        (4, detect, "killed", {"by": "bob"}),
        (5, etl, "timed_out", {}),
    ]:
        GangEvent.objects.create(
            gang=gang, kind=kind, reason=f"{kind} reason", details=details, created=at(minute)
        )
    return {"train": train, "etl": etl, "detect": detect}


EVERY = [
    ("ml/etl", "timed_out", "scheduler"),
    ("cv/detect", "killed", "bob"),
    ("ml/etl", "configured", "alice"),
    ("ml/train", "retried", "olga"),
    ("ml/train", "bound", "scheduler"),
    ("cv/detect", "created", "bob"),
    ("ml/etl", "created", "alice"),
    ("ml/train", "created", "alice"),
]


def test_an_operator_sees_every_event_newest_first_with_who_did_it(as_olga, history):
    response = as_olga.get("/history/")
    assert response.status_code == 200
    assert rows(response) == EVERY


def test_a_submitter_sees_the_events_of_her_own_gangs_only(as_alice, as_bob, history):
    assert rows(as_alice.get("/history/")) == [row for row in EVERY if row[0].startswith("ml/")]
    assert rows(as_bob.get("/history/")) == [row for row in EVERY if row[0] == "cv/detect"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"gang": "ml/train"}, [4, 5, 8]),
        ({"gang": "train"}, [4, 5, 8]),  # a bare name: that name in every namespace
        ({"gang": " ml/etl "}, [1, 3, 7]),
        ({"gang": "ml/nothing"}, []),
        ({"queue": "gpu"}, [2, 4, 5, 6, 8]),
        ({"kind": "created"}, [6, 7, 8]),
        ({"kind": ["bound", "killed"]}, [2, 5]),
        ({"actor": "alice"}, [3, 7, 8]),
        ({"actor": "olga"}, [4]),
        ({"actor": "scheduler"}, [1, 5]),
        ({"actor": "bob", "kind": "created"}, [6]),
        ({"from": "2025-05-01 12:02:00", "tz": "UTC"}, [1, 2, 3, 4]),
        ({"to": "2025-05-01 12:01:00", "tz": "UTC"}, [5, 6, 7, 8]),
        ({"from": "2025-05-01T12:01:00Z", "to": "2025-05-01T12:03:00Z"}, [3, 4, 5]),
        ({"queue": "gpu", "kind": "created", "actor": "alice"}, [8]),
    ],
)
def test_it_filters(as_olga, history, query, expected):
    response = as_olga.get("/history/", query)
    assert response.status_code == 200
    assert rows(response) == [EVERY[i - 1] for i in expected]


def test_the_quick_choices_are_the_last_hour_and_day(as_olga, history):
    GangEvent.objects.create(
        gang=history["train"], kind="finished", created=timezone.now() - dt.timedelta(minutes=5)
    )
    GangEvent.objects.create(
        gang=history["etl"], kind="failed", created=timezone.now() - dt.timedelta(hours=5)
    )
    assert rows(as_olga.get("/history/", {"since": "1h"})) == [("ml/train", "finished", "scheduler")]
    assert [r[1] for r in rows(as_olga.get("/history/", {"since": "24h"}))] == ["finished", "failed"]
    html = as_olga.get("/history/", {"kind": "finished", "from": "2030-01-01 00:00:00"}).content.decode()
    picked = as_olga.get("/history/", {"since": "1h"}).content.decode()
    assert '<strong aria-current="true">Last hour</strong>' in picked
    assert (
        '<strong aria-current="true">Last 90m</strong>'
        in as_olga.get("/history/", {"since": "90m"}).content.decode()
    )
    # The quick links keep the other filters and drop from/to.
    assert 'href="?kind=finished&amp;tz=UTC&amp;since=1h"' in html
    assert 'href="?kind=finished&amp;tz=UTC&amp;since=24h"' in html


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"kind": "exploded"}, "kind"),
        ({"kind": ["bound", "nope"]}, "kind"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2030-13-45 99:00:00"}, "to"),
        ({"from": "2025-05-02 00:00:00", "to": "2025-05-01 00:00:00"}, "to"),
        ({"since": "an hour"}, "since"),
        ({"since": "0h"}, "since"),
        ({"since": "99999999d"}, "since"),
        ({"tz": "Mars/Olympus_Mons"}, "tz"),
        ({"tz": "../../etc/passwd"}, "tz"),
        ({"gang": "ml/\x00train"}, "gang"),
        ({"actor": "a\x00"}, "actor"),
        ({"queue": "\x00"}, "queue"),
        ({"before": "tomorrow"}, "before"),
        ({"before": "99999999999999999999999-1"}, "before"),
        ({"after": "1-x"}, "after"),
    ],
)
def test_a_bad_value_is_named_on_the_page(as_olga, history, query, field):
    response = as_olga.get("/history/", query)
    assert response.status_code == 400
    assert field in errors(response), errors(response)
    assert rows(response) == []
    assert b"Fix the filter above." in response.content


def test_pages_of_fifty_walk_older_and_back_newer(as_olga, history):
    GangEvent.objects.bulk_create(
        GangEvent(gang=history["train"], kind="explained", reason=f"e{i}", created=at(10 + i // 2))
        for i in range(112)  # two events a minute: ties on created are ordered by id
    )
    seen, pages, query = [], [], {"gang": "ml/train"}
    while True:
        response = as_olga.get("/history/", query)
        html = response.content.decode()
        page = re.findall(r"<td>(e\d+|\w+ reason|\d pods, min_member \d)</td>", html)
        pages.append(len(page))
        seen += page
        older = re.search(r'href="\?([^"]+)" rel="next">Older', html)
        if older is None:
            break
        query = dict(pair.split("=", 1) for pair in older[1].replace("&amp;", "&").split("&"))
        query["gang"] = query["gang"].replace("%2F", "/")
    assert pages == [50, 50, 15]
    assert seen == [f"e{i}" for i in reversed(range(112))] + [
        "retried reason",
        "bound reason",
        "2 pods, min_member 2",
    ]
    newer = re.search(r'href="\?([^"]+)" rel="prev">Newer', html)[1].replace("&amp;", "&")
    back = as_olga.get(f"/history/?{newer}").content.decode()
    assert re.findall(r"<td>(e\d+)</td>", back) == [
        f"e{i}" for i in reversed(range(12, 62))
    ]  # just newer than e11
    assert 'rel="first">Newest' in back


def test_times_are_in_the_viewers_zone_and_from_is_read_there(as_olga, history):
    response = as_olga.get("/history/", {"tz": "Asia/Tokyo", "kind": "bound"})
    html = response.content.decode()
    assert "Times in Asia/Tokyo" in html
    assert ">2025-05-01 21:01:00</time>" in html  # 12:01 UTC
    tokyo = as_olga.get("/history/", {"tz": "Asia/Tokyo", "from": "2025-05-01 21:03:00"})
    assert [r[1] for r in rows(tokyo)] == ["timed_out", "killed", "configured"]
    assert 'name="from" value="2025-05-01 21:03:00"' in tokyo.content.decode()
    as_olga.cookies["tz"] = "America/New_York"
    html = as_olga.get("/history/", {"kind": "bound"}).content.decode()
    assert "Times in America/New_York" in html and ">2025-05-01 08:01:00</time>" in html
    as_olga.cookies["tz"] = "Nowhere/Special"
    assert "Times in UTC" in as_olga.get("/history/").content.decode()


def test_the_gang_page_and_the_navigation_link_to_it(as_alice, history):
    html = as_alice.get("/gangs/ml/train/").content.decode()
    assert 'href="/history/?gang=ml/train"' in html
    assert 'href="/history/">History</a>' in html
    assert 'href="/api/docs/">API</a>' in html
    page = as_alice.get("/history/").content.decode()
    assert 'href="/history/" aria-current="page">History</a>' in page


def test_its_queries_do_not_grow_with_the_events(as_olga, history):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert (
                as_olga.get("/history/", {"kind": ["created", "explained"], "queue": "gpu"}).status_code
                == 200
            )
        return len(queries)

    few = count()
    GangEvent.objects.bulk_create(
        GangEvent(gang=history["train"], kind="explained", created=at(20 + i)) for i in range(60)
    )
    assert count() == few
