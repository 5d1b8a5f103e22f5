"""The admin's gang actions and edits in the authorization matrix. test_matrix.py asks every
admin route of every role (only staff pass the gate); here, past the gate, a staff viewer (vera
made staff: ``view_gang`` and nothing else) may look at a gang but neither kill it through the
bulk action nor change or delete it, and an operator may kill it."""

import pytest
from django.contrib.auth.models import User

from scheduler_core.models import Gang
from tests.cast import make_gang
from tests.security import matrix_tally
from tests.security.matrix_requests import browser_for
from tests.security.matrix_table import LOGIN, REDIRECT, REFUSED_REDIRECT, SECRET

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/scheduler_core/gang/"
REFUSED_KILL = f"ml/{SECRET}: you may kill only your own gangs without the kill_gang permission"
# role -> (what the kill action answers, the messages after it, whether the gang is killed)
KILL_SELECTED = {
    "anonymous": (LOGIN, None, False),
    "alice": (LOGIN, None, False),  # her own gang, but she is not staff
    "bob": (LOGIN, None, False),
    "vera": (LOGIN, None, False),
    "staff_viewer": (REFUSED_REDIRECT, [REFUSED_KILL], False),
    "olga": (REDIRECT, [f"ml/{SECRET}: killed"], True),
}


@pytest.fixture
def gang(db) -> Gang:
    gang = make_gang("ml", SECRET, submitter="alice")
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")
    return gang


@pytest.fixture
def staff_viewer(vera) -> User:
    """vera with admin access: she sees gangs in the admin but may not retry or kill them."""
    vera.is_staff = True
    vera.save()
    return vera


@pytest.mark.parametrize("role", KILL_SELECTED)
def test_the_admin_kill_action(request, gang, role):
    user = None if role == "anonymous" else request.getfixturevalue(role)
    outcome, messages, killed = KILL_SELECTED[role]
    cell = f"admin:scheduler_core_gang_changelist POST kill_selected {role}"
    matrix_tally.asked(cell, outcome)
    form = {"action": "kill_selected", "_selected_action": [gang.pk]}

    browser = browser_for(user)

    response = browser.post(CHANGELIST, form)

    gang.refresh_from_db()
    assert gang.phase == ("Killed" if killed else "TimedOut")
    assert response.status_code in outcome.statuses
    if outcome is LOGIN:
        assert response["Location"].startswith("/admin/login/?next=")
    else:
        assert response["Location"] == CHANGELIST
        assert [str(m) for m in browser.get(CHANGELIST).context["messages"]] == messages
    matrix_tally.answered(cell)


def test_a_staff_viewer_may_look_but_not_change_or_delete(staff_viewer, gang):
    browser = browser_for(staff_viewer)
    change = f"/admin/scheduler_core/gang/{gang.pk}/change/"
    assert browser.get(change).status_code == 200  # read-only view
    assert browser.post(change, {"priority": 999}).status_code == 403
    assert browser.post(f"/admin/scheduler_core/gang/{gang.pk}/delete/", {"post": "yes"}).status_code == 403
    gang.refresh_from_db()
    assert gang.priority != 999 and Gang.objects.filter(pk=gang.pk).exists()
