"""The one timeout rule, as the engine follows it and the page, ``describe gang`` and the reader
say it: the clock starts when a member can first be placed, and a gang none of whose members
can be placed waits without one (its explanation says why), as coscheduling's and Koordinator's
Permit waits do."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from scheduler_core.models import Gang, Member
from scheduler_core.reads.timeouts import gang_timeout
from scheduler_core.services.cycle import cycle_run, timeouts_sweep
from tests.loop.factories import make_gang, make_nodes

pytestmark = pytest.mark.django_db


def state(gang: Gang, now=None) -> str:
    gang.refresh_from_db()
    return gang_timeout(gang, now or timezone.now()).state


def test_the_clock_starts_at_the_first_reservation_and_the_gang_times_out_at_its_deadline():
    make_nodes(2, cpu=2)
    Member.objects.create(namespace="x", name="busy", requests={"cpu": 2000}, node="n1", phase="Running")
    gang = make_gang("team/train", 3, cpu=1, mode="NonStrict", wait_seconds=30)
    assert state(gang) == "not_started"
    cycle_run(holder="test")  # reserves 2 of 3 on n0: the clock starts
    gang.refresh_from_db()
    twelve_s_in = gang.wait_started + timedelta(seconds=12)
    reading = gang_timeout(gang, twelve_s_in)
    assert (reading.state, reading.deadline) == ("counting", gang.wait_started + timedelta(seconds=30))
    assert reading.text(twelve_s_in).startswith("Hard after 30 s: times out in 18 s")
    assert gang_timeout(gang, gang.wait_started + timedelta(seconds=31)).state == "overdue"
    Gang.objects.filter(pk=gang.pk).update(wait_started=timezone.now() - timedelta(seconds=31))
    assert timeouts_sweep(holder="test") == 1
    assert state(gang) == "timed_out"


def test_a_gang_no_member_of_which_can_be_placed_waits_without_a_clock():
    """Strict, Hard after 60 s, on a cluster whose nodes its selector excludes: it holds nothing,
    so an hour later it is still Pending, and says that no clock runs."""
    make_nodes(2, cpu=8)
    hour_ago = timezone.now() - timedelta(hours=1)
    gang = make_gang("research/train", 2, cpu=1, wait_seconds=60, created=hour_ago)
    Member.objects.filter(gang=gang).update(node_selector={"pool": "gpu"})
    cycle_run(holder="test")
    timeouts_sweep(holder="test")
    gang.refresh_from_db()
    assert (gang.phase, gang.wait_started) == ("Pending", None)
    assert state(gang) == "not_started"


def test_a_satisfied_gang_is_past_its_timeout_and_one_without_a_timeout_says_so(capsys):
    make_nodes(1, cpu=4)
    placed = make_gang("team/fits", 2, cpu=1, wait_seconds=30)
    forever = make_gang("team/forever", 1, cpu=1)
    cycle_run(holder="test")
    assert state(placed) == "met"
    assert state(forever) == "none"
    call_command("describe", "gang", "team/fits")
    assert "Timeout:        Hard after 30 s: no longer applies (satisfied)" in capsys.readouterr().out
    call_command("describe", "gang", "team/forever")
    assert "Timeout:        none: it waits for room as long as it takes" in capsys.readouterr().out


def test_the_gang_page_states_the_rule_and_the_deadline(client, olga):
    make_nodes(1, cpu=2)
    gang = make_gang("team/big", 3, cpu=1, mode="NonStrict", wait_seconds=45)
    client.force_login(olga)
    page = client.get("/gangs/team/big/").content.decode()
    assert 'data-state="not_started"' in page and "no clock yet" in page
    cycle_run(holder="test")
    gang.refresh_from_db()
    page = client.get("/gangs/team/big/").content.decode()
    assert 'data-state="counting"' in page and 'data-rule="Hard after 45 s"' in page
    assert f'data-deadline="{(gang.wait_started + timedelta(seconds=45)).isoformat()}"' in page


def test_the_api_says_where_a_gang_stands_against_its_timeout(client, olga):
    make_nodes(1, cpu=2)
    gang = make_gang("team/big", 3, cpu=1, mode="NonStrict", wait_seconds=45)
    client.force_login(olga)
    answer = client.get("/api/v1/gangs/team/big/").json()["timeout"]
    assert answer == {
        "state": "not_started",
        "waitSeconds": 45.0,
        "style": "Hard",
        "clockStarted": None,
        "deadline": None,
    }
    cycle_run(holder="test")
    gang.refresh_from_db()
    answer = client.get("/api/v1/gangs/team/big/").json()["timeout"]
    assert answer["state"] == "counting"
    deadline = gang.wait_started + timedelta(seconds=45)
    assert answer["deadline"] == deadline.isoformat().replace("+00:00", "Z")


def test_a_gang_whose_reservations_a_broken_deadlock_released_is_pending_again():
    """Two NonStrict gangs each hold part of what the other needs (the coscheduling article's
    JobA/JobB, tests/engine/test_deadlock.py): the younger gives way. Its 3-CPU members fit
    nowhere once the older has completed, so it holds nothing, and it is Pending again with no
    clock, as a gang that never reserved (not 'Scheduling' with nothing bound)."""
    make_nodes(2, cpu=4)
    now = timezone.now()
    holding = {"mode": "NonStrict", "wait_seconds": 300, "phase": "Scheduling", "wait_started": now}
    older = make_gang("team/a", 6, cpu=1, created=now - timedelta(minutes=2), **holding)
    younger = make_gang("team/b", 2, cpu=3, created=now - timedelta(minutes=1), **holding)
    for member in Member.objects.filter(gang=older).order_by("name")[:4]:
        Member.objects.filter(pk=member.pk).update(reserved_node="n0")
    Member.objects.filter(gang=younger, name="b-0").update(reserved_node="n1")
    cycle_run(holder="test")
    older.refresh_from_db()
    younger.refresh_from_db()
    assert Member.objects.filter(gang=older, node__isnull=False).count() == 6
    assert Member.objects.filter(gang=younger).exclude(node=None, reserved_node=None).count() == 0
    assert (younger.phase, younger.wait_started) == ("Pending", None)
    assert state(younger) == "not_started"
