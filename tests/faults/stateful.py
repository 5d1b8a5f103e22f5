"""A hypothesis state machine over the service layer, on the real PostgreSQL.

Rules, in whatever order hypothesis picks: submit a gang, run a cycle (binds failing at 0, 30 or
100%), a kubelet tick (pods start and finish), a pod fails, a worker dies after journaling (or
inside its bind transaction) and its lease runs out, time passes so waiting gangs time out,
an operator retries or kills a gang, someone deletes a pod, a node is removed or added. After
every step (``@invariant``) the database must satisfy tests/faults/invariants.py, and no
reservation is released twice: the ``released`` history of a step never counts more pods than
the gang held reservations for before it.

Each example runs inside a savepoint that is rolled back, so examples never see each other's
rows. ``STATS`` counts what ran, for bench/stateful.py.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections import Counter
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, F
from django.utils import timezone
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.engine import run_cycle
from scheduler_core.models import Gang, GangEvent, Member, Node, SchedulerLease
from scheduler_core.services.cycle import cycle_run, decisions_record, engine_config, timeouts_sweep
from scheduler_core.services.delete import NotFound, pod_delete
from scheduler_core.services.journal import journal_execute, journal_recover
from scheduler_core.services.kubelet import kubelet_tick, pod_fail
from scheduler_core.services.lease import lease_acquire
from scheduler_core.services.nodes import node_add, node_remove
from scheduler_core.services.operator import GangActionError, gang_kill, gang_retry
from scheduler_core.snapshot.build import build_snapshot
from tests.loop.factories import GI

from .invariants import assert_invariants

STATS: Counter = Counter()
_RELEASED = re.compile(r"^(\d+) members:")


class WorkerDied(Exception):
    """The bind call of a worker that is SIGKILLed in the middle of it."""


class DyingCluster(SimulatedCluster):
    """Binds half the requests, then the process dies (its transaction is rolled back)."""

    def bind(self, requests):
        super().bind(requests[: len(requests) // 2])
        raise WorkerDied


class ServiceMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        self.clock = timezone.now()
        self.gangs = 0
        self.nodes = 0
        self.last_event = 0
        self.reserved: Counter = Counter()

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self._atomic.__exit__(None, None, None)

    @initialize(count=st.integers(1, 3))
    def cluster(self, count: int) -> None:
        for _ in range(count):
            self.add_node()

    # ------------------------------------------------------------ the world

    @rule()
    def add_node(self) -> None:
        self.nodes += 1
        node_add(name=f"n{self.nodes}", allocatable={"cpu": "4", "memory": "16Gi", "pods": "110"})
        STATS["add_node"] += 1

    @precondition(lambda self: Node.objects.count() > 1)
    @rule(data=st.data())
    def remove_node(self, data) -> None:
        names = list(Node.objects.order_by("name").values_list("name", flat=True))
        node_remove(name=data.draw(st.sampled_from(names)))
        STATS["remove_node"] += 1

    @rule(
        size=st.integers(1, 4),
        spare=st.integers(0, 2),
        cpu=st.sampled_from([500, 1000, 2000]),
        mode=st.sampled_from(["Strict", "NonStrict"]),
        wait=st.sampled_from([None, 60.0]),
        duration=st.sampled_from([None, 15.0, 40.0]),
        owned=st.booleans(),
    )
    def submit(self, size, spare, cpu, mode, wait, duration, owned) -> None:
        """A gang of a Job's pods (``owned``: recreated when deleted) or of bare Pods (not)."""
        self.gangs += 1
        name = f"g{self.gangs}"
        gang = Gang.objects.create(
            namespace="team", name=name, min_member=max(1, size - spare), mode=mode, wait_seconds=wait
        )
        Member.objects.bulk_create(
            Member(
                namespace="team",
                name=f"{name}-{i}",
                gang=gang,
                requests={"cpu": cpu, "memory": GI},
                duration_seconds=duration,
                owner=f"job.batch/{name}" if owned else "",
            )
            for i in range(size)
        )
        STATS["submit"] += 1

    @rule(rate=st.sampled_from([0.0, 0.0, 0.3, 1.0]), seed=st.integers(0, 2**16))
    def cycle(self, rate, seed) -> None:
        report = cycle_run(holder="machine", backend=SimulatedCluster(failure_rate=rate, seed=seed))
        STATS["cycle"] += 1
        STATS["cycle_ran"] += report.ran
        STATS["pods_bound"] += report.pods_bound

    @rule()
    def kubelet(self) -> None:
        self.clock += timedelta(seconds=10)
        kubelet_tick(now=self.clock)
        STATS["kubelet"] += 1

    @precondition(lambda self: Member.objects.filter(phase="Running").exists())
    @rule(data=st.data())
    def pod_fails(self, data) -> None:
        running = list(Member.objects.filter(phase="Running").order_by("id").values_list("name", flat=True))
        pod_fail("team", data.draw(st.sampled_from(running)), "exit code 1", now=self.clock)
        STATS["pod_fails"] += 1

    # ------------------------------------------------------------ faults

    @rule(mid_bind=st.booleans())
    def worker_dies(self, mid_bind) -> None:
        """A cycle recovers the journal, journals its own binds and is killed, before or inside
        its bind; then its lease runs out, as it would after a SIGKILL."""
        lease = lease_acquire(holder="doomed", ttl_s=30)
        if lease is None:
            return
        backend = DyingCluster(failure_rate=0.0) if mid_bind else SimulatedCluster(failure_rate=0.0)
        journal_recover(lease=lease, backend=SimulatedCluster(failure_rate=0.0))
        with transaction.atomic():
            snapshot = build_snapshot()
        result = run_cycle(snapshot, time.time(), engine_config())
        _, journal = decisions_record(
            lease=lease,
            result=result,
            started_at=timezone.now(),
            started=time.perf_counter(),
            backend=backend,
            worker=lease.holder,
        )
        if mid_bind and journal:
            with contextlib.suppress(WorkerDied):
                journal_execute(lease=lease, backend=backend, rows=journal)
        expired = timezone.now() - timedelta(seconds=1)
        SchedulerLease.objects.filter(name=lease.name).update(expires_at=expired)
        STATS["worker_dies_mid_bind" if mid_bind else "worker_dies"] += 1

    @rule()
    def time_passes(self) -> None:
        """Waiting gangs' clocks run out; the sweep times them out (Hard) or they fall back."""
        Gang.objects.filter(wait_started__isnull=False).update(
            wait_started=F("wait_started") - timedelta(hours=1)
        )
        timeouts_sweep(holder="sweep", backend=SimulatedCluster(failure_rate=0.0))
        STATS["time_passes"] += 1

    @precondition(lambda self: self.gangs > 0)
    @rule(data=st.data(), kill=st.booleans())
    def operator(self, data, kill) -> None:
        gang = Gang.objects.get(namespace="team", name=f"g{data.draw(st.integers(1, self.gangs))}")
        try:
            (gang_kill if kill else gang_retry)(gang=gang, by="machine")
            STATS["kill" if kill else "retry"] += 1
        except GangActionError:
            STATS["refused"] += 1

    @precondition(lambda self: Member.objects.exists())
    @rule(data=st.data())
    def delete_pod(self, data) -> None:
        names = list(Member.objects.order_by("id").values_list("name", flat=True))
        try:
            pod_delete(namespace="team", name=data.draw(st.sampled_from(names)), by="someone else")
            STATS["delete_pod"] += 1
        except NotFound:
            pass

    # ------------------------------------------------------------ after every step

    @invariant()
    def invariants_hold(self) -> None:
        assert_invariants()
        STATS["steps"] += 1
        for event in GangEvent.objects.filter(pk__gt=self.last_event, kind="released").order_by("id"):
            match = _RELEASED.match(event.reason)
            if match:
                assert int(match[1]) <= self.reserved[event.gang_id], (
                    f"{event.gang_id}: released {match[1]} reservations, held {self.reserved[event.gang_id]}"
                )
        self.last_event = GangEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
        self.reserved = Counter(
            dict(
                Member.objects.filter(reserved_node__isnull=False, gang__isnull=False)
                .values_list("gang_id")
                .annotate(n=Count("id"))
                .values_list("gang_id", "n")
            )
        )
