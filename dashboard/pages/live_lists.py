"""The lists that follow the gangs live (Gangs, Timed out): ``?live=rows`` answers the list part
of the page as a reload would render it, with the same filters, sort, page and visibility (the
view's own queryset), as JSON: ``{"html": ..., "count": N}``. ``static/js/live_lists.js`` asks for
it when gangs change and puts the HTML in place of the page's ``[data-live-list]``.
"""

from __future__ import annotations

from django.http import JsonResponse
from django.template.loader import render_to_string

LIVE = "live"
ROWS = "rows"


def wants_rows(request) -> bool:
    return request.GET.get(LIVE) == ROWS


def page_query(request):
    """The query string's parameters without ``live`` (the links and forms of the rows use it)."""
    query = request.GET.copy()
    query.pop(LIVE, None)
    return query


def page_path(request) -> str:
    """The page's own address, without ``live``: where an action on a row comes back to."""
    query = page_query(request).urlencode()
    return request.path + (f"?{query}" if query else "")


def rows_response(request, template: str, context: dict, count: int) -> JsonResponse:
    html = render_to_string(template, context, request=request)
    return JsonResponse({"html": html, "count": count}, headers={"Cache-Control": "no-store"})
