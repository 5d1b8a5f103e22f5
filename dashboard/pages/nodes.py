"""/nodes/: each node's allocatable and used resources as bars, and the gangs running on it; with
a topology, a heat map per level and ``?level=&domain=`` narrowing the table to one domain.

Paged in SQL (nodes by name, LIMIT/OFFSET, narrowed to the filter's domain), or, with Volcano
HyperNodes, out of the names the topology's one pass over the nodes kept (already in name order):
the usage and gangs are read for the page's 100 nodes only."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from dashboard.api.permissions import sees_all_gangs
from scheduler_core.models import Node

from . import selectors
from .node_domains import domain_list, page_domains, topology_view

PAGE_SIZE = 100


@require_GET
@login_required
def node_list(request):
    user = request.user
    topology = topology_view(request.GET)
    page = Paginator(topology["nodes"], PAGE_SIZE).get_page(request.GET.get("page"))
    if isinstance(topology["nodes"], list):  # names, kept by a pass over the nodes (HyperNodes)
        nodes = list(Node.objects.filter(name__in=page.object_list).order_by("name"))
    else:
        nodes = list(page.object_list)
    page_domains(topology, nodes)
    # A submitter sees their own gangs on the nodes, as the API would show them.
    rows = selectors.node_rows(nodes, all_gangs=sees_all_gangs(user), submitter=user.get_username())
    for row in rows:
        row["domain_list"] = domain_list(topology, row["node"].name)
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "nodes": selectors.with_bars(rows),
        "topology": topology,
        "query": query.urlencode(),
        "gangs_url": reverse("dashboard:gangs"),  # once, not once per gang link
    }
    # A bad filter is the user's mistake, said on the page (naming the parameter), not a 500.
    return render(request, "dashboard/nodes.html", context, status=400 if topology["error"] else 200)
