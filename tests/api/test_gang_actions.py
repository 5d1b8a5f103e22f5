"""POST .../retry/ and .../kill/: per-action permissions (retry_gang, kill_gang) or one's own gang;
409 when the gang's phase does not allow the action."""

import pytest

from scheduler_core.models import Gang, GangEvent

from .conftest import errors, make_gang


def timed_out(name="train", submitter="alice") -> Gang:
    gang = make_gang("ml", name, submitter=submitter)
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")
    return gang


def test_a_submitter_retries_their_own_timed_out_gang(as_alice):
    gang = timed_out()
    response = as_alice.post("/api/v1/gangs/ml/train/retry/")
    assert response.status_code == 200, response.content
    assert response.json()["phase"] == "Pending"
    assert GangEvent.objects.get(gang=gang, kind="retried").reason == "retried by alice"


def test_a_submitter_cannot_retry_or_kill_someone_elses_gang(as_bob):
    gang = timed_out()
    for action in ("retry", "kill"):
        assert as_bob.post(f"/api/v1/gangs/ml/train/{action}/").status_code == 404
    gang.refresh_from_db()
    assert gang.phase == "TimedOut"


@pytest.mark.parametrize("action", ["retry", "kill"])
def test_an_operator_may_act_on_any_gang(as_olga, action):
    timed_out()
    response = as_olga.post(f"/api/v1/gangs/ml/train/{action}/")
    assert response.status_code == 200, response.content
    assert response.json()["phase"] == {"retry": "Pending", "kill": "Killed"}[action]
    assert (
        GangEvent.objects.filter(kind={"retry": "retried", "kill": "killed"}[action])
        .get()
        .reason.endswith("by olga")
    )


@pytest.mark.parametrize("action", ["retry", "kill"])
def test_seeing_a_gang_without_the_actions_permission_is_403(as_vera, action):
    timed_out()
    response = as_vera.post(f"/api/v1/gangs/ml/train/{action}/")
    assert response.status_code == 403
    assert f"{action}_gang permission" in errors(response)[0][1]
    assert Gang.objects.get(name="train").phase == "TimedOut"


def test_each_permission_is_checked_for_its_own_action(vera, as_vera):
    from django.contrib.auth.models import Permission

    vera.user_permissions.add(Permission.objects.get(codename="kill_gang"))
    timed_out()
    assert as_vera.post("/api/v1/gangs/ml/train/retry/").status_code == 403
    assert as_vera.post("/api/v1/gangs/ml/train/kill/").status_code == 200


def test_retrying_a_pending_gang_is_a_409_with_the_reason(as_alice):
    make_gang("ml", "train")
    response = as_alice.post("/api/v1/gangs/ml/train/retry/")
    assert response.status_code == 409
    assert errors(response) == [
        (None, "gang ml/train is Pending: only TimedOut or Failed gangs can be retried")
    ]


def test_killing_a_killed_gang_is_a_409(as_alice):
    make_gang("ml", "train")
    assert as_alice.post("/api/v1/gangs/ml/train/kill/").status_code == 200
    response = as_alice.post("/api/v1/gangs/ml/train/kill/")
    assert response.status_code == 409
    assert "cannot be killed" in errors(response)[0][1]


def test_actions_are_posts(as_alice):
    timed_out()
    assert as_alice.get("/api/v1/gangs/ml/train/retry/").status_code == 405
