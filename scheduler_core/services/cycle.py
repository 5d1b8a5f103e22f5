"""One scheduling cycle against the database and the cluster backend.

``cycle_run`` is the whole loop body: take the lease (or return: another worker is on it), make
sure the database reflects the cluster, finish what an earlier cycle left in the bind journal,
read a snapshot, run the engine, write its decisions (fenced), bind, and hand the lease back.
Each step is its own function so tests can drive one at a time.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from scheduler_core.cluster import ClusterBackend, get_backend
from scheduler_core.engine import Carry, CycleResult, EngineConfig, run_cycle, sweep_timeouts
from scheduler_core.engine.decisions import TransitionKind
from scheduler_core.engine.explain import members_text
from scheduler_core.engine.gc_pause import gc_paused
from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang, GangEventKind, Member, SchedulingCycle
from scheduler_core.services.history import events_record_many
from scheduler_core.services.journal import (
    JournalEntry,
    journal_execute,
    journal_recover,
    journal_write,
    member_ids_by_key,
)
from scheduler_core.services.lease import Lease, fenced, lease_held
from scheduler_core.services.lifecycle import gang_requeue
from scheduler_core.services.placeholders import placeholders_reconcile
from scheduler_core.services.queue_history import queue_samples_record
from scheduler_core.snapshot.build import build_snapshot

logger = logging.getLogger(__name__)

#: Koordinator marks the pods of a timed-out gang so that users and controllers can see why.
TIMEOUT_ANNOTATION = "gang.scheduling.koordinator.sh/timeout"

#: What this process's last cycle leaves to the next (engine/carry.py): with the snapshot's
#: reused objects (snapshot/reuse.py) the engine copies the unchanged pods' rows instead of
#: rebuilding them. Cycles never overlap in a process (the lease), and the carry checks every
#: object by identity, so a stale carry only costs a full build.
CARRY = Carry()


@dataclass
class CycleReport:
    ran: bool
    reason: str = ""
    epoch: int = 0
    pods_considered: int = 0
    pods_bound: int = 0
    units_parked: int = 0  # not tried: the requeue book's (engine/requeue.py)
    recovered: int = 0
    duration_s: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    #: What the cycle changed, by kind ("bound", "reserved", "evicted", "timed_out"...): only
    #: the kinds it did, so an idle cycle's is empty (the worker logs it at DEBUG only).
    changes: dict[str, int] = field(default_factory=dict)


def cycle_run(
    *, holder: str, backend: ClusterBackend | None = None, config: EngineConfig | None = None
) -> CycleReport:
    """Run one cycle if nobody else is; never two at once across all workers. The lease is
    renewed while the cycle runs, however long it takes."""
    with lease_held(holder=holder, ttl_s=settings.GANGSCHED_LEASE_TTL_S) as lease:
        if lease is None:
            return CycleReport(ran=False, reason="busy: another worker holds the scheduler lease")
        with gc_paused():
            return cycle_run_leased(lease=lease, backend=backend or get_backend(), config=config)


def cycle_run_leased(*, lease: Lease, backend: ClusterBackend, config: EngineConfig | None) -> CycleReport:
    started = time.perf_counter()
    started_at = timezone.now()
    if not backend.sync():
        return CycleReport(ran=False, reason="the cluster has not been fully read yet", epoch=lease.epoch)
    recovered = journal_recover(lease=lease, backend=backend)
    with fenced(lease):
        placeholders_reconcile(backend=backend)  # YuniKorn: replacements and the placeholder timeout
    with transaction.atomic():
        snapshot = build_snapshot()
    now = time.time()
    result = run_cycle(snapshot, now, config or engine_config(), CARRY)
    cycle, journal = decisions_record(
        lease=lease,
        result=result,
        started_at=started_at,
        started=started,
        backend=backend,
        worker=lease.holder,
    )
    if settings.GANGSCHED_FAULT_PAUSE_AFTER_JOURNAL_S:
        time.sleep(settings.GANGSCHED_FAULT_PAUSE_AFTER_JOURNAL_S)
    bound = journal_execute(lease=lease, backend=backend, rows=journal)
    evictions_apply(lease=lease, result=result, backend=backend, cycle=cycle)
    duration = time.perf_counter() - started
    SchedulingCycle.objects.filter(pk=cycle.pk).update(duration_s=duration, pods_bound=bound)
    return CycleReport(
        ran=True,
        epoch=lease.epoch,
        pods_considered=result.pods_considered,
        pods_bound=bound,
        units_parked=result.parked,
        recovered=recovered,
        duration_s=duration,
        timings=result.timings,
        changes=cycle_changes(result, bound=bound, recovered=recovered),
    )


def cycle_changes(result: CycleResult, *, bound: int, recovered: int) -> dict[str, int]:
    """How many of each change a cycle made; kinds it did not make are left out."""
    changes = {
        "bound": bound,
        "reserved": len(result.reservations),
        "released": len(result.releases),
        "evicted": len(result.evictions),
        "recovered": recovered,
    }
    for kind in (transition.kind.value for transition in result.transitions):
        changes[kind] = changes.get(kind, 0) + 1
    return {kind: count for kind, count in changes.items() if count}


def engine_config() -> EngineConfig:
    """gangsched's own policies, with the operator's settings (``gangsched/settings``)."""
    return EngineConfig(
        overtake_limit_s=settings.GANGSCHED_OVERTAKE_LIMIT_S,
        reclaim_delay_s=settings.GANGSCHED_RECLAIM_DELAY_S,
        preempt_depth=settings.GANGSCHED_PREEMPT_DEPTH,
        requeue_backoff_max_s=settings.GANGSCHED_REQUEUE_BACKOFF_MAX_S,
    )


def timeouts_sweep(*, holder: str, backend: ClusterBackend | None = None) -> int:
    """Time out gangs between cycles (the engine does it in every cycle too); returns how many."""
    with lease_held(holder=holder, ttl_s=settings.GANGSCHED_LEASE_TTL_S) as lease:
        if lease is None:
            return 0
        with fenced(lease):
            placeholders_reconcile(backend=backend or get_backend())  # YuniKorn's application timer
        with transaction.atomic():
            snapshot = build_snapshot()
        result = sweep_timeouts(snapshot, time.time(), engine_config())
        if result.transitions:
            decisions_record(
                lease=lease,
                result=result,
                started_at=timezone.now(),
                started=time.perf_counter(),
                backend=backend or get_backend(),
                worker=lease.holder,
            )
        return sum(1 for t in result.transitions if t.kind == TransitionKind.TIMED_OUT)


def decisions_record(
    *,
    lease: Lease,
    result: CycleResult,
    started_at,
    started: float,
    backend: ClusterBackend,
    worker: str,
) -> tuple[SchedulingCycle, list[JournalEntry]]:
    """Write what the engine decided, in one fenced transaction; return the journal to bind."""
    keys = {d.pod for d in (*result.binds, *result.reservations, *result.releases)}
    members = member_ids_by_key(keys)
    gang_keys = (
        {t.gang for t in result.transitions}
        | set(result.explanations)
        | {d.gang for d in (*result.binds, *result.reservations, *result.releases) if d.gang}
    )
    with fenced(lease):
        gangs = _gangs_by_key(gang_keys)
        cycle = SchedulingCycle.objects.create(
            started_at=started_at,
            duration_s=time.perf_counter() - started,
            pods_considered=result.pods_considered,
            units_parked=result.parked,
            epoch=lease.epoch,
            timings={name: round(value, 6) for name, value in result.timings.items()},
            worker=worker,
            pending_demand=result.pending_demand,
        )
        queue_samples_record(result.queues, cycle=cycle, at=started_at)
        events: list[dict] = []
        _reservations_write(result, members, gangs, cycle, events)
        binds = []
        for bind in result.binds:
            if bind.pod in members:
                gang = gangs.get(bind.gang)
                namespace, name = bind.pod.split("/", 1)
                binds.append((members[bind.pod], gang.pk if gang else None, bind.node, namespace, name))
        journal = journal_write(cycle_id=cycle.pk, epoch=lease.epoch, binds=binds)
        _transitions_write(result, gangs, cycle, events, backend)
        _explanations_write(result, gangs, cycle, events)
        events_record_many(events)
    # Logged once committed (a fenced write refused by a newer epoch changed nothing).
    for event in events:
        if event.get("transition") is not None:
            key = event["gang"].key
            logger.info(
                "gang %s %s: %s",
                key,
                event["transition"],
                event["reason"],
                extra={"gang": key, "event": event["transition"], "cycle": cycle.pk},
            )
    return cycle, journal


def evictions_apply(
    *, lease: Lease, result: CycleResult, backend: ClusterBackend, cycle: SchedulingCycle | None = None
) -> None:
    """Gangs preempted whole stop and go back to the queue; elastic members and lone victims are
    deleted. Each gang's history names the members taken and why (the engine's reason)."""
    if not result.evictions:
        return
    preempted = {t.gang: t.reason for t in result.transitions if t.kind == TransitionKind.PREEMPTED}
    # Reclaim: the victim's history names the queue the room went to.
    reclaimed = {e.gang: {"reclaimedBy": e.reclaimed_by} for e in result.evictions if e.reclaimed_by}
    taken: dict[tuple[str, str], list[str]] = defaultdict(list)
    for evict in result.evictions:
        if evict.gang is not None:
            taken[(evict.gang, evict.reason)].append(evict.pod)
    with fenced(lease):
        for gang in _gangs_by_key(set(preempted)).values():
            pods = [pod for (key, _reason), keys in taken.items() if key == gang.key for pod in keys]
            gang_requeue(
                gang=gang,
                reason=preempted[gang.key],
                backend=backend,
                kind=GangEventKind.PREEMPTED,
                details={"scope": "gang", "taken": pods, **reclaimed.get(gang.key, {})},
            )
        for evict in result.evictions:
            if evict.gang not in preempted:
                namespace, name = evict.pod.split("/", 1)
                backend.delete_pod(namespace, name, evict.reason)
                if evict.gang is None:  # no gang history records it: the log and the pod do
                    logger.info("pod %s evicted: %s", evict.pod, evict.reason, extra={"pod": evict.pod})
        shrunk = _gangs_by_key({key for key, _reason in taken if key not in preempted})
        events_record_many(
            {
                "gang": shrunk[key],
                "kind": GangEventKind.PREEMPTED,
                "reason": f"{reason} ({members_text(pods)})",
                "details": {"scope": "elastic", "taken": pods},
                "cycle": cycle,
            }
            for (key, reason), pods in taken.items()
            if key in shrunk
        )


def _gangs_by_key(keys: set[str]) -> dict[str, Gang]:
    if not keys:
        return {}
    namespaces = {key.split("/", 1)[0] for key in keys}
    names = {key.split("/", 1)[1] for key in keys}
    return {g.key: g for g in Gang.objects.filter(namespace__in=namespaces, name__in=names) if g.key in keys}


def _reservations_write(result, members, gangs, cycle, events) -> None:
    by_node: dict[str | None, list[int]] = defaultdict(list)
    counts: dict[tuple[str, str], list[str]] = defaultdict(list)
    for release in result.releases:
        if release.pod in members:
            by_node[None].append(members[release.pod])
            counts[(release.gang or "", release.reason)].append(release.pod)
    for reserve in result.reservations:
        if reserve.pod in members:
            by_node[reserve.node].append(members[reserve.pod])
    for node, ids in by_node.items():
        Member.objects.filter(pk__in=ids, node__isnull=True).update(reserved_node=node)
    reserved: dict[str, int] = defaultdict(int)
    for reserve in result.reservations:
        reserved[reserve.gang or ""] += 1
    for gang_key, count in reserved.items():
        if gang_key in gangs:
            reason = next(r.reason for r in result.reservations if r.gang == gang_key)
            events.append(
                {
                    "gang": gangs[gang_key],
                    "kind": GangEventKind.RESERVED,
                    "reason": f"{count} members: {reason}",
                    "cycle": cycle,
                }
            )
    for (gang_key, reason), pods in counts.items():
        if gang_key in gangs:
            events.append(
                {
                    "gang": gangs[gang_key],
                    "kind": GangEventKind.RELEASED,
                    "reason": f"{len(pods)} members: {reason}",
                    "cycle": cycle,
                }
            )


_DONE = (GangPhase.FINISHED.value, GangPhase.FAILED.value, GangPhase.KILLED.value)

_TRANSITION_EVENT = {
    TransitionKind.SATISFIED: GangEventKind.SATISFIED,
    TransitionKind.TIMED_OUT: GangEventKind.TIMED_OUT,
    TransitionKind.FELL_BACK: GangEventKind.FELL_BACK,
    TransitionKind.DEADLOCK_BROKEN: GangEventKind.RELEASED,
}


def _transitions_write(result, gangs, cycle, events, backend) -> None:
    now = timezone.now()
    # A gang's transitions are merged (later ones win, as successive UPDATEs would) and gangs
    # with the same final changes are written by one UPDATE: 200 gangs satisfied in one cycle
    # are two queries, not 200.
    changes: dict[int, dict] = {}
    for transition in result.transitions:
        gang = gangs.get(transition.gang)
        if gang is None:
            continue
        kind = transition.kind
        updates: dict = {}
        if kind == TransitionKind.WAIT_STARTED:
            updates = {"wait_started": now, "phase": "Scheduling"}
        elif kind == TransitionKind.SATISFIED:
            updates = {"satisfied": True, "phase": "Scheduling", "reason": "", "message": "", "details": {}}
            if gang.schedule_start_time is None:
                updates["schedule_start_time"] = now
        elif kind == TransitionKind.TIMED_OUT:
            updates = {"phase": "TimedOut"}
            for member in gang.members.filter(phase="Pending"):
                backend.annotate_pod(member.namespace, member.name, {TIMEOUT_ANNOTATION: "true"})
        elif kind == TransitionKind.FELL_BACK:
            updates = {"fallen_back": True}
        elif kind == TransitionKind.DEADLOCK_BROKEN:
            # Its reservations were released: it holds nothing, as a gang that never reserved.
            updates = {"wait_started": None, "phase": "Pending"}
        if updates:
            changes.setdefault(gang.pk, {}).update(updates)
            for name, value in updates.items():
                setattr(gang, name, value)
        if kind in _TRANSITION_EVENT:
            events.append(
                {
                    "gang": gang,
                    "kind": _TRANSITION_EVENT[kind],
                    "reason": transition.reason,
                    "cycle": cycle,
                    "transition": kind.value,
                }
            )
    groups: dict[str, tuple[dict, list[int]]] = {}
    for pk, updates in changes.items():
        groups.setdefault(repr(sorted(updates.items())), (updates, []))[1].append(pk)
    for updates, pks in groups.values():
        # A gang an operator killed (or that failed or finished) since the snapshot stays so:
        # the condition is re-checked on the row as it is when the UPDATE gets to it.
        Gang.objects.filter(pk__in=pks).exclude(phase__in=_DONE).update(**updates)


def _explanations_write(result, gangs, cycle, events) -> None:
    """Store each gang's latest explanation; history gets a row only when the reason changes.

    The stored details say when the explanation was computed (``explained_at``, the cycle's
    start): a gang the requeue book parked is absent from ``result.explanations`` and keeps what
    it was last told."""
    explained_at = cycle.started_at.isoformat()
    for key, explanation in result.explanations.items():
        gang = gangs.get(key)
        if gang is None:
            continue
        if (gang.reason, gang.message) == (explanation.reason.value, explanation.message):
            continue  # told the same again: the stored words and their time stand
        changed_reason = gang.reason != explanation.reason.value
        Gang.objects.filter(pk=gang.pk).update(
            reason=explanation.reason.value,
            message=explanation.message,
            details={**explanation.details, "explained_at": explained_at},
        )
        if changed_reason:
            events.append(
                {
                    "gang": gang,
                    "kind": GangEventKind.EXPLAINED,
                    "reason": f"{explanation.reason.value}: {explanation.message}",
                    "details": explanation.details,
                    "cycle": cycle,
                }
            )
