"""/nodes/: each node's allocatable and used resources as bars, and the gangs running on it; with
a topology, a heat map per level and ``?level=&domain=`` narrowing the table to one domain."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_GET

from dashboard.api.permissions import sees_all_gangs

from . import selectors
from .node_domains import topology_view

PAGE_SIZE = 100


@require_GET
@login_required
def node_list(request):
    # A submitter sees their own gangs on the nodes, as the API would show them.
    user = request.user
    nodes = selectors.node_usage(all_gangs=sees_all_gangs(user), submitter=user.get_username())
    topology = topology_view(nodes, request.GET)
    page = Paginator(topology["rows"], PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "nodes": selectors.with_bars(page.object_list),
        "topology": topology,
        "query": query.urlencode(),
    }
    # A bad filter is the user's mistake, said on the page (naming the parameter), not a 500.
    return render(request, "dashboard/nodes.html", context, status=400 if topology["error"] else 200)
