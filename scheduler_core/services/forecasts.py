"""Forecasts of every pending gang, made from the database and stored (``GangForecast``).

``forecasts_run`` is the Celery task's body (``tasks.forecast_gangs``, every
``GANGSCHED_FORECAST_INTERVAL_S``). It never delays a scheduling cycle:

- it takes neither the scheduler lease nor the snapshot caches' lock the cycle builds under
  (``snapshot/reuse.py``): its snapshot is built with caches of its own;
- it reads in one REPEATABLE READ, READ ONLY transaction (plain reads take no row lock), and
  runs the forecast after that transaction has ended, holding nothing;
- it writes in a transaction of its own that touches the forecast table only. The table's key
  to the gang is no database constraint, so inserting a forecast takes no lock on the gang
  row (a foreign key's check would, and ``SELECT ... FOR UPDATE`` of that gang would wait), and a
  gang's deletion never waits for a forecast row: the forecast of a gang gone is dropped by the
  next run, and readers join it through the gang, so it is never shown.

``forecast_for_dry_run`` answers "when would it start" inside a dry run's transaction, where
the would-be gangs exist (``dashboard/api/dry_run.py``, ``manage.py apply --dry-run=server``).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q

from scheduler_core.engine.model import Snapshot
from scheduler_core.forecast import Arrivals, Forecasts, forecast_with
from scheduler_core.models import Gang, GangForecast, Member
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES
from scheduler_core.services.cycle import engine_config
from scheduler_core.services.forecast_arrivals import recent_arrivals
from scheduler_core.services.forecast_privacy import message_for_owner, own_positions
from scheduler_core.snapshot.build import DONE_PHASES, build_snapshot
from scheduler_core.snapshot.json_fields import from_epoch
from scheduler_core.snapshot.reuse import SnapshotReuse

logger = logging.getLogger(__name__)

#: The forecasts' own snapshot caches (one per process): never the cycle's ``REUSE``.
FORECAST_REUSE = SnapshotReuse()

#: The columns a run replaces; two forecasts equal in these say the same.
SHOWN = (
    *("status", "note", "start_p10", "start_p50", "start_p90", "queue"),
    *("position_in_queue", "position_in_local_queue", "position_in_cluster"),
    *("own_in_queue", "own_in_local_queue", "own_in_cluster"),
    *("waiting_reason", "waiting_message", "waiting_message_own"),
)

#: A dry run's forecast is bounded: a cluster past this many pods is not forecast in a request.
DRY_RUN_MAX_PODS = 20_000
#: ... nor is a forward run longer than this many cycles (the status says "later").
DRY_RUN_MAX_CYCLES = 500


@dataclass
class GangFacts:
    """What the snapshot does not carry: per gang key its row id, submitter, runtime source and
    declared queue name; per pod key of a pod alone, its submitter."""

    ids: dict[str, int] = field(default_factory=dict)
    submitters: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    declared_queues: dict[str, str] = field(default_factory=dict)
    lone_pods: dict[str, str] = field(default_factory=dict)
    arrivals: Arrivals | None = None  # the recent submissions (forecast_arrivals.py)


@dataclass
class ForecastRun:
    made_at: float
    gangs: int = 0
    #: (gang id, key, submitter) of each gang whose forecast is new or says something new.
    changed: list[tuple[int, str, str]] = field(default_factory=list)
    duration_s: float = 0.0


def gang_facts() -> GangFacts:
    """Two queries: the gangs the snapshot holds (not done, or done with live pods) and the pods
    scheduled alone."""
    facts = GangFacts()
    live = Exists(Member.objects.filter(gang=OuterRef("pk"), phase__in=ACTIVE_MEMBER_PHASES))
    rows = (
        Gang.objects.filter(~Q(phase__in=DONE_PHASES) | Q(live))
        .exclude(provisional=True)
        .values_list("pk", "namespace", "name", "submitter", "runtime_source", "queue")
    )
    for pk, namespace, name, submitter, source, queue in rows:
        key = f"{namespace}/{name}"
        facts.ids[key], facts.submitters[key], facts.declared_queues[key] = pk, submitter, queue
        if source:
            facts.sources[key] = source
    lone = Member.objects.filter(gang__isnull=True, phase__in=ACTIVE_MEMBER_PHASES)
    for namespace, name, submitter in lone.values_list("namespace", "name", "submitter"):
        facts.lone_pods[f"{namespace}/{name}"] = submitter
    return facts


def snapshot_read(now: float, leave_out: Collection[str] = ()) -> tuple[Snapshot, GangFacts]:
    """The snapshot and the facts, both of one moment: one REPEATABLE READ, READ ONLY
    transaction when this is the outermost one (inside another, e.g. a dry run's, that one's).
    ``leave_out``: gangs that are not submissions the arrival model may repeat."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        snapshot = build_snapshot(now, reuse=FORECAST_REUSE)
        facts = gang_facts()
        facts.arrivals = recent_arrivals(now, leave_out)
    return snapshot, facts


def owners_of(snapshot: Snapshot, facts: GangFacts) -> dict[str, str | None]:
    """Gang and pod key -> its submitter (a gang's pods are its submitter's); a queue's path
    (``ml/nlp``, which queue explanations name) -> None, no one's work (``reads/redaction.py``)."""
    parents = {queue.name: queue.parent for queue in snapshot.queues}
    owners: dict[str, str | None] = {f"{parent}/{name}": None for name, parent in parents.items() if parent}
    owners.update(facts.submitters)
    for pod in snapshot.pods:
        if pod.gang is not None and pod.gang in facts.submitters:
            owners[pod.key] = facts.submitters[pod.gang]
    owners.update(facts.lone_pods)
    return owners


def forecast_rows(result: Forecasts, snapshot: Snapshot, facts: GangFacts) -> list[GangForecast]:
    """The forecast table's rows for ``result`` (gangs without a row id are left out)."""
    owners = owners_of(snapshot, facts)
    gangs = [f for key, f in result.gangs.items() if key in facts.ids]
    local = {f.gang: (f.gang.split("/", 1)[0], facts.declared_queues.get(f.gang, f.queue)) for f in gangs}
    own = own_positions(
        (
            f.gang,
            facts.submitters[f.gang],
            f.queue,
            local[f.gang],
            f.position_in_queue,
            f.position_in_local_queue,
            f.position_in_cluster,
        )
        for f in gangs
    )
    made_at = from_epoch(result.made_at)
    endless = any(pod.duration is None and (pod.node or pod.reserved_node) for pod in snapshot.pods)
    rows = []
    for f in gangs:
        waiting = f.waiting_for
        reason, message = (waiting.reason, waiting.message) if waiting else ("", "")
        rows.append(
            GangForecast(
                gang_id=facts.ids[f.gang],
                made_at=made_at,
                status=f.status,
                note=note_checked(f.note, endless),
                start_p10=_when(f.start_p10),
                start_p50=_when(f.start_p50),
                start_p90=_when(f.start_p90),
                queue=f.queue,
                position_in_queue=f.position_in_queue,
                position_in_local_queue=f.position_in_local_queue,
                position_in_cluster=f.position_in_cluster,
                own_in_queue=own[f.gang][0],
                own_in_local_queue=own[f.gang][1],
                own_in_cluster=own[f.gang][2],
                waiting_reason=reason,
                waiting_message=message,
                waiting_message_own=message_for_owner(reason, message, facts.submitters[f.gang], owners),
            )
        )
    return rows


#: How ``forecast`` words a forward run that ran out of ends (``make.py``).
NO_MORE_ENDS = "it waits for room that pods without a runtime estimate hold"


def note_checked(note: str, endless: bool) -> str:
    """A forward run stops when no pod is left to end; ``forecast`` then says the gang waits for
    pods without an estimate, which is true only when some hold room. Otherwise nothing that
    ends would ever make room for it: it does not fit the cluster as it is."""
    if note.startswith(NO_MORE_ENDS) and not endless:
        return "no room for it frees up as the work forecast ends: it does not fit the cluster as it is"
    return note


def _when(epoch: float | None):
    return None if epoch is None else from_epoch(round(epoch, 3))


def forecasts_compute(now: float | None = None) -> tuple[list[GangForecast], GangFacts]:
    """Read, then forecast with nothing held: the rows a run would store."""
    now = time.time() if now is None else now
    snapshot, facts = snapshot_read(now)
    options = {"sources": facts.sources, "local_queues": facts.declared_queues, "arrivals": facts.arrivals}
    result = forecast_with(snapshot, now, engine_config(), **options)
    return forecast_rows(result, snapshot, facts), facts


def forecasts_run(*, now: float | None = None) -> ForecastRun:
    """One run: every pending gang's forecast stored, every other forecast dropped."""
    started = time.perf_counter()
    rows, facts = forecasts_compute(now)
    run = ForecastRun(made_at=time.time() if now is None else now, gangs=len(rows))
    keys = {pk: key for key, pk in facts.ids.items()}
    with transaction.atomic():
        before = {
            values[0]: values[1:]
            for values in GangForecast.objects.filter(gang_id__in=[row.gang_id for row in rows]).values_list(
                "gang_id", *SHOWN
            )
        }
        GangForecast.objects.exclude(gang_id__in=[row.gang_id for row in rows]).delete()
        GangForecast.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["gang"], update_fields=["made_at", *SHOWN]
        )
    for row in rows:
        if before.get(row.gang_id) != tuple(getattr(row, name) for name in SHOWN):
            key = keys[row.gang_id]
            run.changed.append((row.gang_id, key, facts.submitters[key]))
    run.duration_s = time.perf_counter() - started
    return run


def forecasts_enabled() -> bool:
    return settings.GANGSCHED_FORECAST_INTERVAL_S > 0


def forecast_for_dry_run(gangs: Sequence[Gang]) -> dict[str, GangForecast | str]:
    """Inside a dry run's transaction, where ``gangs`` exist as a submission would leave them:
    gang key -> its forecast (a ``GangForecast`` not saved), or the reason there is none. The
    would-be gangs and their pods are taken out of the snapshot and given back to
    ``forecast_with`` as the submission "if I submitted this now"."""
    keys = {gang.key for gang in gangs}
    if not keys:
        return {}
    if not forecasts_enabled():
        return dict.fromkeys(keys, "forecasts are off (GANGSCHED_FORECAST_INTERVAL_S is 0)")
    now = time.time()
    snapshot, facts = snapshot_read(now, keys)
    if len(snapshot.pods) > DRY_RUN_MAX_PODS:
        return dict.fromkeys(keys, f"the cluster has over {DRY_RUN_MAX_PODS} pods: too many to forecast here")
    extra_gangs = [gang for gang in snapshot.gangs if gang.key in keys]
    extra_pods = [pod for pod in snapshot.pods if pod.gang in keys]
    rest = dataclasses.replace(
        snapshot,
        gangs=tuple(gang for gang in snapshot.gangs if gang.key not in keys),
        pods=tuple(pod for pod in snapshot.pods if pod.gang not in keys),
    )
    try:
        result = forecast_with(
            rest,
            now,
            engine_config(),
            gangs=extra_gangs,
            pods=extra_pods,
            sources=facts.sources,
            local_queues=facts.declared_queues,
            arrivals=facts.arrivals,
            max_cycles=DRY_RUN_MAX_CYCLES,
        )
    except Exception:  # an answer without a forecast, never a failed submission
        logger.warning("dry run: the forecast of %s failed", ", ".join(sorted(keys)), exc_info=True)
        return dict.fromkeys(keys, "the forecast failed (the scheduler's log says why)")
    by_id = {pk: key for key, pk in facts.ids.items()}
    rows = {by_id[row.gang_id]: row for row in forecast_rows(result, snapshot, facts)}
    return {key: rows.get(key, "it would not wait in a queue: it has no pod to place yet") for key in keys}
