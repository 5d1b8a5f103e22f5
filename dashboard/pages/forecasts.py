"""Forecasts on the pages: the Gangs list's "Starts" column, the gang page's "When it will
start" card (and ``?live=forecast``, the card alone, which static/js/forecast.js reads when a
forecast run or the gang changed), the Queues page's next start per queue.

What a viewer reads is ``scheduler_core/reads/forecasts.py``'s ``forecast_view``: operators and
viewers Kueue's positions and the engine's explanation, a submitter (who sees only their own
gangs) the positions among their own pending gangs and the explanation with other submitters'
work redacted.
"""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.template.loader import render_to_string
from django.utils import timezone

from dashboard.api.permissions import sees_all_gangs
from scheduler_core.models import GangForecast
from scheduler_core.models.gangs import waiting_q
from scheduler_core.reads.forecasts import (
    STALE_INTERVALS,
    forecast_of,
    forecast_view,
    forecasts_on,
    start_text,
    waiting,
)

LIVE_FORECAST = "forecast"


def forecasts_for_rows(user, gangs) -> None:
    """Each listed gang's ``forecast_view`` as ``gang.fc`` (the rows joined their forecast in)."""
    sees_all, now = sees_all_gangs(user), timezone.now()
    for gang in gangs:
        gang.fc = forecast_view(gang, forecast_of(gang), sees_all=sees_all, now=now)


def forecast_context(user, gang) -> dict:
    """What the gang page's card shows."""
    return {
        "fc": forecast_view(gang, forecast_of(gang), sees_all=sees_all_gangs(user)),
        "fc_waiting": waiting(gang),
        "fc_on": forecasts_on(),
        "fc_interval_s": settings.GANGSCHED_FORECAST_INTERVAL_S,
        "fc_stale_s": STALE_INTERVALS * settings.GANGSCHED_FORECAST_INTERVAL_S,
    }


def wants_forecast(request) -> bool:
    return request.GET.get("live") == LIVE_FORECAST


def forecast_response(request, gang) -> JsonResponse:
    """The gang page's forecast card alone, as the page renders it."""
    html = render_to_string(
        "dashboard/_forecast.html", {"gang": gang, **forecast_context(request.user, gang)}, request=request
    )
    return JsonResponse({"html": html}, headers={"Cache-Control": "no-store"})


def next_starts(user, names: set[str], local: dict) -> dict[str, dict]:
    """Per queue name of ``names``: the earliest expected start among the waiting gangs ``user``
    sees in it (a submitter: their own), with its text; one query. ``local``: the Kueue
    LocalQueues, (namespace, name) -> the ClusterQueue a gang's queue name stands for."""
    if not names or not forecasts_on():
        return {}
    rows = GangForecast.objects.filter(waiting_q("gang__"), status="expected", start_p50__isnull=False)
    if not sees_all_gangs(user):
        rows = rows.filter(gang__submitter=user.get_username())
    now = timezone.now()
    best: dict[str, GangForecast] = {}
    # The earliest of each (namespace, queue name) only (PostgreSQL's DISTINCT ON): a row per
    # queue a namespace names, not one per waiting gang.
    earliest = rows.order_by("gang__namespace", "gang__queue", "start_p50", "gang_id").distinct(
        "gang__namespace", "gang__queue"
    )
    for forecast in earliest.select_related("gang").only(
        "gang__namespace", "gang__queue", "made_at", "status", "start_p10", "start_p50", "start_p90"
    ):
        gang = forecast.gang
        name = local.get((gang.namespace, gang.queue), gang.queue)
        if name in names and (name not in best or forecast.start_p50 < best[name].start_p50):
            best[name] = forecast
    return {
        name: {"at": forecast.start_p50, "text": start_text(forecast, now=now), "made_at": forecast.made_at}
        for name, forecast in best.items()
    }
