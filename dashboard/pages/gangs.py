"""/gangs/: the filterable, sortable, paginated table, and /gangs/<namespace>/<name>/."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_GET

from dashboard.api.permissions import viewer_of
from dashboard.api.selectors import event_visible, gang_visible
from scheduler_core.engine.decisions import Reason
from scheduler_core.engine.model import GangPhase
from scheduler_core.models import GangEventKind
from scheduler_core.models.gangs import waiting_q
from scheduler_core.reads import selectors as shared
from scheduler_core.reads.runtimes import gang_runtime
from scheduler_core.reads.timeouts import gang_timeout
from scheduler_core.reads.topology import gang_topology
from scheduler_core.reads.why import gang_why
from scheduler_core.services.queues import queue_for_gang

from .access import KILL, RETRY, _get_gang_for_user, can_act
from .forecasts import forecast_context, forecast_response, forecasts_for_rows, wants_forecast
from .live_lists import page_query, rows_response, wants_rows
from .selectors import progress_for

PAGE_SIZE = 50
HISTORY_LIMIT = 50
PHASES = [phase.value for phase in GangPhase]
#: ?sort= values and their ORDER BY; a leading "-" reverses. "age" sorts newest first.
SORTS = {
    "state": ["phase", "namespace", "name"],
    "namespace": ["namespace", "name"],
    "queue": ["queue", "namespace", "name"],
    "submitter": ["submitter", "namespace", "name"],
    "priority": ["priority", "namespace", "name"],
    "age": ["-created", "-id"],
}
#: Explanations that name the gang's queue, not the nodes, as what holds it back.
QUEUE_REASONS = {
    Reason.QUEUE_UNKNOWN.value,
    Reason.QUEUE_CLOSED.value,
    Reason.QUEUE_MAX.value,
    Reason.QUEUE_BORROW.value,
    Reason.WAITING_FOR_RECLAIM.value,
}
#: Exact-match filters; ``application`` finds a YuniKorn application's gangs by its applicationId.
FILTERS = ("namespace", "queue", "submitter", "application")


def gang_filter(gangs, params) -> tuple:
    """Apply the table's filters from the query string; return the queryset and what was applied."""
    applied = {}
    states = [s for s in params.getlist("state") if s in PHASES]
    if states:
        gangs = gangs.filter(phase__in=states)
    if params.get("waiting") == "1":
        # The Queues page's counts link here: the same gangs they count.
        gangs = gangs.filter(waiting_q())
        applied["waiting"] = "1"
    for field in FILTERS:
        value = params.get(field, "").strip()
        if value:
            gangs = gangs.filter(**{field: value})
            applied[field] = value
    search = params.get("q", "").strip()
    if search:
        gangs = gangs.filter(name__icontains=search)
        applied["q"] = search
    return gangs, states, applied


def gang_sort(gangs, sort: str) -> tuple:
    key = sort.lstrip("-")
    if key not in SORTS:
        sort, key = "age", "age"
    order = SORTS[key]
    if sort.startswith("-"):
        order = [f[1:] if f.startswith("-") else f"-{f}" for f in order]
    return gangs.order_by(*order), sort


@require_GET
@login_required
def gang_list(request):
    gangs, states, applied = gang_filter(gang_visible(user=request.user), request.GET)
    gangs, sort = gang_sort(gangs, request.GET.get("sort", "age"))
    page = Paginator(gangs, PAGE_SIZE).get_page(request.GET.get("page"))
    viewer = viewer_of(request.user)
    rows = viewer.gangs(page.object_list)  # explanations naming others' work redacted, for display
    progress_for(rows, viewer=viewer)
    forecasts_for_rows(request.user, rows)
    query = page_query(request)
    query.pop("page", None)
    sort_query = query.copy()
    sort_query.pop("sort", None)
    context = {
        "page": page,
        "gangs": rows,
        "phases": PHASES,
        "states": states,
        "applied": applied,
        "sort": sort,
        "query": query.urlencode(),
        "sort_query": sort_query.urlencode(),
        "columns": ["state", "namespace", "queue", "submitter", "priority", "age"],
    }
    if wants_rows(request):
        return rows_response(request, "dashboard/_gang_list.html", context, page.paginator.count)
    return render(request, "dashboard/gangs.html", context)


#: Phases after which nothing of the gang is placed again, and the events that end in them.
ENDED = (GangPhase.FINISHED.value, GangPhase.FAILED.value, GangPhase.KILLED.value)
ENDING_EVENTS = (GangEventKind.KILLED, GangEventKind.FAILED, GangEventKind.FINISHED)


@require_GET
@login_required
def gang_detail(request, namespace: str, name: str):
    gang = _get_gang_for_user(request.user, namespace, name)
    if wants_forecast(request):
        return forecast_response(request, gang)
    viewer = viewer_of(request.user)
    viewer.gangs([gang], with_details=True)  # for display only: never saved
    progress_for([gang], viewer=viewer)
    history = viewer.events(reversed(event_visible(user=request.user).filter(gang=gang)[:HISTORY_LIMIT]))
    members = list(shared.gang_members(gang))
    now = timezone.now()
    timeout = gang_timeout(gang, now)
    ended = gang.phase in ENDED
    topology = gang_topology(gang, members)
    for member, domains in zip(members, topology["domains"], strict=True):
        member.domain_list = list(domains.values())
    return render(
        request,
        "dashboard/gang_detail.html",
        {
            "gang": gang,
            "state": shared.gang_state(gang),
            "members": members,
            "topology": topology,
            "rank": shared.gang_queue_rank(gang),
            "timeout": timeout,
            "timeout_text": timeout.text(now),
            "runtime": gang_runtime(gang),
            **forecast_context(request.user, gang),
            # A Kueue LocalQueue's name stands for its ClusterQueue: link the queue it is charged to.
            "queue": queue_for_gang(gang.namespace, gang.queue),
            "queue_reason": gang.reason in QUEUE_REASONS,
            "history": history,
            "declaration": json.dumps(gang.declaration, indent=2, sort_keys=True) if gang.declaration else "",
            "details": json.dumps(gang.details, indent=2, sort_keys=True) if gang.details else "",
            "why": gang_why(gang),
            "explained_at": _explained_at(gang),
            "retry_within_s": settings.GANGSCHED_REQUEUE_BACKOFF_MAX_S,
            "can_retry": can_act(request.user, gang, RETRY),
            "can_kill": can_act(request.user, gang, KILL),
            "retryable": gang.phase in ("TimedOut", "Failed"),
            "killable": gang.phase not in ("Finished", "Killed"),
            "ended": ended,
            "ending": next((e for e in reversed(history) if ended and e.kind in ENDING_EVENTS), None),
        },
    )


def _explained_at(gang):
    """When the scheduler first gave the gang its present reason (the cycle that computed it);
    None for a reason stored before the scheduler recorded it."""
    stamp = (gang.details or {}).get("explained_at")
    return parse_datetime(stamp) if isinstance(stamp, str) else None
