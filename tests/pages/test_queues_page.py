"""/queues/: the tree with its bars (a submitter's: the queues they may use and their ancestors),
the waiting gangs each user may see,
the chart's samples, the live JSON, close and open for operators only (404 to anyone else, the
bytes of a queue that does not exist), and the gang page naming its queue and queue reason."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from scheduler_core.models import Gang, LocalQueue, Queue
from scheduler_core.services.queue_history import queue_samples_record
from scheduler_core.services.queues import queues_put
from tests.queues.conftest import spec

from .conftest import make_gang

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: True)


@pytest.fixture
def tree(db):
    """ml (max 8 GPUs) over nlp (guarantee 4) and cv; alice and bob each wait in nlp; the last
    cycle gave nlp a fair share of 6 GPUs."""
    queues_put(
        [
            spec("ml", max={GPU: 8}),
            spec("nlp", parent="ml", guarantee={GPU: 4}),
            spec("cv", parent="ml", guarantee={GPU: 2}),
        ]
    )
    make_gang("ml", "bert", submitter="alice", queue="nlp")
    make_gang("ml", "gpt", submitter="bob", queue="nlp")
    now = timezone.now()
    for minutes, usage in ((3, 2), (2, 4), (0, 5)):
        nlp = {"usage": {GPU: usage}, "guarantee": {GPU: 4}, "fair_share": {GPU: 6}, "lent": {}}
        ml = {"usage": {GPU: usage}, "fair_share": {GPU: 8}, "max": {GPU: 8}}
        queue_samples_record(
            {"nlp": {"path": "ml/nlp", **nlp}, "ml": {"path": "ml", **ml}},
            cycle=None,
            at=now - timedelta(minutes=minutes),
        )


def row_html(html: str, name: str) -> str:
    start = html.index(f'<tr id="queue-{name}"')
    return html[start : html.index("</tr>", start)]


def test_anonymous_users_are_sent_to_sign_in(client, tree):
    for url in ("/queues/", "/queues/live/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")


def test_the_tree_is_indented_with_bars_marks_and_the_chart(as_olga, tree):
    html = as_olga.get("/queues/").content.decode()

    # Parents before children, siblings by name.
    assert html.index('id="queue-ml"') < html.index('id="queue-cv"') < html.index('id="queue-nlp"')
    nlp = row_html(html, "nlp")
    assert 'data-depth="1"' in nlp and "padding-left: 1.5em" in nlp
    bar = nlp[nlp.index('class="bar queue-bar"') :]
    assert f'data-resource="{GPU}"' in bar and 'data-guarantee="4"' in bar and 'data-fair-share="6"' in bar
    assert 'class="bar-mark mark-guarantee"' in bar and 'class="bar-mark mark-fair"' in bar
    assert "guarantee 4 · fair share 6 · no max" in bar
    ml = row_html(html, "ml")
    assert 'data-max="8"' in ml and "max 8" in ml  # the bar spans the max
    assert "queue-open" in nlp and 'data-state="Open"' in nlp
    assert 'href="?chart=nlp#queue-chart"' in nlp
    assert 'href="/gangs/?queue=nlp&amp;waiting=1"' in nlp
    assert '<a href="/queues/"' in html and "aria-current" in html  # in the nav
    assert "js/queues.js" in html
    chart = as_olga.get("/queues/?chart=nlp").context["chart"]
    assert chart["queue"] == "nlp" and chart["resources"] == [GPU]
    assert [p["usage"][GPU] for p in chart["points"]] == [2, 4, 5]
    assert as_olga.get("/queues/").context["chart"]["queue"] == "ml"  # the first top-level queue


def test_waiting_gangs_count_what_the_user_may_see(as_olga, as_alice, as_vera, tree):
    """A submitter counts their own waiting gangs, as /gangs/?queue= would list them for them;
    someone who sees every gang counts all of them; inner queues add up their subtree."""
    for browser, expected in ((as_olga, 2), (as_vera, 2), (as_alice, 1)):
        rows = {row["name"]: row for row in browser.get("/queues/live/").json()["queues"]}
        assert rows["nlp"]["waiting_gangs"] == expected
        assert rows["ml"]["waiting_gangs"] == expected
        assert rows["cv"]["waiting_gangs"] == 0
    html = as_alice.get("/queues/").content.decode()
    assert 'data-waiting="1"' in row_html(html, "nlp")
    assert "that you submitted" in html


def test_a_local_queue_s_gangs_count_in_its_cluster_queue(as_olga, tree):
    LocalQueue.objects.create(namespace="lab", name="main", cluster_queue=Queue.objects.get(name="cv"))
    make_gang("lab", "resnet", submitter="olga", queue="main")
    rows = {row["name"]: row for row in as_olga.get("/queues/live/").json()["queues"]}
    assert rows["cv"]["waiting_gangs"] == 1 and rows["ml"]["waiting_gangs"] == 3


def test_a_satisfied_gang_whose_pods_start_waits_no_more(as_olga, tree):
    """A satisfied gang stays Scheduling until its pods run, but it holds its nodes: it leaves the
    count, the lane and the pending-gangs metric, and the count's link lists what it counts."""
    Gang.objects.filter(name="gpt").update(phase="Scheduling", satisfied=True)
    Gang.objects.filter(name="bert").update(phase="Scheduling")  # reserving, not satisfied
    live = as_olga.get("/queues/live/").json()
    rows = {row["name"]: row for row in live["queues"]}
    assert rows["nlp"]["waiting_gangs"] == 1 and rows["ml"]["waiting_gangs"] == 1
    assert "ml/bert" in live["pending_html"] and "ml/gpt" not in live["pending_html"]
    listed = as_olga.get("/gangs/?queue=nlp&waiting=1").content.decode()
    assert "ml/bert" in listed and "ml/gpt" not in listed
    assert 'name="waiting" value="1" checked' in listed
    both = as_olga.get("/gangs/?queue=nlp").content.decode()
    assert "ml/bert" in both and "ml/gpt" in both


def test_the_live_json_carries_the_bars(as_alice, tree):
    rows = as_alice.get("/queues/live/").json()["queues"]
    nlp = next(row for row in rows if row["name"] == "nlp")
    bars = {bar["resource"]: bar for bar in nlp["bars"]}
    assert sorted(bars) == ["cpu", "memory", GPU]  # the GPU's figures; cpu and memory pending
    bar = bars[GPU]
    assert (bar["guarantee"], bar["fair_share"], bar["max"], bar["lent"]) == (4, 6, None, 0)
    assert bar["used"] == 0  # live: nothing of nlp is bound (the samples said 5)
    assert bars["cpu"]["pending"] == 4000 and bars["cpu"]["max"] is None
    assert nlp["open"] is True and nlp["path"] == "ml/nlp" and nlp["depth"] == 1


def test_a_submitter_sees_neither_the_row_nor_the_chart_of_a_queue_they_may_not_use(
    as_alice, as_bob, bob, tree
):
    from scheduler_core.models import QueueAccess

    QueueAccess.objects.create(queue=Queue.objects.get(name="cv"), user=bob)
    rows = [row["name"] for row in as_alice.get("/queues/live/").json()["queues"]]
    assert rows == ["ml", "nlp"]
    page = as_alice.get("/queues/?chart=cv")
    assert 'id="queue-cv"' not in page.content.decode() and page.context["chart"]["queue"] == "ml"
    assert [row["name"] for row in as_bob.get("/queues/live/").json()["queues"]] == ["ml", "cv", "nlp"]


def test_no_queues_says_so(as_alice):
    html = as_alice.get("/queues/").content.decode()
    assert "No queues" in html and 'id="queue-tree"' not in html
    live = as_alice.get("/queues/live/").json()
    assert live["queues"] == [] and "No gang of yours is waiting" in live["pending_html"]


def test_the_page_reads_a_fixed_number_of_queries(as_olga, tree):
    """As tests/pages/test_query_counts.py asks of every page: no query per queue or per gang."""

    def count(url: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert as_olga.get(url).status_code == 200
        return len(queries)

    few = {url: count(url) for url in ("/queues/", "/queues/live/")}
    cv = Queue.objects.get(name="cv")
    for index in range(15):
        Queue.objects.create(name=f"extra-{index}", parent=cv, guarantee={"cpu": 1000})
        make_gang("ml", f"more-{index}", submitter="alice", queue=f"extra-{index}")
    queue_samples_record({f"extra-{i}": {"usage": {"cpu": i}} for i in range(15)}, cycle=None)

    for url, before in few.items():
        # Among them: the lanes' next starts (forecasts); the waiting gangs, then their members'
        # shapes (one row per distinct shape of a gang, not per pod).
        assert count(url) == before <= 18


# ---------------------------------------------------------------- close and open


def test_only_operators_are_offered_close_and_open(as_olga, as_alice, as_vera, tree):
    assert 'value="close"' in as_olga.get("/queues/").content.decode()
    for browser in (as_alice, as_vera):
        html = browser.get("/queues/").content.decode()
        assert 'value="close"' not in html and "/act/" not in html


def test_an_operator_closes_and_opens_a_queue(as_olga, tree):
    response = as_olga.post("/queues/nlp/act/", {"action": "close"})
    assert response.status_code == 302 and response["Location"] == "/queues/#queue-nlp"
    assert Queue.objects.get(name="nlp").open is False
    page = as_olga.get(response["Location"])
    assert [str(m) for m in page.context["messages"]] == ["queue nlp closed"]
    nlp = row_html(page.content.decode(), "nlp")
    assert 'data-state="Closed"' in nlp and 'value="open"' in nlp

    as_olga.post("/queues/nlp/act/", {"action": "close"})
    assert [str(m) for m in as_olga.get("/queues/").context["messages"]] == ["queue nlp was already closed"]
    as_olga.post("/queues/nlp/act/", {"action": "open"})
    assert Queue.objects.get(name="nlp").open is True


def test_anyone_else_gets_the_not_found_of_a_queue_that_does_not_exist(as_alice, as_vera, as_olga, tree):
    for browser in (as_alice, as_vera):
        refused = browser.post("/queues/nlp/act/", {"action": "close"})
        missing = browser.post("/queues/no-such-queue/act/", {"action": "close"})
        assert refused.status_code == missing.status_code == 404
        assert refused.content == missing.content
        assert Queue.objects.get(name="nlp").open is True
    assert as_olga.post("/queues/no-such-queue/act/", {"action": "close"}).status_code == 404


def test_a_bad_action_is_a_400_naming_the_field(as_olga, tree):
    response = as_olga.post("/queues/nlp/act/", {"action": "drain"})
    assert response.status_code == 400
    assert response.content.decode() == "action: must be one of close, open"
    assert Queue.objects.get(name="nlp").open is True
    assert as_olga.get("/queues/nlp/act/").status_code == 405


def test_the_action_needs_the_csrf_token(olga, tree):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(olga)
    assert browser.post("/queues/nlp/act/", {"action": "close"}).status_code == 403
    assert Queue.objects.get(name="nlp").open is True


# ---------------------------------------------------------------- the gang page


def test_the_gang_page_names_its_queue_and_its_queue_reason(as_alice, tree):
    Gang.objects.filter(name="bert").update(
        reason="QueueClosed", message="queue ml/nlp closed", details={"queue": "ml/nlp"}
    )
    html = as_alice.get("/gangs/ml/bert/").content.decode()
    assert '<a class="gang-queue" data-queue="nlp" href="/queues/#queue-nlp">nlp</a>' in html
    assert 'class="queue-reason"' in html and "Held back by its queue" in html
    assert "queue ml/nlp closed" in html

    Gang.objects.filter(name="bert").update(reason="InsufficientResources", message="needs 2")
    assert 'class="queue-reason"' not in as_alice.get("/gangs/ml/bert/").content.decode()


def test_the_gang_page_links_a_local_queue_to_its_cluster_queue(as_olga, tree):
    LocalQueue.objects.create(namespace="lab", name="main", cluster_queue=Queue.objects.get(name="cv"))
    make_gang("lab", "resnet", submitter="olga", queue="main")
    html = as_olga.get("/gangs/lab/resnet/").content.decode()
    assert 'href="/queues/#queue-cv">cv</a> <small>(LocalQueue main)</small>' in html
