"""Every operator action leaves a history row naming who did it, whichever door it came through:
the API, the pages, the admin (retry and kill, as GangEvent with ``details.by`` and the reason),
and the admin's own edits (Django's LogEntry with the user)."""

import pytest
from django.contrib.admin.models import DELETION, LogEntry
from django.test import Client

from scheduler_core.models import Gang, GangEvent, Node
from tests.api.conftest import client_for
from tests.cast import make_gang

pytestmark = pytest.mark.django_db


def api(user, action: str) -> None:
    assert client_for(user).post(f"/api/v1/gangs/ml/train/{action}/").status_code == 200


def page(user, action: str) -> None:
    client = Client()
    client.force_login(user)
    client.post("/gangs/act/", {"action": action, "gang": "ml/train", "confirm": "yes"})


def admin(user, action: str) -> None:
    client = Client()
    client.force_login(user)
    gang = Gang.objects.get(name="train")
    client.post(
        "/admin/scheduler_core/gang/", {"action": f"{action}_selected", "_selected_action": [gang.pk]}
    )


@pytest.mark.parametrize("door", [api, page, admin])
@pytest.mark.parametrize(
    ("action", "kind", "reason"),
    [("retry", "retried", "retried by olga"), ("kill", "killed", "killed by olga")],
)
def test_an_operator_action_records_the_user(olga, door, action, kind, reason):
    gang = make_gang("ml", "train", submitter="alice")
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")

    door(olga, action)

    event = GangEvent.objects.get(gang=gang, kind=kind)
    assert event.reason == reason
    assert event.details["by"] == "olga"


def test_a_submitters_own_action_records_the_submitter(alice):
    gang = make_gang("ml", "train", submitter="alice")
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")
    api(alice, "kill")
    assert GangEvent.objects.get(gang=gang, kind="killed").details["by"] == "alice"


def test_a_refused_action_records_nothing(vera):
    gang = make_gang("ml", "train", submitter="alice")
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")
    assert client_for(vera).post("/api/v1/gangs/ml/train/kill/").status_code == 403
    assert not GangEvent.objects.filter(gang=gang, kind__in=["killed", "retried"]).exists()


def test_admin_edits_are_logged_with_the_user(db):
    from django.contrib.auth.models import User

    root = User.objects.create_superuser("root", password="root-pass-123")
    node = Node.objects.create(name="n1", allocatable={"cpu": 4000})
    client = Client()
    client.force_login(root)
    client.post(f"/admin/scheduler_core/node/{node.pk}/delete/", {"post": "yes"})

    entry = LogEntry.objects.get()
    assert (entry.user, entry.action_flag, entry.object_repr) == (root, DELETION, "n1")
