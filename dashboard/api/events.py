"""``GET /api/v1/events/``: the scheduling history of the gangs the user may see, newest first,
filtered by gang, queue, kind, actor and time (``HistoryFilter``, which the History page reads
too, so the page and the API answer one question the same way).

A gang the user may not see is not there: filtering by it gives an empty list, as for a gang that
does not exist. Times without an offset are in the current time zone (UTC for the API).
"""

from __future__ import annotations

import datetime as dt
import re

import django_filters
from django import forms
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from scheduler_core.models import GangEvent, GangEventKind
from scheduler_core.reads import events as history

from . import selectors
from .exceptions import ERRORS
from .pagination import ApiPagination
from .serializers import EventOutput

#: ``since``: a number and a unit, minutes, hours or days (``90m``, ``1h``, ``24h``, ``7d``).
SINCE = re.compile(r"(\d{1,6})([mhd])")
UNITS = {"m": "minutes", "h": "hours", "d": "days"}
SINCE_LONGEST = dt.timedelta(days=3660)


class SinceField(forms.CharField):
    """A duration back from now, ``1h`` or ``24h``; cleaned to a timedelta."""

    def to_python(self, value):
        text = super().to_python(value).strip()
        if not text:
            return None
        match = SINCE.fullmatch(text)
        if match is None:
            raise forms.ValidationError("a number and a unit: m, h or d (1h, 24h, 7d)", code="invalid")
        since = dt.timedelta(**{UNITS[match[2]]: int(match[1])})
        if not dt.timedelta(0) < since <= SINCE_LONGEST:
            raise forms.ValidationError("more than 0 and at most 3660 days", code="invalid")
        return since


@extend_schema_field(OpenApiTypes.STR)
class SinceFilter(django_filters.Filter):
    field_class = SinceField

    def filter(self, qs, value):
        return qs if value is None else qs.filter(created__gte=timezone.now() - value)


class HistoryForm(forms.Form):
    def clean(self):
        cleaned = super().clean()
        start, end = cleaned.get("from"), cleaned.get("to")
        if start is not None and end is not None and start > end:
            self.add_error("to", "before from: nothing can match")
        return cleaned


class HistoryFilter(django_filters.FilterSet):
    gang = django_filters.CharFilter(
        method="filter_gang", help_text="A gang: namespace/name, or a name (that name in every namespace)."
    )
    queue = django_filters.CharFilter(field_name="gang__queue", help_text="The queue its gang names.")
    kind = django_filters.MultipleChoiceFilter(
        choices=GangEventKind.choices, help_text="The event's kind; repeat for several."
    )
    actor = django_filters.CharFilter(
        method="filter_actor",
        help_text=f"Who did it: a username, {history.CLI} (the server-side commands) or "
        f"{history.SCHEDULER} (gangsched itself).",
    )
    # "from" is a Python keyword: the filter is put in the class namespace by name.
    locals()["from"] = django_filters.IsoDateTimeFilter(
        field_name="created", lookup_expr="gte", help_text="At or after this time (ISO 8601)."
    )
    to = django_filters.IsoDateTimeFilter(
        field_name="created", lookup_expr="lte", help_text="At or before this time (ISO 8601)."
    )
    since = SinceFilter(help_text="In the last 90m, 1h, 24h, 7d... (m, h or d)")

    class Meta:
        model = GangEvent
        fields = ["gang", "queue", "kind", "actor", "from", "to", "since"]
        form = HistoryForm

    def filter_gang(self, queryset, name, value):
        return history.by_gang(queryset, value.strip())

    def filter_actor(self, queryset, name, value):
        return history.by_actor(queryset, value.strip())


class EventListApi(generics.ListAPIView):
    """The events of the gangs the user may see, newest first."""

    class EventListOutput(EventOutput):
        queue = serializers.CharField(source="gang.queue")
        actor = serializers.SerializerMethodField(help_text="Who did it (see the actor filter).")

        def get_actor(self, event) -> str:
            return history.actor_of(event)

    serializer_class = EventListOutput
    filterset_class = HistoryFilter
    pagination_class = ApiPagination

    def get_queryset(self):
        return history.history_rows(selectors.event_visible(user=self.request.user))

    @extend_schema(
        operation_id="events_list",
        summary="Gang events, newest first: by gang, queue, kind, actor and time",
        responses={200: EventListOutput, 400: ERRORS, 404: ERRORS},  # 404: a cursor that does not decode
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)
