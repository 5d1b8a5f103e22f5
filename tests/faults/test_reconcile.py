"""The reconciliation sweep: drift made by hand is found, repaired and recorded in the history."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from scheduler_core import tasks
from scheduler_core.models import BindJournal, BindState, Gang, GangEvent, Member
from scheduler_core.services.lease import lease_acquire
from scheduler_core.services.reconcile import LeaseBusy, reconcile
from tests.loop.factories import make_gang, make_nodes

from .invariants import assert_invariants, violations

pytestmark = pytest.mark.django_db


def reconciled(gang: Gang) -> list[str]:
    return list(GangEvent.objects.filter(gang=gang, kind="reconciled").values_list("reason", flat=True))


def test_pending_binds_of_a_cycle_that_is_gone_are_finished():
    make_nodes(1)
    gang = make_gang("team/train", 2, cpu=1)
    Gang.objects.filter(pk=gang.pk).update(satisfied=True, phase="Scheduling")
    old = timezone.now() - timedelta(minutes=5)
    for member in gang.members.all():
        BindJournal.objects.create(epoch=1, gang=gang, member=member, node="n0", created=old)
    repairs = reconcile()
    assert [r.kind for r in repairs].count("journal") == 2
    assert not BindJournal.objects.filter(state=BindState.PENDING).exists()
    assert gang.members.filter(node="n0").count() == 2
    assert len([r for r in reconciled(gang) if r.startswith("journal")]) == 2
    assert_invariants(idle=True)


def test_reservations_on_missing_nodes_or_for_gangs_that_stopped_waiting_are_dropped():
    make_nodes(1)
    waiting = make_gang("team/waiting", 2, cpu=1, mode="NonStrict")
    timed_out = make_gang("team/late", 2, cpu=1, mode="NonStrict")
    Member.objects.filter(gang=waiting).update(reserved_node="ghost")
    Gang.objects.filter(pk=timed_out.pk).update(phase="TimedOut")
    Member.objects.filter(gang=timed_out).update(reserved_node="n0")
    assert len(violations()) == 4
    repairs = reconcile()
    assert sorted(r.kind for r in repairs) == ["reservation"] * 4
    assert not Member.objects.filter(reserved_node__isnull=False).exists()
    assert any("reservation on ghost dropped" in r for r in reconciled(waiting))
    assert_invariants()


def test_pods_on_a_node_that_is_gone_fail_and_their_gang_restarts():
    make_nodes(1)
    gang = make_gang("team/train", 2, cpu=1)
    Gang.objects.filter(pk=gang.pk).update(satisfied=True, phase="Running")
    Member.objects.filter(gang=gang).update(node="vanished", phase="Running")
    kinds = {r.kind for r in reconcile()}
    assert "lost-node" in kinds
    gang.refresh_from_db()
    assert gang.phase == "Pending" and not gang.satisfied
    assert not Member.objects.filter(gang=gang, node__isnull=False).exists()
    assert_invariants()


def test_a_partially_bound_gang_is_requeued_whole_and_counters_follow_the_pods():
    make_nodes(2)
    partial = make_gang("team/partial", 3, cpu=1)
    Gang.objects.filter(pk=partial.pk).update(satisfied=True, phase="Scheduling")
    Member.objects.filter(gang=partial, name="partial-0").update(node="n0")
    miscounted = make_gang("team/miscounted", 1, cpu=1)
    Member.objects.filter(gang=miscounted).update(node="n1", phase="Running")
    Gang.objects.filter(pk=miscounted.pk).update(satisfied=True, running=7)
    repairs = reconcile()
    assert {r.kind for r in repairs} == {"partial-gang", "status"}
    assert not Member.objects.filter(gang=partial, node__isnull=False).exists()
    miscounted.refresh_from_db()
    assert (miscounted.phase, miscounted.running) == ("Running", 1)
    assert any("running 7 -> 1" in r for r in reconciled(miscounted))
    assert_invariants()
    assert reconcile() == []  # nothing drifted since


def test_the_command_prints_the_repairs_and_the_task_counts_them():
    make_nodes(1)
    gang = make_gang("team/waiting", 1, cpu=1, mode="NonStrict")
    Member.objects.filter(gang=gang).update(reserved_node="ghost")
    out = StringIO()
    call_command("reconcile", stdout=out)
    assert "reservation   team/waiting-0: reservation on ghost dropped" in out.getvalue()
    assert out.getvalue().endswith("1 repair\n")
    assert tasks.reconcile_drift.apply().get() == 0


def test_nothing_is_repaired_while_a_cycle_holds_the_lease():
    assert lease_acquire(holder="a-cycle", ttl_s=60) is not None
    with pytest.raises(LeaseBusy):
        reconcile()
    with pytest.raises(CommandError, match="try again"):
        call_command("reconcile")
    assert tasks.reconcile_drift.apply().get() == 0
