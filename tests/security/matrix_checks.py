"""What a cell's answer must show: the table's outcome, the same bytes for another's gang as for
no gang at all, no row changed by a denied write, no name of alice's gang in anything bob reads,
and per route what the answer did (a gang created for its sender, a phase changed or not)."""

from __future__ import annotations

import html

from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from scheduler_core.models import Gang, GangEvent, GangForecast, Queue
from scheduler_core.services.forecast_privacy import message_for_owner
from tests.security.matrix_requests import (
    NO_SUCH_QUEUE,
    PARAMS_BY_KEY,
    QUEUE,
    body,
    client,
    in_queue,
    own_gang,
    request_kwargs,
    send,
)
from tests.security.matrix_table import (
    HIDDEN,
    LOGIN,
    NOT_FOUND,
    PAGE_NOT_FOUND,
    QUEUE_HIDDEN,
    SECRET,
    STAFF,
    Row,
)
from tests.security.urlmatrix import Endpoint

SEES_ALICES_GANG = {"alice", "vera", "olga"}
#: bob's gang waiting ahead of alice's in her queue's lane: alice must never read its name.
BOBS_GANG = "bobs-job"
#: What each forecast's explanation says: each names the other submitter's gang.
NAMES_BOBS = f"blocked behind team-b/{BOBS_GANG}, which is first in the queue and has capacity reserved"
NAMES_ALICES = f"evicting ml/{SECRET}-waits (gang, priority 0, 1 member: ml/{SECRET}-waits-0) to make room"


def forecasts_for_the_matrix(alices: Gang, bobs: Gang) -> None:
    """Forecasts as a run stores them (tests/stored_forecasts/test_privacy.py checks the run's
    redaction): bob's gang first in the queue, alice's second; alice is first among her own."""
    now = timezone.now()
    common = {"made_at": now, "status": "expected", "queue": f"{QUEUE}-lane", "start_p50": now}
    own = {"own_in_queue": 0, "own_in_local_queue": 0, "own_in_cluster": 0}
    for gang, ahead, reason, message in (
        (bobs, 0, "Preempting", NAMES_ALICES),
        (alices, 1, "BlockedBehind", NAMES_BOBS),
    ):
        GangForecast.objects.create(
            gang=gang, **common, **own, position_in_queue=ahead, position_in_local_queue=0,
            position_in_cluster=ahead, waiting_reason=reason, waiting_message=message,
            waiting_message_own=message_for_owner(reason, message, gang.submitter, {}),
        )  # fmt: skip


#: What a submitter reads instead of an explanation naming another's gang (reads/redaction.py).
BEHIND_GENERIC = "blocked behind another submitter's gang"
#: A preemption victim's history, naming the preemptor.
PREEMPTED_BY_BOB = f"preempted by team-b/{BOBS_GANG} (priority 10): evicting 2 members"


def explanations_for_the_matrix(alices: list[Gang], bobs: Gang) -> None:
    """The engine's explanations as a cycle stores them (gang row and ``explained`` event):
    alice's gangs wait behind bob's, the head of her queue; bob's preempts her waiting gang, its
    details listing her gang and pod; her waiting gang's history says bob's preempted it."""
    head = f"team-b/{BOBS_GANG}"
    for gang in alices:
        details = {"head": head, "head_created_later_s": 30.0, "explained_at": "2024-01-01T00:00:00+00:00"}
        Gang.objects.filter(pk=gang.pk).update(reason="BlockedBehind", message=NAMES_BOBS, details=details)
        GangEvent.objects.create(
            gang=gang, kind="explained", reason=f"BlockedBehind: {NAMES_BOBS}", details={"head": head}
        )
    victim = f"ml/{SECRET}-waits"
    details = {
        "victims": [victim],
        "taken": [{"kind": "whole", "gang": victim, "priority": 0, "pods": [f"{victim}-0"]}],
        "nominated": 1,
    }
    Gang.objects.filter(pk=bobs.pk).update(reason="Preempting", message=NAMES_ALICES, details=details)
    explained = f"Preempting: {NAMES_ALICES}"
    GangEvent.objects.create(gang=bobs, kind="explained", reason=explained, details=details)
    GangEvent.objects.create(
        gang=alices[-1], kind="preempted", reason=PREEMPTED_BY_BOB, details={"scope": "gang", "taken": []}
    )


ACTED = {"retry": "Pending", "kill": "Killed"}
NEVER = "no-such-gang"


def rows_snapshot() -> dict:
    """Every row of the scheduler's and the dashboard's tables."""
    models = [
        *apps.get_app_config("scheduler_core").get_models(),
        *apps.get_app_config("dashboard").get_models(),
    ]
    return {model._meta.label: list(model.objects.order_by("pk").values()) for model in models}


def check_outcome(endpoint: Endpoint, outcome, response) -> None:
    where = f"{response.status_code} {response.get('Location', '')} {body(response)[:300]!r}"
    if outcome is LOGIN and endpoint.is_api:
        assert response.status_code == 401, where
    elif outcome is LOGIN:
        login = "/admin/login/" if endpoint.is_admin else settings.LOGIN_URL
        assert response.status_code == 302, where
        assert response["Location"].startswith(f"{login}?next="), where
    else:
        assert response.status_code in outcome.statuses, where
    if outcome is STAFF:  # past the gate: the admin's model permissions answer, never its sign-in
        assert not response.get("Location", "").startswith("/admin/login/"), where
    if endpoint.is_api and outcome.denial and response.status_code >= 400:  # the API's one refusal body
        assert set(response.json()) == {"errors"}, where
    if outcome is NOT_FOUND:
        reasons = [error["reason"] for error in response.json()["errors"]]
        assert any("not found" in reason.lower() for reason in reasons), reasons


def check_hidden(endpoint, method, browser, world, kwargs, response) -> None:
    """Another's gang: the same bytes as the answer to the same URL once the gang does not exist,
    and, but for the name, as the answer for a name no gang ever had."""
    with transaction.atomic():
        Gang.objects.filter(pk=world["gang"].pk).delete()
        missing = send(endpoint, method, browser, world["params"], kwargs)
        transaction.set_rollback(True)
    never = send(endpoint, method, browser, {**world["params"], "name": NEVER}, kwargs)
    for other in (missing, never):
        assert other.status_code == 404
        assert response.get("Content-Type") == other.get("Content-Type")
    assert body(response) == body(missing)
    assert body(response).replace(SECRET.encode(), NEVER.encode()) == body(never)


def check_page_not_found(endpoint, method, browser, world, kwargs, response) -> None:
    """The same bytes as the answer for an object that never existed."""
    path = endpoint.path({**world["params"], **PARAMS_BY_KEY.get(endpoint.key, {}), "name": NEVER})
    never = getattr(browser, method.lower())(path, **kwargs)
    assert never.status_code == 404
    assert body(response) == body(never)


# What a cell's answer must also show, beyond its status: (key, method, case) -> check(role, response).
def _lists_alices_gang(role, response, world, browser) -> None:
    assert (SECRET in response.content.decode()) is (role in SEES_ALICES_GANG)


def _forecasts_as_the_role_may_read_them(role, response, world, browser) -> None:
    """The list's forecasts: alice's own count and bob's name redacted; viewers Kueue's count."""
    _lists_alices_gang(role, response, world, browser)
    forecasts = {row["name"]: row["forecast"] for row in response.json()["results"]}
    if role == "alice":
        mine = forecasts[f"{SECRET}-waits"]
        assert (mine["positionsCount"], mine["positionInQueue"]) == ("own", 0)
        assert BOBS_GANG not in mine["waitingFor"]["message"]
    elif role in SEES_ALICES_GANG:
        theirs = forecasts[f"{SECRET}-waits"]
        assert (theirs["positionsCount"], theirs["positionInQueue"]) == ("all", 1)
        assert theirs["waitingFor"]["message"] == NAMES_BOBS
    else:
        assert forecasts[BOBS_GANG]["positionsCount"] == "own"
    messages = {row["name"]: row["message"] for row in response.json()["results"]}
    if role == "alice":
        assert messages[f"{SECRET}-waits"].startswith(BEHIND_GENERIC)
    elif role in SEES_ALICES_GANG:
        assert (messages[f"{SECRET}-waits"], messages[BOBS_GANG]) == (NAMES_BOBS, NAMES_ALICES)


def _names_as_the_role_may_see_them(role, response, world, browser) -> None:
    """A page or answer with alice's gang's explanation (or history): operators and viewers read
    bob's gang's name in it; alice, who may not see his gang, the generic sentence instead
    (``ask`` checks that his name is nowhere in what she reads)."""
    text = html.unescape(body(response).decode(errors="replace"))
    if role == "alice":
        assert BEHIND_GENERIC in text, "alice is told why her gang waits, without a name"
    elif role in ("vera", "olga"):
        assert BOBS_GANG in text, "an operator reads the name of the gang alice waits behind"


def _explanation_as_the_role_may_read_it(role, response, world, browser) -> None:
    """The API's gang: the message, the details and the history, each redacted for alice alone."""
    _names_as_the_role_may_see_them(role, response, world, browser)
    if response.status_code != 200:
        return
    gang = response.json()
    explanation, history = gang["explanation"], [e["reason"] for e in gang["history"]]
    if role == "alice":
        assert explanation["message"].startswith(BEHIND_GENERIC), explanation
        assert "head" not in explanation["details"] and "head_created_later_s" not in explanation["details"]
        assert gang["why"]["message"] == explanation["message"]
        assert any(reason.startswith(f"BlockedBehind: {BEHIND_GENERIC}") for reason in history), history
    else:
        assert explanation["message"] == NAMES_BOBS
        assert explanation["details"]["head"] == f"team-b/{BOBS_GANG}"
        assert f"BlockedBehind: {NAMES_BOBS}" in history


def _starts_shown(role, response, world, browser) -> None:
    """The Gangs list's Starts column: each role's waiting gang shows its forecast."""
    _lists_alices_gang(role, response, world, browser)
    live = response.get("Content-Type", "").startswith("application/json")
    text = response.json()["html"] if live else response.content.decode()
    assert 'class="starts"' in text and "any moment now" in text


def _phase_after(action: str):
    def check(role, response, world, browser) -> None:
        world["gang"].refresh_from_db()
        acted = response.status_code == 200
        assert world["gang"].phase == (ACTED[action] if acted else "TimedOut")

    return check


def _owned_by_sender(role, response, world, browser) -> None:
    submitters = Gang.objects.filter(namespace="ml", name=own_gang(role)).values_list("submitter", flat=True)
    assert list(submitters) == [role]


def _answers_as_created_by_sender(role, response, world, browser) -> None:
    """A dry run: the write's answer for the sender's own new gang, marked (``ask`` checks that
    no row changed)."""
    answer = response.json()
    assert answer["dryRun"] is True
    gangs = answer.get("gangs", [answer])
    assert [(g["name"], g["submitter"]) for g in gangs] == [(own_gang(role), role)]
    assert all(line.endswith(" (server dry run)") for line in answer.get("lines", []))


def _as_a_missing_queue(query: str):
    """Refused: the bytes a job naming a queue that does not exist gets (the same query)."""

    def check(role, response, world, browser) -> None:
        if response.status_code != 400:
            return
        never = send_never_queue(browser, role, query)
        assert never.status_code == 400
        assert body(response).replace(QUEUE.encode(), NO_SUCH_QUEUE.encode()) == body(never)

    return check


def send_never_queue(browser, role: str, query: str):
    kwargs = in_queue(role, NO_SUCH_QUEUE)
    return browser.post("/api/v1/gangs/", **kwargs, **({"QUERY_STRING": query} if query else {}))


def _counts_visible_gangs(role, response, world, browser) -> None:
    counted = response.json()["gangsByPhase"]
    # alice's two gangs: the timed-out one and the one waiting in her queue; bob's one waiting
    expected = {"alice": 2, "bob": 1}.get(role, 3)
    assert sum(counted.values()) == expected, f"gangsByPhase {counted}"


def _page_action_message(role, response, world, browser) -> None:
    messages = [str(m) for m in browser.get(response["Location"]).context["messages"]]
    assert messages == [PAGE_ACTION_MESSAGES[role]]
    world["gang"].refresh_from_db()
    assert world["gang"].phase == ("Killed" if role in ("alice", "olga") else "TimedOut")


PAGE_ACTION_MESSAGES = {
    "alice": f"ml/{SECRET}: killed",
    "olga": f"ml/{SECRET}: killed",
    "bob": f"ml/{SECRET}: not found",
    "vera": f"ml/{SECRET}: you may kill only your own gangs without the kill_gang permission",
}


def _lists_alices_queue(role, response, world, browser) -> None:
    assert (QUEUE in response.content.decode()) is (role in SEES_ALICES_GANG)


def _lists_alices_queue_and_lane(role, response, world, browser) -> None:
    """The queue, and the gang of alice's waiting in it (its lane, and the live answer's)."""
    _lists_alices_queue(role, response, world, browser)
    assert (f"{SECRET}-waits" in response.content.decode()) is (role in SEES_ALICES_GANG)


def _lane_counts_as_the_role_may_read_them(role, response, world, browser) -> None:
    """alice's lane: bob's gang waits first, hers second. She reads her own count and her gang's
    place among her own (1st); operators and viewers the lane's count and its place (2nd)."""
    _lists_alices_queue_and_lane(role, response, world, browser)
    live = response.get("Content-Type", "").startswith("application/json")
    text = response.json()["pending_html"] if live else response.content.decode()
    mine = f'data-gang="ml/{SECRET}-waits" data-position='
    if role == "alice":
        assert f'{mine}"1"' in text and "2 waiting" not in text and "ahead" not in text
        assert "1 of yours waiting" in text
    elif role in SEES_ALICES_GANG:
        assert f'{mine}"2"' in text and "2 waiting" in text


def _pods_counted_as_the_role_may_read_them(role, response, world, browser) -> None:
    """The lane's pending pods: alice's two and bob's two. alice reads her own two; operators and
    viewers all four; the queues' resource figures are the queue's, the same for everyone."""
    _lists_alices_queue(role, response, world, browser)
    lanes = [q for q in response.json() if q["name"] == f"{QUEUE}-lane"]
    if role in SEES_ALICES_GANG:
        (lane,) = lanes
        assert lane["pendingPods"] == (2 if role == "alice" else 4)
        assert lane["pending"]["cpu"] == 4000


def _queue_closed(role, response, world, browser) -> None:
    closed = not Queue.objects.get(name=QUEUE).open
    assert closed is (role == "olga")


def _signed_in(role, response, world, browser) -> None:
    assert response.wsgi_request.user.is_authenticated is (response.status_code == 302)


CHECKS = {
    ("api:gangs", "GET", "default"): _forecasts_as_the_role_may_read_them,
    ("api:events", "GET", "default"): _lists_alices_gang,
    ("api:gang", "GET", "default"): _explanation_as_the_role_may_read_it,
    ("api:gang-events", "GET", "default"): _names_as_the_role_may_see_them,
    ("dashboard:gang", "GET", "default"): _names_as_the_role_may_see_them,
    ("api:events", "GET", "gang-filter"): _lists_alices_gang,
    ("api:events", "GET", "actor-filter"): _lists_alices_gang,
    ("dashboard:history", "GET", "default"): _lists_alices_gang,
    ("dashboard:history", "GET", "queue-filter"): _lists_alices_gang,
    ("dashboard:history", "GET", "actor-filter"): _lists_alices_gang,
    ("dashboard:gangs", "GET", "default"): _starts_shown,
    ("dashboard:timed-out", "GET", "default"): _lists_alices_gang,
    ("dashboard:gangs", "GET", "live-rows"): _starts_shown,
    ("dashboard:timed-out", "GET", "live-rows"): _lists_alices_gang,
    ("api:gang-retry", "POST", "default"): _phase_after("retry"),
    ("api:gang-kill", "POST", "default"): _phase_after("kill"),
    ("api:gangs", "POST", "default"): _owned_by_sender,
    ("api:manifests", "POST", "default"): _owned_by_sender,
    ("api:gangs", "POST", "dry-run-default"): _answers_as_created_by_sender,
    ("api:manifests", "POST", "dry-run-default"): _answers_as_created_by_sender,
    ("api:gangs", "POST", "others-queue"): _as_a_missing_queue(""),
    ("api:gangs", "POST", "dry-run-others-queue"): _as_a_missing_queue("dryRun=All"),
    ("api:cluster", "GET", "default"): _counts_visible_gangs,
    ("dashboard:gang-action", "POST", "default"): _page_action_message,
    ("login", "POST", "default"): _signed_in,
    ("dashboard:queue-action", "POST", "default"): _queue_closed,
    ("api:queues", "GET", "default"): _pods_counted_as_the_role_may_read_them,
    ("dashboard:queues", "GET", "default"): _lane_counts_as_the_role_may_read_them,
    ("dashboard:queues-live", "GET", "default"): _lane_counts_as_the_role_may_read_them,
}


def ask(endpoint: Endpoint, row: Row, role: str, world: dict) -> None:
    """One cell: one request (two for HIDDEN), and every check above that applies to it."""
    outcome = row.expect[role]
    browser = client(endpoint, world["users"][role])
    kwargs = request_kwargs(row.key, row.method, row.case, role)
    dry_run = row.case.startswith("dry-run-")
    before = rows_snapshot() if (outcome.denial or dry_run) and row.method != "GET" else None

    response = send(endpoint, row.method, browser, world["params"], kwargs)

    check_outcome(endpoint, outcome, response)
    if before is not None:
        assert rows_snapshot() == before, (
            "a dry run changed rows" if dry_run else "a denied write changed rows"
        )
    if outcome is HIDDEN:
        check_hidden(endpoint, row.method, browser, world, kwargs, response)
    if outcome in (PAGE_NOT_FOUND, QUEUE_HIDDEN):
        check_page_not_found(endpoint, row.method, browser, world, kwargs, response)
    if role == "bob" and 200 <= response.status_code < 300:
        assert SECRET not in body(response).decode(errors="replace"), "bob read alice's gang"
    if role == "alice" and 200 <= response.status_code < 300:
        assert BOBS_GANG not in body(response).decode(errors="replace"), "alice read bob's gang"
    check = CHECKS.get((row.key, row.method, row.case))
    if check is not None and outcome is not LOGIN:  # signing in first is all LOGIN says
        check(role, response, world, browser)
