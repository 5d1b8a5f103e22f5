"""Serializers of the API: the strict inputs of a gang submission (pods, tasks) and the outputs
of gangs and events. The fields they are made of, with their limits, are ``fields.py``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone
from rest_framework import ISO_8601, serializers
from rest_framework.settings import api_settings

from scheduler_core.models import Gang
from scheduler_core.reads.forecasts import FORECAST_COLUMNS
from scheduler_core.reads.selectors import gang_state

from .fields import (
    MAX_ANNOTATION_VALUE,
    MAX_DURATION_SECONDS,
    PRIORITY_MAX,
    PRIORITY_MIN,
    AffinityField,
    LabelNameField,
    ResourceMapField,
    StrictBooleanField,
    StrictIntegerField,
    StrictNumberField,
    StringMapField,
    SubdomainNameField,
    TolerationsField,
)
from .forecast_output import ForecastField, ForecastList, forecast_for
from .redacted import EventList, GroupKeyField, MessageField, context_viewer, event_redacted, group_key

# ---------------------------------------------------------------- inputs
# Field names are the JSON names, in Kubernetes' camelCase (nodeSelector, minMember).


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not know: ``minMembers`` is a typo the submitter wants to hear about."""

    def to_internal_value(self, data: Any) -> dict:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({key: ["unknown field"] for key in unknown})
        return super().to_internal_value(data)


class PodTemplateInput(StrictSerializer):
    requests = ResourceMapField(required=False)
    priority = StrictIntegerField(required=False, min_value=PRIORITY_MIN, max_value=PRIORITY_MAX)
    preemptible = StrictBooleanField(required=False)
    nodeSelector = StringMapField(required=False)
    tolerations = TolerationsField(required=False)
    affinity = AffinityField(required=False)
    durationSeconds = StrictNumberField(required=False, min_value=0, max_value=MAX_DURATION_SECONDS)
    labels = StringMapField(required=False)
    annotations = StringMapField(required=False, max_value_length=MAX_ANNOTATION_VALUE)


class PodInput(PodTemplateInput):
    name = SubdomainNameField()


class TaskInput(StrictSerializer):
    name = LabelNameField()
    replicas = StrictIntegerField(min_value=1)
    template = PodTemplateInput(required=False)


# ---------------------------------------------------------------- outputs


class GangOutput(serializers.Serializer):
    class Meta:
        list_serializer_class = ForecastList  # a list reads its gangs' forecasts in one query

    key = serializers.CharField()
    namespace = serializers.CharField()
    name = serializers.CharField()
    phase = serializers.CharField()
    state = serializers.SerializerMethodField(
        help_text="The phase, or Provisional while its declaration is missing."
    )
    minMember = serializers.IntegerField(source="min_member")
    totalNumber = serializers.IntegerField(source="total_number", allow_null=True)
    mode = serializers.CharField()
    style = serializers.CharField()
    waitSeconds = serializers.FloatField(source="wait_seconds", allow_null=True)
    priority = serializers.IntegerField(allow_null=True)
    queue = serializers.CharField()
    placement = serializers.CharField()
    restartPolicy = serializers.CharField(source="restart_policy")
    group = GroupKeyField(
        help_text="Its gang group's key; a submitter reads one naming others' gangs as a generic sentence."
    )
    application = serializers.CharField(help_text="YuniKorn's applicationId, where the format names one.")
    topologyRequired = serializers.CharField(
        source="topology_required", help_text="Topology level (node-label key) all members share a domain of."
    )
    topologyPreferred = serializers.CharField(
        source="topology_preferred", help_text="Topology level the members should share, widening if needed."
    )
    topologyName = serializers.CharField(source="topology_name", help_text="The Topology of those levels.")
    expectedRuntimeSeconds = serializers.FloatField(  # noqa: N815
        source="runtime_estimate.seconds",
        allow_null=True,
        default=None,
        help_text="What the scheduler expects it to run for (least-work-first, backfilling); null: unknown.",
    )
    expectedRuntimeSource = serializers.CharField(  # noqa: N815
        source="runtime_estimate.source",
        allow_null=True,
        default=None,
        help_text="declared, learned (its submitter's last two runs of the same job), limit "
        "(activeDeadlineSeconds), default (its queue's), overrun (it outlived its estimate); null: none.",
    )
    submitter = serializers.CharField()
    satisfied = serializers.BooleanField()
    running = serializers.IntegerField()
    succeeded = serializers.IntegerField()
    failed = serializers.IntegerField()
    reason = serializers.CharField()
    message = MessageField(
        help_text="Why it is not placed; a submitter reads the reason's generic sentence when it names "
        "another's work."
    )
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()
    forecast = ForecastField(
        help_text="When it is expected to start (docs/forecasts.md); null: it does not wait, or no forecast."
    )

    def get_state(self, gang: Gang) -> str:
        return gang_state(gang)


#: The Gang columns (and its group's key, and its forecast's columns) that GangOutput reads: a
#: list loads only these (``QuerySet.only``), not the declaration, details or resources nobody
#: shows there.
GANG_OUTPUT_COLUMNS = (
    "namespace",
    "name",
    "application",
    "phase",
    "provisional",
    "min_member",
    "total_number",
    "mode",
    "style",
    "wait_seconds",
    "priority",
    "queue",
    "placement",
    "restart_policy",
    "group__key",
    "topology_required",
    "topology_preferred",
    "topology_name",
    *("runtime_estimate_s", "runtime_source", "runtime_limit_s", "schedule_start_time"),
    "submitter",
    "satisfied",
    "running",
    "succeeded",
    "failed",
    "reason",
    "message",
    "created",
    "updated",
    *(f"forecast__{name}" for name in FORECAST_COLUMNS),
)

_DATETIME = serializers.DateTimeField()


def _datetime(value) -> str | None:
    return None if value is None else _DATETIME.to_representation(value)


def _is_utc(tz) -> bool:
    return tz is dt.UTC or getattr(tz, "key", None) in ("UTC", "Etc/UTC")


def _utc_datetimes() -> bool:
    """Whether DateTimeField writes ISO 8601 in UTC now (TIME_ZONE "UTC", no other zone
    activated): then a UTC value's text is its own ``isoformat()`` with ``Z``."""
    return api_settings.DATETIME_FORMAT == ISO_8601 and _is_utc(timezone.get_current_timezone())


def _utc_datetime(value) -> str | None:
    """``_datetime`` for when ``_utc_datetimes()`` holds: DRF looks the current time zone up
    for every value (most of a listed gang's serialization), this only for values not in UTC."""
    if value is None:
        return None
    if _is_utc(value.tzinfo):
        return value.isoformat()[:-6] + "Z"  # "+00:00" replaced, as DRF does
    return _DATETIME.to_representation(value)


def _or_none(convert, value):
    return None if value is None else convert(value)


class GangRowOutput(GangOutput):
    """GangOutput's fields and JSON, built directly instead of through DRF's per-field calls
    (about 25 a gang): a list of gangs renders ten times faster. The declared fields still make
    the schema; tests/api/test_gang_reads.py checks that both give the same JSON."""

    def to_representation(self, gang: Gang) -> dict:
        as_text = self._datetime_writer()
        estimate = gang.runtime_estimate
        return {
            "key": f"{gang.namespace}/{gang.name}",
            "namespace": gang.namespace,
            "name": gang.name,
            "phase": gang.phase,
            "state": gang_state(gang),
            "minMember": gang.min_member,
            "totalNumber": gang.total_number,
            "mode": gang.mode,
            "style": gang.style,
            "waitSeconds": _or_none(float, gang.wait_seconds),
            "priority": gang.priority,
            "queue": gang.queue,
            "placement": gang.placement,
            "restartPolicy": gang.restart_policy,
            "group": group_key(self.context, gang),
            "application": gang.application,
            "topologyRequired": gang.topology_required,
            "topologyPreferred": gang.topology_preferred,
            "topologyName": gang.topology_name,
            "expectedRuntimeSeconds": None if estimate is None else estimate.seconds,
            "expectedRuntimeSource": None if estimate is None else estimate.source,
            "submitter": gang.submitter,
            "satisfied": gang.satisfied,
            "running": gang.running,
            "succeeded": gang.succeeded,
            "failed": gang.failed,
            "reason": gang.reason,
            "message": context_viewer(self.context).message(gang.reason, gang.message),
            "created": as_text(gang.created),
            "updated": as_text(gang.updated),
            "forecast": forecast_for(self, gang, as_text),
        }

    def _datetime_writer(self):
        """Chosen once per serializer (a list's rows share one): the time zone is the request's."""
        writer = getattr(self, "_writes_datetimes", None)
        if writer is None:
            writer = self._writes_datetimes = _utc_datetime if _utc_datetimes() else _datetime
        return writer


class EventOutput(serializers.Serializer):
    """A history row; a submitter reads one naming another's work redacted (``redacted.py``)."""

    class Meta:
        list_serializer_class = EventList

    id = serializers.IntegerField()
    gang = serializers.CharField(source="gang.key")
    kind = serializers.CharField()
    reason = serializers.CharField()
    details = serializers.JSONField()
    cycle = serializers.IntegerField(source="cycle_id", allow_null=True)
    created = serializers.DateTimeField()

    def to_representation(self, event) -> dict:
        return event_redacted(self.context, event, super().to_representation(event))


class GangExplanation(serializers.Serializer):
    reason = serializers.CharField()
    message = serializers.CharField()
    details = serializers.JSONField()


class GangWhyReason(serializers.Serializer):
    reason = serializers.CharField(
        help_text="NotReady, Unschedulable, UntoleratedTaint, NodeSelector, NodeAffinity, Insufficient, "
        "TopologyDomain or QueueQuota."
    )
    count = serializers.IntegerField(help_text="Nodes it rules out (each node under its first reason).")
    detail = serializers.CharField(
        help_text="The taint (key=value:effect), selector, resource, level, queue."
    )
    text = serializers.CharField(help_text="As kube-scheduler words it, with the count.")


class GangWhyShape(serializers.Serializer):
    members = serializers.IntegerField()
    requests = serializers.DictField(child=serializers.CharField())
    nodes = serializers.IntegerField(help_text="Nodes in the cluster: available plus the reasons' counts.")
    available = serializers.IntegerField(help_text="Nodes that can take at least one member now.")
    reasons = GangWhyReason(many=True)


class GangWhy(serializers.Serializer):
    reason = serializers.CharField()
    message = serializers.CharField()
    shapes = GangWhyShape(many=True, help_text="Per shape of member (same requests and constraints).")


class GangTimeout(serializers.Serializer):
    """Where the gang stands against its timeout (scheduler_core/reads/timeouts.py has the rule:
    the clock starts when a member can first be placed)."""

    state = serializers.ChoiceField(
        ["none", "not_started", "counting", "met", "fell_back", "timed_out", "ended"],
        help_text="counting: compare deadline with the time now (past it, the next cycle times it out).",
    )
    waitSeconds = serializers.FloatField(source="wait_seconds", allow_null=True)  # noqa: N815
    style = serializers.CharField()
    clockStarted = serializers.DateTimeField(source="started", allow_null=True)  # noqa: N815
    deadline = serializers.DateTimeField(allow_null=True)
