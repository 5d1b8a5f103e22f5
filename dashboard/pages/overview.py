"""/: capacity and use, gangs by state, the queues needing attention, the last hour as a chart,
recent events, health."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from dashboard.api.permissions import queue_figures_visible, sees_all_gangs, viewer_of
from dashboard.api.selectors import event_visible, gang_visible
from scheduler_core.engine.model import GangPhase

from . import charts, selectors
from .queue_attention import queues_needing_attention


@require_GET
@login_required
def overview(request):
    gangs = gang_visible(user=request.user)
    counts = selectors.gang_counts(gangs)
    now = charts.chart_now()
    capacity, used = selectors.cluster_totals()
    return render(
        request,
        "dashboard/overview.html",
        {
            "bars": selectors.cluster_bars(capacity, used),
            "counts": [(phase.value, counts.get(phase.value, 0)) for phase in GangPhase],
            "total": sum(counts.values()),
            "chart": charts.chart_data(
                submitter=None if sees_all_gangs(request.user) else request.user.get_username(),
                counts=counts,
                capacity=capacity,
                used=used,
                changes=charts.usage_changes_by_minute(now=now),
                now=now,
            ),
            # Their texts naming others' work redacted, for display.
            "events": viewer_of(request.user).events(
                selectors.recent_events(event_visible(user=request.user))
            ),
            "health": selectors.scheduler_health(),
            # The queues the user may read; their waiting gangs, only those the user may see.
            "attention": queues_needing_attention(
                queue_figures_visible(request.user), request.user, now=timezone.now()
            ),
            # /api/v1/cluster/ counts every gang: the live layer updates the counts only when
            # the page shows every gang too.
            "sees_all": sees_all_gangs(request.user),
        },
    )
