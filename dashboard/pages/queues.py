"""/queues/: the queue tree with each queue's bars and chart, live; close and open for operators.

Operators and viewers see the whole tree, its amounts and its state; a submitter the queues they
may submit to and their ancestors, as ``/api/v1/queues/`` lists them (``queue_figures_visible``):
another queue, and its chart, read as one that does not exist. The gangs waiting in a queue are
counted among those the user may see (a submitter: their own), as the gangs list the count links
to would show them. Each queue's badges (borrowing, at max, over quota) and its waiting gangs in
the order the scheduler tries them (``queue_attention``), as of the page's load: a submitter is
listed their own gangs, each with its place among all those waiting. Closing and opening
take ``scheduler_core.close_queue`` (operators); to anyone else the action answers exactly as
for a queue that does not exist (404), as the other page actions do for what one may not touch.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from dashboard.api.permissions import queue_figures_visible, sees_all_gangs
from scheduler_core.models import Queue
from scheduler_core.services import queues as service

from .queue_attention import local_queues, pending_lists
from .queue_rows import queue_chart, queue_rows

CLOSE_PERMISSION = "scheduler_core.close_queue"
#: action -> (service, what it did, the state it leaves)
ACTIONS = {
    "close": (service.queue_close, "closed", "closed"),
    "open": (service.queue_open, "opened", "open"),
}


def _chart_queue(rows: list[dict], asked: str) -> str | None:
    """The queue the chart shows: the one asked for, else the first top-level queue."""
    names = {row["name"] for row in rows}
    if asked in names:
        return asked
    return next((row["name"] for row in rows if row["parent"] is None), None)


@require_GET
@login_required
def queue_list(request):
    figures = queue_figures_visible(request.user)
    local = local_queues() if figures else {}
    rows = queue_rows(request.user, figures, local)
    charted = _chart_queue(rows, request.GET.get("chart", ""))
    pending = pending_lists(figures, request.user, now=timezone.now(), local=local)
    for row in rows:
        row["attention"] = pending.get(row["name"])
    return render(
        request,
        "dashboard/queues.html",
        {
            "queues": rows,
            "waiting": [row for row in rows if row["attention"] and row["attention"]["total"]],
            "charted": charted,
            "chart": queue_chart(charted, now=timezone.now()),
            "can_close": request.user.has_perm(CLOSE_PERMISSION),
            "sees_all": sees_all_gangs(request.user),
        },
    )


@require_GET
@login_required
def queue_live(request):
    """The page's rows as JSON, re-read by static/js/queues.js when gangs change."""
    return JsonResponse({"queues": queue_rows(request.user)})


@require_POST
@login_required
def queue_action(request, name: str):
    if not request.user.has_perm(CLOSE_PERMISSION) or not Queue.objects.filter(name=name).exists():
        raise Http404(f"queue {name} not found")
    action = request.POST.get("action", "")
    if action not in ACTIONS:
        return HttpResponseBadRequest(
            f"action: must be one of {', '.join(ACTIONS)}", content_type="text/plain"
        )
    change, done, state = ACTIONS[action]
    try:
        outcome = change(name)
    except service.QueueNotFound:  # deleted between the check and the change
        raise Http404(f"queue {name} not found") from None
    if outcome == service.UNCHANGED:
        messages.info(request, f"queue {name} was already {state}")
    else:
        messages.success(request, f"queue {name} {done}")
    return redirect(reverse("dashboard:queues") + f"#queue-{name}")
