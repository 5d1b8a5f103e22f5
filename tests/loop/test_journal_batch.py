"""The bind journal in batches: one intent per gang before the binds, one row per pod after.

A cycle's journal is a fixed number of queries whatever the number of pods it binds, and a
crash anywhere between the intent and its settling still binds every pod exactly once.
"""

import time

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from scheduler_core.cluster import BindRequest
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.engine import run_cycle
from scheduler_core.models import BindIntent, BindJournal, BindState, Gang, IntentState, Member
from scheduler_core.services.cycle import cycle_run, decisions_record, engine_config
from scheduler_core.services.journal import journal_pending, journal_write
from scheduler_core.services.lease import lease_acquire, lease_release
from scheduler_core.services.lifecycle import gang_requeue
from scheduler_core.snapshot.build import build_snapshot

from .factories import make_gang, make_nodes

pytestmark = pytest.mark.django_db


def cycle_queries(namespace: str, gangs: int, size: int) -> list[str]:
    """The statements of one cycle that binds ``gangs`` gangs of ``size`` pods."""
    for index in range(gangs):
        make_gang(f"{namespace}/g{index}", size, cpu=1)
    with CaptureQueriesContext(connection) as queries:
        report = cycle_run(holder="test")
    assert report.pods_bound == gangs * size
    return [query["sql"] for query in queries.captured_queries]


def journal_statements(statements: list[str]) -> list[str]:
    return [sql.split()[0] for sql in statements if "bindjournal" in sql or "bindintent" in sql]


def test_a_cycles_queries_do_not_grow_with_the_pods_it_binds():
    make_nodes(80)
    cycle_run(holder="test")  # the lease's row, and nothing to bind
    small = cycle_queries("small", 3, 2)
    large = cycle_queries("large", 3, 24)
    assert len(large) == len(small)
    # The journal of either cycle: the pending check and the intents (one INSERT for all gangs),
    # the still-pending check, then every pod's row in one INSERT and the intents settled.
    assert journal_statements(large) == journal_statements(small)
    assert journal_statements(large).count("INSERT") == 2
    assert BindJournal.objects.filter(state=BindState.BOUND).count() == 78
    assert set(BindIntent.objects.values_list("state", flat=True)) == {IntentState.SETTLED}
    assert BindIntent.objects.count() == 6  # one per gang


def row_writes() -> dict[str, tuple[int, int]]:
    """Rows inserted and updated so far by this test's transaction, per journal table."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, n_tup_ins, n_tup_upd FROM pg_stat_xact_user_tables"
            " WHERE relname IN ('scheduler_core_bindjournal', 'scheduler_core_bindintent')"
        )
        return {name.rsplit("_", 1)[1]: (inserted, updated) for name, inserted, updated in cursor.fetchall()}


def test_a_bound_pod_costs_one_journal_row_written_once():
    make_nodes(40)
    make_gang("team/a", 24, cpu=1)
    make_gang("team/b", 8, cpu=1)
    before = row_writes()
    assert cycle_run(holder="test").pods_bound == 32
    after = row_writes()
    writes = {
        table: tuple(a - b for a, b in zip(after[table], before.get(table, (0, 0)), strict=True))
        for table in after
    }
    # bindjournal: 32 rows inserted in their final state, none updated (they were inserted
    # pending and updated once bound); bindintent: one row per gang, settled once.
    assert writes == {"bindjournal": (32, 0), "bindintent": (2, 2)}


def decide(holder: str):
    """A cycle up to its journal (decided and written down), without binding: the lease is
    returned as a worker that died would lose it."""
    lease = lease_acquire(holder=holder, ttl_s=60)
    with transaction.atomic():
        snapshot = build_snapshot()
    result = run_cycle(snapshot, time.time(), engine_config())
    _cycle, journal = decisions_record(
        lease=lease,
        result=result,
        started_at=timezone.now(),
        started=time.perf_counter(),
        backend=SimulatedCluster(),
        worker=holder,
    )
    lease_release(lease)
    return journal


def test_a_crash_in_the_middle_of_a_batch_still_binds_every_pod_exactly_once():
    make_nodes(2, cpu=8)
    gangs = [make_gang(f"team/g{index}", 4, cpu=1) for index in range(2)]
    journal = decide("dies")
    assert len(journal) == 8 and len(journal_pending()) == 8
    # Half the binds reached the cluster, then the worker died before writing anything down.
    SimulatedCluster(failure_rate=0.0).bind([BindRequest(e.namespace, e.name, e.node) for e in journal[:4]])
    assert Member.objects.filter(node__isnull=False).count() == 4
    assert not BindJournal.objects.exists()
    report = cycle_run(holder="survivor")
    assert report.recovered == 8
    for entry in journal:
        assert Member.objects.get(pk=entry.member_id).node == entry.node
    rows = BindJournal.objects.filter(state=BindState.BOUND)
    assert rows.count() == 8 and rows.values("member").distinct().count() == 8
    assert not journal_pending()
    assert all(Gang.objects.get(pk=gang.pk).satisfied for gang in gangs)
    cycle_run(holder="again")  # nothing left to recover, nothing written twice
    assert BindJournal.objects.count() == 8


def test_a_gang_requeued_while_its_intent_is_pending_is_not_bound_by_the_recovery():
    make_nodes(1, cpu=8)
    gang = make_gang("team/train", 2, cpu=1)
    decide("dies")
    gang_requeue(gang=Gang.objects.get(pk=gang.pk), reason="a member was deleted")
    intent = BindIntent.objects.get(gang=gang)
    assert intent.state == IntentState.ROLLED_BACK and "requeued" in intent.error
    assert not journal_pending()
    # The next cycle places the requeued gang afresh: each pod bound once, by that cycle.
    cycle_run(holder="survivor")
    assert BindJournal.objects.filter(state=BindState.BOUND).count() == 2
    assert BindJournal.objects.filter(state=BindState.BOUND).values("cycle").distinct().count() == 1


def test_a_second_pending_bind_for_a_pod_is_refused():
    make_nodes(1)
    gang = make_gang("team/train", 1, cpu=1)
    member = gang.members.get()
    bind = (member.pk, gang.pk, "n0", member.namespace, member.name)
    journal_write(cycle_id=None, epoch=1, binds=[bind])
    with pytest.raises(IntegrityError), transaction.atomic():
        journal_write(cycle_id=None, epoch=1, binds=[bind])
    with pytest.raises(IntegrityError), transaction.atomic():
        journal_write(cycle_id=None, epoch=1, binds=[bind, bind])


def test_a_pod_deleted_before_its_bind_is_settled_gets_no_row_and_breaks_nothing():
    make_nodes(1, cpu=8)
    make_gang("team/train", 2, cpu=1, min_member=1)
    journal = decide("dies")
    Member.objects.filter(pk=journal[0].member_id).delete()
    report = cycle_run(holder="survivor")
    assert report.recovered == 1  # the deleted pod's bind is gone with it
    assert BindJournal.objects.filter(state=BindState.BOUND).count() == 1
    assert not journal_pending()
