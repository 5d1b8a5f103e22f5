"""Every page renders for an operator and for a submitter, who sees only their own gangs;
anonymous users are sent to the login page."""

import pytest

from tests.pages.conftest import make_gang

pytestmark = pytest.mark.django_db

PAGES = ["/", "/gangs/", "/gangs/ml/train/", "/nodes/", "/queues/", "/timed-out/", "/simulations/"]


@pytest.mark.parametrize("url", PAGES)
def test_it_sends_anonymous_users_to_login(client, world, url):
    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("url", PAGES)
def test_it_renders_for_an_operator(as_olga, world, url):
    response = as_olga.get(url)

    assert response.status_code == 200
    html = response.content.decode()
    assert '<div id="live-status" hidden>' in html
    assert "js/live.js" in html and "defer" in html


def test_operator_sees_every_gang(as_olga, world):
    html = as_olga.get("/gangs/").content.decode()

    assert 'data-gang="ml/train"' in html
    assert 'data-gang="cv/detect"' in html


def test_submitter_sees_only_their_own_gangs(as_alice, world):
    for url in ["/", "/gangs/", "/timed-out/"]:
        html = as_alice.get(url).content.decode()
        assert "cv/detect" not in html, url
    assert 'data-gang="ml/train"' in as_alice.get("/gangs/").content.decode()


def test_another_users_gang_is_a_404(as_alice, world):
    assert as_alice.get("/gangs/cv/detect/").status_code == 404
    assert as_alice.get("/gangs/ml/nope/").status_code == 404


def test_the_progress_bar_follows_the_live_contract(as_olga, world):
    html = as_olga.get("/gangs/").content.decode()

    assert (
        '<div class="progress" data-gang="ml/train" data-bound="0" data-reserved="0" data-min="2" '
        'data-total="2"'
    ) in html
    assert '<span class="progress-bar" style="width: 0%">' in html
    assert '<span class="gang-state state-Pending" data-gang="ml/train" data-state="Pending">' in html
    # The badges' mapping, as static/js/live.js reads it when a state changes live.
    assert '"Finished": {"text": "Finished", "class": "gang-state state-Finished"}' in html


def test_the_overview_has_the_feed_and_chart_data(as_olga, world):
    html = as_olga.get("/").content.decode()

    assert '<ul id="event-feed"' in html
    assert 'id="chart-data" type="application/json"' in html
    assert "js/charts.js" in html


def test_the_overview_lists_worker_heartbeats_with_their_age(as_olga, world):
    from datetime import timedelta

    import redis
    from django.conf import settings
    from django.utils import timezone

    from scheduler_core.worker import heartbeats

    client = redis.Redis.from_url(settings.REDIS_URL)
    hostname = "render-beat@test"
    heartbeats.heartbeat_write(hostname, client=client, now=timezone.now() - timedelta(seconds=7))
    try:
        html = as_olga.get("/").content.decode()
    finally:
        client.delete(heartbeats.KEY_PREFIX + hostname)
        client.close()

    assert "Worker heartbeats" in html
    assert f'<div data-worker="{hostname}">{hostname}: <time datetime=' in html
    assert any(f">{age} s ago</time>" in html for age in (7, 8, 9))


def test_the_overview_says_whether_a_kubernetes_watcher_leads(as_olga, world, settings):
    from scheduler_core.cluster.kube import readiness

    assert "simulated" in as_olga.get("/").content.decode()
    settings.CLUSTER_BACKEND = "kubernetes"
    readiness.ready_clear()
    assert "no watcher of this deployment leads: nothing is scheduled" in as_olga.get("/").content.decode()
    readiness.ready_set("gangsched-watcher-7d9f", ttl_s=30)
    try:
        html = as_olga.get("/").content.decode()
    finally:
        readiness.ready_clear()
    assert "watcher gangsched-watcher-7d9f leads and has listed the cluster" in html


def test_gang_detail_shows_why_members_and_declaration(as_olga, world):
    html = as_olga.get("/gangs/cv/detect/").content.decode()

    assert "not satisfied within 10s" in html
    assert "detect-2" in html
    assert "created" in html  # the timeline
    assert 'value="retry"' in html and 'value="kill"' in html


def test_gang_detail_says_since_when_its_reason_holds_and_when_it_is_tried_again(as_olga, db):
    """A gang the scheduler does not try again in every cycle keeps the reason it was last given;
    the page says when that reason was computed, so an old reason does not read as a fresh one."""
    gang = make_gang("ml", "waiting", submitter="olga")
    gang.reason, gang.message = "InsufficientResources", "needs 4 x {cpu 8}; short by 4"
    gang.details = {"explained_at": "2026-12-07T14:03:22+00:00"}
    gang.save()

    html = as_olga.get("/gangs/ml/waiting/").content.decode()

    assert 'The reason since <time datetime="2026-12-07T14:03:22+00:00">2026-12-07 14:03:22</time>' in html
    assert "and at least every 30 s" in html


def test_gang_detail_says_nothing_of_retries_when_every_gang_is_tried_every_cycle(as_olga, db, settings):
    settings.GANGSCHED_REQUEUE_BACKOFF_MAX_S = 0.0
    gang = make_gang("ml", "waiting", submitter="olga")
    gang.reason, gang.message = "InsufficientResources", "needs 4 x {cpu 8}; short by 4"
    gang.details = {"explained_at": "2026-12-07T14:03:22+00:00"}
    gang.save()

    html = as_olga.get("/gangs/ml/waiting/").content.decode()

    assert "The reason since" in html and "at least every" not in html


def test_gang_detail_without_a_recorded_time_says_nothing_of_it(as_olga, db):
    gang = make_gang("ml", "older", submitter="olga")
    gang.reason, gang.message = "InsufficientResources", "needs 4 x {cpu 8}; short by 4"
    gang.save()

    assert "The reason since" not in as_olga.get("/gangs/ml/older/").content.decode()


def test_gang_group_progress_lists_every_gang_of_the_group(as_olga, db):
    from scheduler_core.services.groups import gang_group_join

    first = make_gang("ml", "a", submitter="olga")
    gang_group_join(gang=first, members=["ml/a", "ml/b"])

    html = as_olga.get("/gangs/").content.decode()

    assert "ml/b" in html and "NotSubmitted" in html


def test_the_nodes_page_counts_other_schedulers_pods_as_used(as_olga, world):
    from scheduler_core.models import Node

    cpu = 8000
    Node.objects.create(name="shared-1", allocatable={"cpu": cpu}, external_usage={"cpu": cpu})
    html = as_olga.get("/nodes/").content.decode()
    assert f'data-resource="cpu" data-capacity="{cpu}" data-used="{cpu}"' in html


@pytest.mark.parametrize(
    ("duration", "limit", "shown"),
    [
        (
            30,
            3600.0,
            "as if created 120 s later: 120 device-seconds of expected work",
        ),  # 2 pods x 2 CPUs x 30 s
        (3600, 3600.0, "as if created 3600 s later: 14400 device-seconds of expected work"),
        (None, 3600.0, "as if created 3600 s later: a member has no expected runtime"),
        (30, 0.0, "by creation (FIFO)"),
    ],
)
def test_gang_detail_shows_where_least_work_first_queues_it(as_olga, db, settings, duration, limit, shown):
    from scheduler_core.models import Member

    settings.GANGSCHED_OVERTAKE_LIMIT_S = limit
    gang = make_gang("ml", "short", submitter="olga")
    Member.objects.filter(gang=gang).update(
        requests={"cpu": 2000, "memory": 1 << 30}, duration_seconds=duration
    )
    html = as_olga.get("/gangs/ml/short/").content.decode()
    assert shown in html
    assert ("capped at the 3600 s limit" in html) == (duration == 3600)


def test_gang_detail_shows_the_expected_runtime_and_its_source(as_olga, db):
    from scheduler_core.models import Member
    from scheduler_core.services.runtimes import gang_estimates_refresh

    gang = make_gang("ml", "limited", submitter="olga")
    Member.objects.filter(gang=gang).update(deadline_seconds=5400)
    gang_estimates_refresh([gang.pk])
    html = as_olga.get("/gangs/ml/limited/").content.decode()
    assert 'class="runtime" data-source="limit"' in html
    assert "90min, its limit (activeDeadlineSeconds)" in html
