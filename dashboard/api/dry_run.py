"""``?dryRun=All`` on ``POST /api/v1/gangs/`` and ``/api/v1/manifests/``, as the Kubernetes API
server takes it (https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run).

A dry run is the real submission in a transaction rolled back (scheduler_core/db/dry_run.py):
the same checks, the same refusals (a 400 naming the field, another's gang or queue the same
404 or "not found"), the same status and answer, plus ``"dryRun": true``, and nothing written,
sent, triggered or invalidated. Its throttle budget is its own (throttles.SubmitThrottle).
The views use this module by name: ``dry_run.requested(request)``, ``with dry_run.rolled_back():``,
``dry_run.answer(...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request

from scheduler_core.db.dry_run import SERVER_DRY_RUN, rolled_back
from scheduler_core.models import Gang
from scheduler_core.reads.forecasts import forecast_view
from scheduler_core.services.forecasts import forecast_for_dry_run

from .forecast_output import datetime_text, forecast_json
from .permissions import sees_all_gangs

__all__ = ["ALL", "PARAMETER", "answer", "requested", "rolled_back"]

#: The one value Kubernetes defines: every stage runs, none persists.
ALL = "All"

PARAMETER = OpenApiParameter(
    "dryRun",
    OpenApiTypes.STR,
    enum=[ALL],
    required=False,
    description=(
        "All: run every check and answer what would be created (the same status and body, with "
        '"dryRun": true), writing nothing. Any other value is a 400 naming dryRun.'
    ),
)


def requested(request: Request) -> bool:
    """Whether the request asks for a dry run; any value but ``All`` is a 400 naming ``dryRun``,
    before the body is read, as the API server refuses an unsupported option. Repeated, each
    value must be ``All`` (Kubernetes' ``dryRun`` is a list)."""
    values = request.query_params.getlist("dryRun")
    unsupported = next((value for value in values if value != ALL), None)
    if unsupported is not None:
        raise serializers.ValidationError(
            {"dryRun": f"unsupported dry run option {unsupported!r}: the only one is {ALL}"}
        )
    return bool(values)


def answer(body: dict[str, Any], *, gangs: Sequence[Gang], user=None) -> dict[str, Any]:
    """A dry run's answer, built here for both endpoints: the real one (``body``) with
    ``"dryRun": true``, and kubectl's ``(server dry run)`` after each of its ``lines`` (a
    manifest's), so a client printing them says so. Called inside the rolled-back transaction,
    while ``gangs`` (what would be created or changed) and their rows still exist: whatever is
    added here about them is read as a real submission would leave them.

    Each gang's ``forecast`` is when it would start if submitted now (``forecast_with`` on the
    snapshot built inside the transaction: services/forecasts.py ``forecast_for_dry_run``, with
    a bounded cost), as ``user`` may read it; when there is none, ``forecastNote`` says why."""
    marked = {**body, "dryRun": True}
    if "lines" in body:
        marked["lines"] = [f"{line} {SERVER_DRY_RUN}" for line in body["lines"]]
    forecasts = forecast_for_dry_run(gangs)
    objects = [marked] if "key" in marked else list(marked.get("gangs") or [])
    by_key = {gang.key: gang for gang in gangs}
    sees_all = bool(user is not None and user.is_authenticated and sees_all_gangs(user))
    for gang_json in objects:
        key = gang_json.get("key")
        found = forecasts.get(key, "it would not wait in a queue")
        if isinstance(found, str) or key not in by_key:
            gang_json["forecast"], gang_json["forecastNote"] = None, found
            continue
        view = forecast_view(by_key[key], found, sees_all=sees_all)
        gang_json["forecast"] = forecast_json(view, datetime_text)
    return marked
