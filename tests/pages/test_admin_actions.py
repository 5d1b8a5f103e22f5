"""The admin's "Retry selected gangs" and "Kill selected gangs" go through the operator service."""

from unittest import mock

import pytest
from django.contrib.auth.models import User

from scheduler_core.models import Gang, GangEvent
from scheduler_core.services import operator

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/scheduler_core/gang/"


def act(client, action, *gangs):
    return client.post(CHANGELIST, {"action": action, "_selected_action": [g.pk for g in gangs]}, follow=True)


@pytest.fixture
def admin_user(db) -> User:
    return User.objects.create_superuser("root", password="root-pass-123")


def test_the_changelist_offers_both_actions(client, admin_user, world):
    client.force_login(admin_user)

    html = client.get(CHANGELIST).content.decode()

    assert "Retry selected gangs" in html and "Kill selected gangs" in html


def test_retry_selected_calls_the_service_and_records_history(client, admin_user, world):
    client.force_login(admin_user)

    response = act(client, "retry_selected", world["late"], world["detect"], world["train"])

    messages = [str(m) for m in response.context["messages"]]
    assert "cv/detect: retried" in messages and "ml/late: retried" in messages
    assert "gang ml/train is Pending: only TimedOut or Failed gangs can be retried" in messages
    assert set(Gang.objects.filter(name__in=["late", "detect"]).values_list("phase", flat=True)) == {
        "Pending"
    }
    assert GangEvent.objects.filter(kind="retried", reason="retried by root").count() == 2


def test_kill_selected_calls_the_same_service_as_the_api(client, admin_user, world):
    client.force_login(admin_user)

    with mock.patch("dashboard.pages.actions.gang_kill", wraps=operator.gang_kill) as kill:
        act(client, "kill_selected", world["late"])

    kill.assert_called_once()
    assert Gang.objects.get(pk=world["late"].pk).phase == "Killed"
    assert GangEvent.objects.filter(kind="killed", reason="killed by root").exists()
