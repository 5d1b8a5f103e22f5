"""A gang's stored forecast as the pages, the commands and the API say it, per viewer.

``forecast_view`` is the one place that decides what a viewer reads of a forecast:

- a forecast is shown only while forecasts are on (``GANGSCHED_FORECAST_INTERVAL_S`` > 0) and its
  gang still waits (Pending, or Scheduling and not satisfied): a gang that started between two
  runs shows none, though its row waits for the next run to go;
- its age, and whether it is *stale*: older than three intervals (the runs stopped, or fail);
- ``sees_all`` (operators and viewers: ``view_gang``) reads Kueue's positions and the engine's
  explanation as they are; anyone else (a submitter, who sees only their own gangs) reads the
  positions among their own pending gangs and the explanation with others' work redacted
  (``services/forecast_privacy.py`` made that text when the forecast was stored).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from scheduler_core.models import Gang, GangForecast
from scheduler_core.models.gangs import WAITING_PHASES

#: A forecast older than this many intervals is stale.
STALE_INTERVALS = 3
NO_FORECAST = "—"


def forecasts_on() -> bool:
    return settings.GANGSCHED_FORECAST_INTERVAL_S > 0


def stale_after(forecast: GangForecast) -> datetime:
    return forecast.made_at + timedelta(seconds=STALE_INTERVALS * settings.GANGSCHED_FORECAST_INTERVAL_S)


def is_stale(forecast: GangForecast, *, now: datetime) -> bool:
    return now > stale_after(forecast)


def waiting(gang) -> bool:
    return gang.phase in WAITING_PHASES and not gang.satisfied


def gang_id(gang) -> int:
    """A gang's id, of a model instance or of the API list's light rows (``id`` only)."""
    return gang.pk if hasattr(gang, "pk") else gang.id


#: The forecast's columns the readers use (all but the gang's key): what a gang list joins in.
FORECAST_COLUMNS = tuple(f.name for f in GangForecast._meta.concrete_fields if f.name != "gang")
#: ``loaded_forecast``'s answer when the gang was read without its forecast.
UNLOADED = object()


def loaded_forecast(gang):
    """The gang's forecast if its read joined it in (``select_related("forecast")``, or the API
    list's rows), None if it has none, else ``UNLOADED``: nothing is queried here."""
    if isinstance(gang, Gang):
        if not Gang.forecast.is_cached(gang):
            return UNLOADED
        try:
            return gang.forecast
        except GangForecast.DoesNotExist:
            return None
    return getattr(gang, "forecast", UNLOADED)


def forecasts_for(gangs) -> dict[int, GangForecast]:
    """The stored forecasts of ``gangs`` (model instances or the API's rows), by gang id: one query."""
    ids = [gang_id(gang) for gang in gangs]
    if not ids or not forecasts_on():
        return {}
    return {f.gang_id: f for f in GangForecast.objects.filter(gang_id__in=ids)}


def forecast_of(gang) -> GangForecast | None:
    """The gang's forecast: the one its read joined in, else one query."""
    loaded = loaded_forecast(gang)
    return forecasts_for([gang]).get(gang_id(gang)) if loaded is UNLOADED else loaded


# ---------------------------------------------------------------- words


def duration_text(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 20 min``, ``2 d 4 h``: whole units, rounded down."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        hours, minutes = divmod(s // 60, 60)
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    days, hours = divmod(s // 3600, 24)
    return f"{days} d" + (f" {hours} h" if hours else "")


def span_text(low: float, high: float | None) -> str:
    """``5–40 min``; ``50 s–2 min`` across units; ``5 min–?`` when the latest run never started it."""
    first = duration_text(low)
    if high is None:
        return f"{first}–?"
    last = duration_text(high)
    unit, last_unit = first.rsplit(" ", 1)[-1], last.rsplit(" ", 1)[-1]
    if unit == last_unit and first.count(" ") == 1 and last.count(" ") == 1:
        return f"{first.split(' ')[0]}–{last}"
    return f"{first}–{last}"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def start_text(forecast: GangForecast, *, now: datetime) -> str:
    """``in ~12 min (5–40 min)``, ``any moment now``, ``later than the forecast looks ahead``,
    ``no start foreseen`` (the note says why)."""
    if forecast.status == "expected" and forecast.start_p50 is not None:
        ahead = (forecast.start_p50 - now).total_seconds()
        if ahead < 1:
            return "any moment now"
        low = max(0.0, (forecast.start_p10 - now).total_seconds()) if forecast.start_p10 else 0.0
        high = None if forecast.start_p90 is None else max(0.0, (forecast.start_p90 - now).total_seconds())
        return f"in ~{duration_text(ahead)} ({span_text(low, high)})"
    if forecast.status == "later":
        return "later than the forecast looks ahead"
    return "no start foreseen"


def positions_text(forecast: GangForecast, *, sees_all: bool) -> str:
    if sees_all:
        text = f"{ordinal(forecast.position_in_queue + 1)} in queue {forecast.queue}"
        if forecast.position_in_local_queue != forecast.position_in_queue:
            text += f" ({ordinal(forecast.position_in_local_queue + 1)} in its namespace's local queue)"
        return text + f"; {ordinal(forecast.position_in_cluster + 1)} in the cluster"
    return (
        f"{ordinal(forecast.own_in_queue + 1)} of your pending gangs in queue {forecast.queue}; "
        f"{ordinal(forecast.own_in_cluster + 1)} of them in the cluster"
    )


def forecast_view(
    gang, forecast: GangForecast | None, *, sees_all: bool, now: datetime | None = None
) -> dict | None:
    """What a viewer reads of the gang's forecast; None: nothing to show (see the module)."""
    if forecast is None or not forecasts_on() or not waiting(gang):
        return None
    now = now or timezone.now()
    own = not sees_all
    age = max(0.0, (now - forecast.made_at).total_seconds())
    message = forecast.waiting_message_own if own else forecast.waiting_message
    return {
        "status": forecast.status,
        "note": forecast.note,
        "start_p10": forecast.start_p10,
        "start_p50": forecast.start_p50,
        "start_p90": forecast.start_p90,
        "made_at": forecast.made_at,
        "stale_after": stale_after(forecast),
        "stale": is_stale(forecast, now=now),
        "age_s": age,
        "age_text": duration_text(age),
        "text": start_text(forecast, now=now),
        "counts": "own" if own else "all",
        "queue": forecast.queue,
        "position_in_queue": forecast.own_in_queue if own else forecast.position_in_queue,
        "position_in_local_queue": forecast.own_in_local_queue if own else forecast.position_in_local_queue,
        "position_in_cluster": forecast.own_in_cluster if own else forecast.position_in_cluster,
        "positions_text": positions_text(forecast, sees_all=sees_all),
        "waiting_for": {"reason": forecast.waiting_reason, "message": message}
        if forecast.waiting_reason
        else None,
    }
