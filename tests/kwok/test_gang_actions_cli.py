"""``manage.py retry`` and ``manage.py kill``: the Timed out page's buttons from a terminal,
through the same operator services (history events, refusals) as the API and the pages."""

import pytest
from django.core.management.base import CommandError

from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, GangEventKind, MemberPhase
from tests.cast import make_gang

from .conftest import manage

pytestmark = pytest.mark.django_db


def timed_out(name: str) -> Gang:
    gang = make_gang("ml", name, submitter="")
    Gang.objects.filter(pk=gang.pk).update(phase=GangPhase.TIMED_OUT.value, reason="TimedOut")
    return gang


def test_retry_sends_a_timed_out_gang_back_to_the_queue_naming_who():
    gang = timed_out("bert")
    assert manage("retry", "ml/bert", "--by", "olga") == "gang ml/bert retried: Pending\n"
    gang.refresh_from_db()
    assert gang.phase == GangPhase.PENDING.value and gang.reason == ""
    event = gang.events.get(kind=GangEventKind.RETRIED)
    assert event.reason == "retried by olga" and event.details["by"] == "olga"


def test_retry_of_a_gang_that_did_not_time_out_is_refused_and_changes_nothing():
    make_gang("ml", "running")
    refusal = "gang ml/running is Pending: only TimedOut or Failed gangs can be retried"
    with pytest.raises(CommandError, match=refusal):
        manage("retry", "ml/running")
    assert Gang.objects.get(name="running").phase == GangPhase.PENDING.value


def test_kill_fails_the_pods_and_a_second_kill_says_why():
    gang = timed_out("bert")
    assert manage("kill", "ml/bert", "--reason", "wrong image") == "gang ml/bert killed: Killed\n"
    assert set(gang.members.values_list("phase", flat=True)) == {MemberPhase.FAILED}
    assert gang.events.get(kind=GangEventKind.KILLED).reason == "killed by an operator: wrong image"
    with pytest.raises(CommandError, match="gang ml/bert is Killed: it cannot be killed"):
        manage("kill", "ml/bert")


def test_every_gang_is_acted_on_and_every_refusal_reported():
    timed_out("a")
    with pytest.raises(CommandError) as error:
        manage("retry", "ml/missing", "nonamespace", "ml/a")
    assert "gang 'ml/missing' not found" in str(error.value)
    assert "gang 'nonamespace' not found (give NAMESPACE/NAME)" in str(error.value)
    assert Gang.objects.get(name="a").phase == GangPhase.PENDING.value
