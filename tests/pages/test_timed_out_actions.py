"""Retry and kill from the pages: a confirmation first, then the operator service per gang, with
one result message each; history says who did it; pressing twice changes nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from scheduler_core.models import Gang, GangEvent, GangEventKind
from tests.pages.conftest import time_out

pytestmark = pytest.mark.django_db

ACT = "/gangs/act/"


def post(client, action, *keys, confirm=True, next="/timed-out/"):
    data = {"action": action, "gang": list(keys), "next": next}
    if confirm:
        data["confirm"] = "yes"
    return client.post(ACT, data, follow=True)


def texts(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def phase(namespace, name) -> str:
    return Gang.objects.get(namespace=namespace, name=name).phase


def test_the_queue_lists_timed_out_gangs_with_why_and_buttons(as_olga, world):
    html = as_olga.get("/timed-out/").content.decode()

    assert "ml/late" in html and "cv/detect" in html
    assert 'data-gang="ml/train"' not in html  # pending, not timed out
    assert "not satisfied within 10s" in html
    assert "Retry selected" in html and "Kill selected" in html


def test_the_list_says_when_each_gang_timed_out_and_how_long_it_had_waited(as_olga, world):
    late = Gang.objects.get(namespace="ml", name="late")
    timed_out_at = timezone.now() - timedelta(minutes=3)
    started = timed_out_at - timedelta(seconds=10.6)
    Gang.objects.filter(pk=late.pk).update(wait_seconds=10, wait_started=started)
    GangEvent.objects.create(gang=late, kind=GangEventKind.TIMED_OUT, reason="late", created=timed_out_at)

    html = as_olga.get("/timed-out/").content.decode()

    assert "<th>Timed out at</th><th>Waited</th>" in html
    row = html.split('<tr data-gang="ml/late">')[1].split("</tr>")[0]
    assert f'<time datetime="{timed_out_at.isoformat()}">' in row
    assert '<td class="waited">11 s <small>of 10 s</small></td>' in row


def test_it_asks_for_confirmation_first(as_olga, world):
    response = post(as_olga, "retry", "cv/detect", confirm=False)

    assert response.status_code == 200
    assert "Retry 1 gang?" in response.content.decode()
    assert phase("cv", "detect") == "TimedOut"


def test_it_retries_one_gang_and_records_who(as_olga, world):
    response = post(as_olga, "retry", "cv/detect")

    assert response.redirect_chain[-1][0] == "/timed-out/"
    assert texts(response) == ["cv/detect: retried"]
    assert phase("cv", "detect") == "Pending"
    assert GangEvent.objects.filter(gang=world["detect"], kind="retried", reason="retried by olga").exists()


def test_it_kills_in_bulk(as_olga, world):
    response = post(as_olga, "kill", "ml/late", "cv/detect")

    assert texts(response) == ["ml/late: killed", "cv/detect: killed"]
    assert phase("ml", "late") == phase("cv", "detect") == "Killed"
    assert GangEvent.objects.filter(kind="killed", reason="killed by olga").count() == 2


def test_a_killed_gangs_page_says_how_it_ended_and_offers_no_kill(as_olga, world):
    post(as_olga, "kill", "ml/late")

    html = as_olga.get("/gangs/ml/late/").content.decode()

    assert "<h2>How it ended</h2>" in html and "Why it is not placed" not in html
    assert ": killed by olga. Nothing of it is placed any more.</p>" in html
    assert "not satisfied within 10s" not in html.split("<h2>Timeline</h2>")[0]
    assert 'value="kill" class="danger" disabled>' in html


def test_pressing_twice_is_safe(as_olga, world):
    post(as_olga, "retry", "cv/detect")

    response = post(as_olga, "retry", "cv/detect")

    assert texts(response) == ["gang cv/detect is Pending: only TimedOut or Failed gangs can be retried"]
    assert GangEvent.objects.filter(gang=world["detect"], kind="retried").count() == 1


def test_a_bulk_action_reports_each_gang(as_olga, world):
    response = post(as_olga, "retry", "ml/late", "ml/train", "ml/ghost")

    assert texts(response) == [
        "ml/late: retried",
        "gang ml/train is Pending: only TimedOut or Failed gangs can be retried",
        "ml/ghost: not found",
    ]


def test_a_submitter_acts_on_their_own_gang(as_alice, world):
    response = post(as_alice, "kill", "ml/late")

    assert texts(response) == ["ml/late: killed"]


def test_a_submitter_cannot_touch_another_users_gang(as_alice, world):
    response = post(as_alice, "kill", "cv/detect")

    assert texts(response) == ["cv/detect: not found"]  # as the API: unseen gangs do not exist
    assert phase("cv", "detect") == "TimedOut"


def test_a_viewer_without_the_permission_is_refused(as_vera, world):
    html = as_vera.get("/timed-out/").content.decode()
    assert 'value="retry"' not in html

    response = post(as_vera, "retry", "cv/detect")

    assert texts(response) == [
        "cv/detect: you may retry only your own gangs without the retry_gang permission"
    ]
    assert phase("cv", "detect") == "TimedOut"


def test_nothing_selected_says_so(as_olga, world):
    response = as_olga.post(ACT, {"action": "retry", "confirm": "yes"}, follow=True)

    assert texts(response) == ["Select at least one gang."]


def test_it_never_redirects_off_site(as_olga, world):
    response = as_olga.post(
        ACT, {"action": "retry", "gang": "ml/late", "confirm": "yes", "next": "https://evil.example/"}
    )

    assert response["Location"] == "/timed-out/"


def test_anonymous_posts_go_to_login(client, world):
    response = client.post(ACT, {"action": "kill", "gang": "ml/late", "confirm": "yes"})

    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert phase("ml", "late") == "TimedOut"


def test_the_gang_page_retries_and_comes_back(as_olga, world):
    response = post(as_olga, "retry", "ml/late", next="/gangs/ml/late/")

    assert response.redirect_chain[-1][0] == "/gangs/ml/late/"
    assert "ml/late: retried" in response.content.decode()


def test_a_retried_gang_leaves_the_queue(as_olga, world):
    post(as_olga, "retry", "ml/late")
    time_out(world["train"])

    html = as_olga.get("/timed-out/").content.decode()

    assert 'data-gang="ml/late"' not in html and 'data-gang="ml/train"' in html
