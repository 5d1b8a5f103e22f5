"""/nodes/: each node's allocatable and used resources as bars, and the gangs running on it."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_GET

from dashboard.api.permissions import sees_all_gangs

from . import selectors

PAGE_SIZE = 100


@require_GET
@login_required
def node_list(request):
    # A submitter sees their own gangs on the nodes, as the API would show them.
    user = request.user
    nodes = selectors.node_usage(all_gangs=sees_all_gangs(user), submitter=user.get_username())
    page = Paginator(nodes, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "dashboard/nodes.html", {"page": page, "nodes": page.object_list})
