"""The dashboard in Chromium: log in, the overview, a gang's bar filling as the worker binds it,
a timeout and a retry from the timed-out page, a kill, the admin actions, and the banner when the
live socket drops. Nothing here reloads a page while it waits for a live change: each waiting
page carries a marker in ``window`` that a reload would lose."""

from __future__ import annotations

import re

import pytest

from scheduler_core.models import Gang, Member
from tests.loop.factories import make_nodes

from .conftest import api_post, kick_until, log_in, wait_live

pytestmark = pytest.mark.django_db(transaction=True)


def gang_json(name: str, replicas: int, cpu: str = "2", **fields) -> dict:
    return {
        "namespace": "ml",
        "name": name,
        "minMember": replicas,
        "tasks": [
            {"name": "worker", "replicas": replicas, "template": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
        ],
        **fields,
    }


def phase(key: str) -> str:
    namespace, name = key.split("/")
    return Gang.objects.get(namespace=namespace, name=name).phase


def bound(key: str) -> int:
    namespace, name = key.split("/")
    return Member.objects.filter(gang__namespace=namespace, gang__name=name, node__isnull=False).count()


def mark(page) -> None:
    page.evaluate("window.__noReload = true")


def assert_not_reloaded(page) -> None:
    assert page.evaluate("window.__noReload === true"), "the page was reloaded"


def bar(page, key: str):
    return page.locator(f'.progress[data-gang="{key}"]').first


def test_log_in_and_see_the_overview_with_a_live_event_feed(page, live, olga):
    make_nodes(2)
    log_in(page, live, "olga", "olga-pass-123")
    assert page.locator("h1").first.inner_text() == "Overview"
    assert page.locator("#live-status").is_hidden()
    wait_live(page)
    mark(page)
    response = api_post(page, live, "/api/v1/gangs/", gang_json("feed", 2))
    assert response.status == 201, response.text()
    kick_until(lambda: bound("ml/feed") == 2, what="ml/feed bound")
    page.locator('#event-feed li[data-gang="ml/feed"]').first.wait_for(timeout=10_000)
    assert_not_reloaded(page)


def test_the_overview_counts_bars_and_charts_follow_a_bound_gang_without_a_reload(page, live, olga):
    make_nodes(2)
    log_in(page, live, "olga", "olga-pass-123")
    wait_live(page)
    mark(page)
    for state in ("Pending", "Scheduling", "Running"):
        assert page.locator(f'#overview-counts [data-count="{state}"]').inner_text().strip() == "0"
    points = page.evaluate("window.gangschedCharts.data.points.length")
    response = api_post(page, live, "/api/v1/gangs/", gang_json("counted", 2))
    assert response.status == 201, response.text()
    kick_until(lambda: bound("ml/counted") == 2, what="ml/counted bound")
    state = phase("ml/counted")  # Scheduling once bound (Running needs the kubelet, not run here)
    assert state in ("Pending", "Scheduling", "Running")
    page.wait_for_function(
        'state => document.querySelector(`#overview-counts [data-count="${state}"]`)'
        ".textContent.trim() === '1'",
        arg=state,
        timeout=10_000,
    )
    page.wait_for_function(  # two members of 2 CPUs on 8
        """() => document.querySelector('#overview-bars .bar[data-resource="cpu"]')
                       .dataset.used === '4000'""",
        timeout=10_000,
    )
    last = page.evaluate("window.gangschedCharts.data.points.at(-1)")
    assert last["pending"] + last["running"] == 1 and last["util"]["cpu"] == 50.0
    assert page.evaluate("window.gangschedCharts.data.points.length") >= min(points + 1, 60)
    assert_not_reloaded(page)


def test_a_submitted_gang_s_bar_reaches_bound_without_a_reload(page, live, alice):
    make_nodes(1, cpu=2)  # room for one of its two members: it waits
    log_in(page, live, "alice", "alice-pass-123")
    response = api_post(page, live, "/api/v1/gangs/", gang_json("bert", 2))
    assert response.status == 201, response.text()
    kick_until(lambda: Gang.objects.get(name="bert").reason, what="an explanation")
    page.goto(live + "/gangs/ml/bert/")
    wait_live(page)
    mark(page)
    assert bar(page, "ml/bert").get_attribute("data-bound") == "0"
    make_nodes(1, cpu=2, prefix="more")  # now it fits
    kick_until(lambda: bound("ml/bert") == 2, what="ml/bert bound")
    page.wait_for_function(
        """() => { const b = document.querySelector('.progress[data-gang="ml/bert"]');
                   return b && b.dataset.bound === b.dataset.min &&
                          b.querySelector('.progress-bar').style.width === '100%'; }""",
        timeout=10_000,
    )
    assert_not_reloaded(page)


def test_a_gang_times_out_live_and_is_retried_from_the_timed_out_page(page, live, olga):
    make_nodes(2, cpu=2)  # two of its three members fit: NonStrict keeps them reserved, then times out
    log_in(page, live, "olga", "olga-pass-123")
    response = api_post(page, live, "/api/v1/gangs/", gang_json("slow", 3, mode="NonStrict", waitSeconds=1))
    assert response.status == 201, response.text()
    page.goto(live + "/gangs/ml/slow/")
    wait_live(page)
    mark(page)
    kick_until(lambda: phase("ml/slow") == "TimedOut", sweep=True, what="the timeout")
    page.wait_for_function(
        "() => document.querySelector('.gang-state[data-gang=\"ml/slow\"]')"
        ".textContent.trim() === 'TimedOut'",
        timeout=10_000,
    )
    assert_not_reloaded(page)

    # Room for the third member before the retry: the retried gang's first cycle binds all three.
    # (Made after the retry, it could come later than the gang's 1 s wait: timed out again.)
    make_nodes(1, cpu=2, prefix="more")
    gang_page = page.context.new_page()  # the gang's page stays open, live, across the retry
    gang_page.goto(live + "/gangs/ml/slow/")
    wait_live(gang_page)
    mark(gang_page)
    page.goto(live + "/timed-out/")
    row = page.locator('tr[data-gang="ml/slow"]')
    row.get_by_role("button", name="Retry").click()
    page.get_by_role("button", name="Yes, retry").click()
    page.wait_for_url(live + "/timed-out/")
    assert page.locator('tr[data-gang="ml/slow"]').count() == 0
    assert phase("ml/slow") != "TimedOut"

    kick_until(lambda: bound("ml/slow") == 3, what="ml/slow bound after the retry")
    gang_page.wait_for_function(
        "() => { const b = document.querySelector('.progress[data-gang=\"ml/slow\"]'); "
        "return b && b.dataset.bound === '3'; }",
        timeout=10_000,
    )
    retried = gang_page.locator('.gang-state[data-gang="ml/slow"]').first
    assert retried.inner_text().strip() != "TimedOut"
    assert_not_reloaded(gang_page)


def test_kill_a_gang_from_its_page(page, live, olga):
    make_nodes(1, cpu=2)
    log_in(page, live, "olga", "olga-pass-123")
    assert api_post(page, live, "/api/v1/gangs/", gang_json("doomed", 2)).status == 201
    page.goto(live + "/gangs/ml/doomed/")
    page.locator("section.actions").get_by_role("button", name="Kill").click()
    page.get_by_role("button", name="Yes, kill").click()
    page.wait_for_load_state()
    assert phase("ml/doomed") == "Killed"
    page.goto(live + "/gangs/ml/doomed/")
    assert page.locator('.gang-state[data-gang="ml/doomed"]').first.inner_text().strip() == "Killed"


def test_the_admin_actions_retry_and_kill(page, live, olga):
    make_nodes(1, cpu=2)
    log_in(page, live, "olga", "olga-pass-123")
    assert api_post(page, live, "/api/v1/gangs/", gang_json("adm", 2)).status == 201
    gang = Gang.objects.get(name="adm")
    page.goto(live + "/admin/scheduler_core/gang/")
    page.check(f'input[name="_selected_action"][value="{gang.pk}"]')
    page.select_option('select[name="action"]', "kill_selected")
    page.click('button[name="index"]')
    page.locator("ul.messagelist").wait_for()
    assert phase("ml/adm") == "Killed"

    # Retrying a killed gang is refused, with the service's message.
    page.check(f'input[name="_selected_action"][value="{gang.pk}"]')
    page.select_option('select[name="action"]', "retry_selected")
    page.click('button[name="index"]')
    page.locator("ul.messagelist li.error").wait_for()
    assert phase("ml/adm") == "Killed"


def test_the_page_says_when_the_socket_drops_reconnects_and_catches_up(page, live, olga):
    make_nodes(1, cpu=2)
    # The page's sockets go through Playwright, which passes them to daphne until told to cut.
    cut = {"on": False, "sockets": []}

    def proxy(ws) -> None:
        if cut["on"]:
            ws.close(code=1011)
            return
        ws.connect_to_server()
        cut["sockets"].append(ws)

    page.context.route_web_socket(re.compile(r"/ws/gangs/$"), proxy)
    log_in(page, live, "olga", "olga-pass-123")
    assert api_post(page, live, "/api/v1/gangs/", gang_json("gap", 2)).status == 201
    page.goto(live + "/gangs/ml/gap/")
    wait_live(page)
    mark(page)
    cut["on"] = True
    for ws in cut["sockets"]:
        ws.close(code=1011)
    page.locator("#live-status").wait_for(state="visible", timeout=5_000)
    assert "reconnecting" in page.locator("#live-status").inner_text()
    # While it is away, the gang is bound: that event never reaches the page.
    make_nodes(1, cpu=2, prefix="more")
    kick_until(lambda: bound("ml/gap") == 2, what="ml/gap bound")
    assert bar(page, "ml/gap").get_attribute("data-bound") == "0"
    cut["on"] = False
    page.locator("#live-status").wait_for(state="hidden", timeout=20_000)
    page.wait_for_function(
        "() => document.querySelector('.progress[data-gang=\"ml/gap\"]').dataset.bound === '2'",
        timeout=10_000,
    )
    assert_not_reloaded(page)
