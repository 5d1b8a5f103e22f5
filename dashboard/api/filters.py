"""Query filters of the gang list (django-filter); the event list's are in dashboard/api/events.py."""

from __future__ import annotations

import django_filters
from django.db.models import Q
from django_filters.rest_framework import DjangoFilterBackend

from dashboard.api.permissions import sees_all_gangs
from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang

PHASES = [(phase.value, phase.value) for phase in GangPhase]
#: The paginator's query parameters (dashboard/api/pagination.py), which no filter reads.
PAGE_PARAMS = frozenset({"cursor", "pageSize"})


class FilterBackend(DjangoFilterBackend):
    """django-filter's backend, minus the filter set when the request asks for no filter.

    A filter set copies its filters and builds and validates a form on every request (a good
    share of an unfiltered list's time), and an empty one filters nothing. Any other query
    parameter, known or not, takes django-filter's own path as before."""

    def filter_queryset(self, request, queryset, view):
        if unfiltered(request):
            return queryset
        return super().filter_queryset(request, queryset, view)


def unfiltered(request) -> bool:
    """Whether the request asks for no filter: its query holds the paginator's parameters only."""
    return set(request.query_params) <= PAGE_PARAMS


class GangFilter(django_filters.FilterSet):
    phase = django_filters.MultipleChoiceFilter(choices=PHASES, help_text="Gang phase; repeat for several.")
    state = django_filters.MultipleChoiceFilter(
        field_name="phase", choices=PHASES, help_text="Same as phase (another name for it)."
    )
    namespace = django_filters.CharFilter()
    queue = django_filters.CharFilter()
    submitter = django_filters.CharFilter()
    application = django_filters.CharFilter(
        help_text="The application's gangs: YuniKorn's applicationId (each task group's gang and its own)."
    )
    search = django_filters.CharFilter(
        method="filter_search",
        help_text="Text in the namespace, the name or (operators and viewers) the explanation message.",
    )

    class Meta:
        model = Gang
        fields = ["phase", "state", "namespace", "queue", "submitter", "application", "search"]

    def filter_search(self, queryset, name, value):
        """A submitter's search skips the message: it may name another's gang, which a search
        for that name would reveal though the message shown is redacted (docs/security.md)."""
        found = Q(namespace__icontains=value) | Q(name__icontains=value)
        user = getattr(self.request, "user", None)
        if user is not None and user.is_authenticated and sees_all_gangs(user):
            found |= Q(message__icontains=value)
        return queryset.filter(found)
