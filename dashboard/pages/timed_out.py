"""/timed-out/: the operator's work queue, and the retry/kill action every page posts to.

Actions are two POSTs: the first (without ``confirm``) shows what is about to happen, the second
does it and redirects back with one message per gang (post/redirect/get, so a reload does not
post again; and a second press is refused by the service, changing nothing).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from dashboard.api.permissions import viewer_of
from dashboard.api.selectors import gang_visible
from scheduler_core.engine.model import GangPhase

from .access import KILL, RETRY, can_act
from .actions import gangs_act
from .live_lists import page_path, rows_response, wants_rows
from .selectors import progress_for, timed_out_times

PAGE_SIZE = 50
NOTHING_SELECTED = "Select at least one gang."


@require_GET
@login_required
def timed_out_list(request):
    gangs = (
        gang_visible(user=request.user).filter(phase=GangPhase.TIMED_OUT.value).order_by("-updated", "-id")
    )
    page = Paginator(gangs, PAGE_SIZE).get_page(request.GET.get("page"))
    viewer = viewer_of(request.user)
    rows = viewer.gangs(page.object_list)  # explanations naming others' work redacted, for display
    progress_for(rows, viewer=viewer)
    timed_out_times(rows)
    for gang in rows:  # permissions are cached on the user: no query per row
        gang.can_retry = can_act(request.user, gang, RETRY)
        gang.can_kill = can_act(request.user, gang, KILL)
    context = {
        "page": page,
        "gangs": rows,
        "can_bulk": any(g.can_retry or g.can_kill for g in rows),
        "next_path": page_path(request),
    }
    if wants_rows(request):
        return rows_response(request, "dashboard/_timed_out_list.html", context, page.paginator.count)
    return render(request, "dashboard/timed_out.html", context)


@require_POST
@login_required
def gang_action(request):
    action = request.POST.get("action")
    keys = [key for key in request.POST.getlist("gang") if "/" in key]
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("dashboard:timed-out")
    if action not in (RETRY, KILL):
        messages.error(request, f"Unknown action {action!r}.")
        return redirect(back)
    if not keys:
        messages.error(request, NOTHING_SELECTED)
        return redirect(back)
    if request.POST.get("confirm") != "yes":
        return render(request, "dashboard/confirm.html", {"action": action, "keys": keys, "next": back})
    for result in gangs_act(user=request.user, action=action, keys=keys):
        (messages.success if result.ok else messages.error)(request, result.message)
    return redirect(back)
