"""/queues/: the queue tree with each queue's bars and chart, live; close and open for operators.

Operators and viewers see the whole tree, its amounts and its state; a submitter the queues they
may submit to and their ancestors, as ``/api/v1/queues/`` lists them (``queue_figures_visible``):
another queue, and its chart, read as one that does not exist. The gangs waiting in a queue are
counted among those the user may see (a submitter: their own), as the gangs list the count links
to would show them. Each queue's badges (borrowing, at max, over quota) and its waiting gangs in
the order the scheduler tries them (``queue_attention``): a submitter is
listed their own gangs, each with its place among all those waiting. Each lane says when its
next gang is expected to start (the earliest forecast among the gangs the user sees there: a
submitter, their own; ``forecasts.next_starts``). ``/queues/live/`` answers
the same rows, badges and lanes for the page to rewrite itself when gangs change. Closing and opening
take ``scheduler_core.close_queue`` (operators); to anyone else the action answers exactly as
for a queue that does not exist (404), as the other page actions do for what one may not touch.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from dashboard.api.permissions import queue_figures_visible, sees_all_gangs
from scheduler_core.models import Queue
from scheduler_core.services import queues as service

from .forecasts import next_starts
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


def _rows_with_attention(user) -> tuple[list[dict], dict]:
    """Every queue ``user`` may read, each with its badges and waiting gangs (``attention``),
    and what the waiting lanes are rendered from; one fixed number of queries."""
    figures = queue_figures_visible(user)
    local = local_queues() if figures else {}
    rows = queue_rows(user, figures, local)
    pending = pending_lists(figures, user, now=timezone.now(), local=local)
    starts = next_starts(user, {name for name, lane in pending.items() if lane["own"]}, local)
    for row in rows:
        row["attention"] = pending.get(row["name"])
        row["next_start"] = starts.get(row["name"])
    lanes = {
        "waiting": [row for row in rows if row["attention"] and row["attention"]["total"]],
        "sees_all": sees_all_gangs(user),
    }
    return rows, lanes


@require_GET
@login_required
def queue_list(request):
    rows, lanes = _rows_with_attention(request.user)
    charted = _chart_queue(rows, request.GET.get("chart", ""))
    return render(
        request,
        "dashboard/queues.html",
        {
            "queues": rows,
            **lanes,
            "charted": charted,
            "chart": queue_chart(charted, now=timezone.now()),
            "can_close": request.user.has_perm(CLOSE_PERMISSION),
        },
    )


@require_GET
@login_required
def queue_live(request):
    """What static/js/queues.js re-reads when gangs change: the rows as JSON, each with its
    badges (``flags``), and the waiting lanes as the page renders them (``pending_html``)."""
    rows, lanes = _rows_with_attention(request.user)
    html = render_to_string("dashboard/_queue_pending.html", lanes, request=request)
    for row in rows:
        row["flags"] = row.pop("attention")["flags"] if row.get("attention") else []
    return JsonResponse({"queues": rows, "pending_html": html})


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
