"""``GET /metrics``: the scheduler's figures in Prometheus' text format, read from PostgreSQL.

Why a collector that queries the database at scrape time rather than counters incremented in
code: cycles run in Celery workers, binds in whichever worker holds the lease, timeouts in the
sweep, and the web processes serve the scrape. In-process counters would each see a slice, reset
on every restart and disagree between web processes. The history tables (``SchedulingCycle``,
``BindJournal``, ``GangEvent``) are append-only, so counting their rows gives counters that
only grow, whichever process answers. A scrape costs six aggregate queries (and up to three
for the queues).

- ``gangsched_cycle_duration_seconds`` (histogram): every recorded cycle's duration;
- ``gangsched_last_cycle_timestamp_seconds``: when the last cycle started (alert when stale);
- ``gangsched_pods_bound_total``, ``gangsched_bind_failures_total`` (counters) and
  ``gangsched_binds_pending``: the bind journal by state;
- ``gangsched_gangs{phase}``: gangs in each phase (every phase, zeros included);
- ``gangsched_pending_gangs`` and ``gangsched_oldest_pending_gang_age_seconds``: gangs waiting
  to be placed (Pending or Scheduling) and how long the oldest has waited since it was created;
- ``gangsched_gang_timeouts_total`` (counter): ``timed_out`` events;
- ``gangsched_scheduler_lease_held{holder}`` and ``gangsched_scheduler_lease_epoch``: who holds
  the scheduler lease now (1, or 0 with an empty holder between cycles) and its fencing epoch;
- per queue: usage, guarantee, fair share, max, pending, borrowed, lent, open, and
  reclaim evictions (``dashboard/queue_metrics.py``, three more queries).

Access: ``GANGSCHED_METRICS_TOKEN`` (sent as ``Authorization: Bearer <token>``) or an address in
``GANGSCHED_METRICS_ALLOW`` (comma-separated addresses or networks; default loopback only), the
client's address as dashboard/client_address.py finds it (behind a trusted proxy, not the proxy's).
Anything else is a 403: the figures name workers, lease holders and the shape of the queue.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterator

from django.conf import settings
from django.db.models import Count, Func, IntegerField, Max, Min, Q, Sum
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from dashboard.client_address import client_address
from dashboard.queue_metrics import queue_families
from scheduler_core.engine.model import GangPhase
from scheduler_core.models import (
    BindIntent,
    BindJournal,
    Gang,
    GangEvent,
    GangEventKind,
    SchedulerLease,
    SchedulingCycle,
)
from scheduler_core.models.gangs import waiting_q
from scheduler_core.models.history import BindState, IntentState
from scheduler_core.services.lease import SCHEDULER

#: Upper bounds of the cycle histogram, in seconds: the engine's p99 target is 1 s.
CYCLE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
DEFAULT_ALLOW = "127.0.0.1,::1"


class SchedulerCollector:
    """Reads the figures above from the database on every ``collect()``."""

    def collect(self) -> Iterator:
        yield from self._cycles()
        yield from self._binds()
        yield from self._gangs()
        timeouts = GangEvent.objects.filter(kind=GangEventKind.TIMED_OUT).count()
        yield CounterMetricFamily(
            "gangsched_gang_timeouts", "Gangs that timed out (timed_out events).", value=timeouts
        )
        yield from self._lease()
        yield from queue_families()

    def _cycles(self) -> Iterator:
        buckets = {f"le{i}": Count("id", filter=Q(duration_s__lte=b)) for i, b in enumerate(CYCLE_BUCKETS)}
        row = SchedulingCycle.objects.aggregate(
            count=Count("id"), total=Sum("duration_s"), last=Max("started_at"), **buckets
        )
        last = row["last"]
        histogram = HistogramMetricFamily(
            "gangsched_cycle_duration_seconds", "Duration of each recorded scheduling cycle."
        )
        cumulative = [(str(b), row[f"le{i}"]) for i, b in enumerate(CYCLE_BUCKETS)]
        histogram.add_metric([], [*cumulative, ("+Inf", row["count"])], sum_value=row["total"] or 0.0)
        yield histogram
        yield GaugeMetricFamily(
            "gangsched_last_cycle_timestamp_seconds",
            "Start of the last recorded cycle (Unix time; 0 before the first).",
            value=last.timestamp() if last else 0.0,
        )

    def _binds(self) -> Iterator:
        by_state = dict(BindJournal.objects.order_by().values_list("state").annotate(n=Count("id")))
        yield CounterMetricFamily(
            "gangsched_pods_bound", "Pod binds the cluster confirmed.", value=by_state.get(BindState.BOUND, 0)
        )
        yield CounterMetricFamily(
            "gangsched_bind_failures", "Pod binds that failed.", value=by_state.get(BindState.FAILED, 0)
        )
        # A cycle journals its binds per gang (BindIntent) and writes each pod's row once the
        # cluster has answered: a pending bind is in a pending intent, or a pending row
        # written before intents existed.
        in_intents = BindIntent.objects.filter(state=IntentState.PENDING).aggregate(
            n=Sum(Func("member_ids", function="cardinality", output_field=IntegerField()))
        )["n"]
        yield GaugeMetricFamily(
            "gangsched_binds_pending",
            "Binds journaled and not yet confirmed.",
            value=by_state.get(BindState.PENDING, 0) + (in_intents or 0),
        )

    def _gangs(self) -> Iterator:
        counts = dict(Gang.objects.order_by().values_list("phase").annotate(n=Count("id")))
        gangs = GaugeMetricFamily("gangsched_gangs", "Gangs by phase.", labels=["phase"])
        for phase in GangPhase:
            gangs.add_metric([phase.value], counts.get(phase.value, 0))
        yield gangs
        waiting = Gang.objects.filter(waiting_q()).aggregate(n=Count("id"), oldest=Min("created"))
        yield GaugeMetricFamily(
            "gangsched_pending_gangs",
            "Gangs waiting to be placed (Pending, or Scheduling and not satisfied yet).",
            value=waiting["n"],
        )
        oldest = waiting["oldest"]
        yield GaugeMetricFamily(
            "gangsched_oldest_pending_gang_age_seconds",
            "Seconds since the oldest waiting gang was created (0 when none waits).",
            value=(timezone.now() - oldest).total_seconds() if oldest else 0.0,
        )

    def _lease(self) -> Iterator:
        lease = SchedulerLease.objects.filter(name=SCHEDULER).values("holder", "epoch", "expires_at").first()
        held = bool(lease and lease["holder"] and lease["expires_at"] > timezone.now())
        holder = GaugeMetricFamily(
            "gangsched_scheduler_lease_held",
            "1 while a worker holds the scheduler lease, labelled with the holder (host:pid).",
            labels=["holder"],
        )
        holder.add_metric([lease["holder"] if held else ""], 1 if held else 0)
        yield holder
        yield GaugeMetricFamily(
            "gangsched_scheduler_lease_epoch",
            "The lease's fencing epoch: it grows by one each time a worker takes it.",
            value=lease["epoch"] if lease else 0,
        )


_registry = CollectorRegistry(auto_describe=False)
_registry.register(SchedulerCollector())


def metrics_allowed(request: HttpRequest) -> bool:
    token = getattr(settings, "GANGSCHED_METRICS_TOKEN", "")
    sent = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return True
    allowed = getattr(settings, "GANGSCHED_METRICS_ALLOW", DEFAULT_ALLOW)
    try:
        address = ipaddress.ip_address(client_address(request))
    except ValueError:
        return False
    networks = (
        ipaddress.ip_network(item.strip(), strict=False) for item in allowed.split(",") if item.strip()
    )
    return any(address in network for network in networks)


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    if not metrics_allowed(request):
        return HttpResponse("metrics: forbidden\n", status=403, content_type="text/plain")
    return HttpResponse(generate_latest(_registry), content_type=CONTENT_TYPE_LATEST)
