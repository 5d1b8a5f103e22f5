"""The admin's "Retry selected gangs" and "Kill selected gangs" go through the operator service."""

from datetime import datetime
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


def test_an_edit_in_the_admin_is_recorded_with_who_and_what(client, admin_user, world):
    """Every change of an existing gang, by anyone, is an event naming them."""
    gang = world["train"]
    client.force_login(admin_user)
    url = f"{CHANGELIST}{gang.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {"members-TOTAL_FORMS": 0, "members-INITIAL_FORMS": 0}
    for name in form.fields:  # the form as the browser would send it back
        value = form[name].value()
        if isinstance(value, datetime):  # the admin's split date and time inputs
            data[f"{name}_0"], data[f"{name}_1"] = value.strftime("%Y-%m-%d"), value.strftime("%H:%M:%S")
        elif value is not None and value is not False:
            data[name] = value
    data["min_member"] = gang.min_member + 1

    response = client.post(url, data)

    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else ""
    event = GangEvent.objects.filter(gang=gang, kind="configured").get()
    assert event.details["by"] == "root" and event.details["via"] == "admin"
    assert event.details["changed"]["min_member"] == {"from": gang.min_member, "to": gang.min_member + 1}
