"""The ``forecast`` object of the API's gangs: the gang's stored forecast as the requester may
read it (``scheduler_core/reads/forecasts.py``: operators and viewers Kueue's positions and the
engine's explanation; a submitter the positions among their own pending gangs and the
explanation with others' work redacted). Null when there is none to show: forecasts are off,
the gang does not wait, or no run has forecast it yet.

Times are absolute, so a cached answer stays true: ``staleAfter`` says from when the forecast
is too old to trust (three forecast intervals after ``madeAt``), not whether it is now.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from scheduler_core.reads.forecasts import (
    UNLOADED,
    forecast_of,
    forecast_view,
    forecasts_for,
    gang_id,
    loaded_forecast,
)

from .permissions import sees_all_gangs
from .redacted import gangs_learn


class GangForecastWaitingFor(serializers.Serializer):
    reason = serializers.CharField(help_text="The engine's reason, as the gang's explanation gives it.")
    message = serializers.CharField(
        help_text="The engine's explanation; to a submitter, with other submitters' work redacted."
    )


class GangForecastOutput(serializers.Serializer):
    status = serializers.ChoiceField(
        ["expected", "later", "none"],
        help_text="expected: it starts within the horizon; later: not before the horizon; none: nothing "
        "in the forecast lets it start (note says why).",
    )
    note = serializers.CharField(help_text="Why, when status is not expected.")
    madeAt = serializers.DateTimeField(help_text="The time the forecast was made for.")  # noqa: N815
    staleAfter = serializers.DateTimeField(  # noqa: N815
        help_text="After this the forecast is stale (three forecast intervals old)."
    )
    startP10 = serializers.DateTimeField(allow_null=True, help_text="Earliest start over the runs.")  # noqa: N815
    startP50 = serializers.DateTimeField(allow_null=True, help_text="Expected start (median run).")  # noqa: N815
    startP90 = serializers.DateTimeField(  # noqa: N815
        allow_null=True, help_text="Latest start over the runs; null: one run never started it."
    )
    queue = serializers.CharField(help_text="The queue the positions count in (a LocalQueue's ClusterQueue).")
    positionsCount = serializers.ChoiceField(  # noqa: N815
        ["all", "own"],
        help_text="all: every pending unit ahead, as Kueue counts (operators, viewers); own: only the "
        "requester's own pending gangs ahead (submitters).",
    )
    positionInQueue = serializers.IntegerField(help_text="Ahead in its queue, from 0.")  # noqa: N815
    positionInLocalQueue = serializers.IntegerField(  # noqa: N815
        help_text="Ahead in its local queue (its namespace's), from 0."
    )
    positionInCluster = serializers.IntegerField(help_text="Ahead in the cluster, from 0.")  # noqa: N815
    waitingFor = GangForecastWaitingFor(allow_null=True)  # noqa: N815


def viewer_sees_all(context: dict) -> bool:
    """Whether the request's user reads every gang's figures; without a request, no."""
    request = context.get("request")
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated and sees_all_gangs(user))


def forecast_json(view: dict | None, as_text) -> dict | None:
    """``forecast_view``'s answer as the API writes it (``as_text``: the datetime writer)."""
    if view is None:
        return None
    return {
        "status": view["status"],
        "note": view["note"],
        "madeAt": as_text(view["made_at"]),
        "staleAfter": as_text(view["stale_after"]),
        "startP10": as_text(view["start_p10"]),
        "startP50": as_text(view["start_p50"]),
        "startP90": as_text(view["start_p90"]),
        "queue": view["queue"],
        "positionsCount": view["counts"],
        "positionInQueue": view["position_in_queue"],
        "positionInLocalQueue": view["position_in_local_queue"],
        "positionInCluster": view["position_in_cluster"],
        "waitingFor": view["waiting_for"],
    }


def forecast_for(serializer, gang, as_text) -> dict | None:
    """The gang's ``forecast`` object: the forecast its read joined in, else the one its list
    read for it (``ForecastList``), else one query."""
    stored = loaded_forecast(gang)
    if stored is UNLOADED:
        known = getattr(serializer, "_forecasts", None)
        stored = known.get(gang_id(gang)) if known is not None else forecast_of(gang)
    return forecast_json(forecast_view(gang, stored, sees_all=viewer_sees_all(serializer.context)), as_text)


class ForecastList(serializers.ListSerializer):
    """A list of gangs reads their forecasts in one query, before it writes them (and looks the
    keys their explanations name up in one go, ``redacted.py``)."""

    def to_representation(self, data):
        gangs = list(data.all() if hasattr(data, "all") else data)
        gangs_learn(self.context, gangs)  # and the keys their explanations name, in one go
        self.child._forecasts = forecasts_for([g for g in gangs if loaded_forecast(g) is UNLOADED])
        return super().to_representation(gangs)


@extend_schema_field(GangForecastOutput(allow_null=True))
class ForecastField(serializers.Field):
    """``GangOutput.forecast``: the whole gang in (``source="*"``), its forecast out."""

    def __init__(self, **kwargs):
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, gang):
        return forecast_for(self.parent, gang, datetime_text)


def datetime_text(value):
    return None if value is None else serializers.DateTimeField().to_representation(value)
