"""/history/: the scheduling events of the gangs the user may see, newest first, 50 a page.

The filters are the API's (``dashboard.api.events.HistoryFilter``: gang, queue, kind, actor,
from, to, since), read from the query string, so a filtered page is a link to share. Pages are
keyset pages (``before`` / ``after``: where the last page ended). Times are shown, and ``from``
and ``to`` read, in the viewer's time zone: ``tz`` in the query string, else the ``tz`` cookie
the page's script sets from the browser, else UTC. A bad value is named above the table (400).
"""

from __future__ import annotations

import zoneinfo
from functools import cache

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from dashboard.api.events import HistoryFilter
from dashboard.api.permissions import viewer_of
from dashboard.api.selectors import event_visible
from scheduler_core.models import GangEventKind
from scheduler_core.reads import events as history

PAGE_SIZE = 50
#: The quick choices of the time filter: ``since`` values and their labels.
QUICK = (("1h", "Last hour"), ("24h", "Last 24 h"))
#: The one format of every time on the page (and of ``from`` and ``to``).
TIME_FORMAT = "Y-m-d H:i:s"
PAGING = ("before", "after")


@cache
def zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def viewer_zone(request) -> tuple[str, str | None]:
    """The zone to show times in, and the error of a ``tz`` that names no zone."""
    asked = request.GET.get("tz", "").strip()
    if asked:
        return (asked, None) if asked in zones() else ("UTC", f"{asked[:60]!r} is not a time zone")
    cookie = request.COOKIES.get("tz", "")
    return (cookie if cookie in zones() else "UTC"), None


def history_page(events, params) -> dict:
    """The page of ``events`` the query string's ``before`` or ``after`` asks for: its rows
    (each with its ``actor``), the cursors of the pages around it, or the cursor's error."""
    before, after = params.get("before", "").strip(), params.get("after", "").strip()
    try:
        if after:
            rows, more_newer = history.page_newer(events, history.cursor_parse(after), PAGE_SIZE)
            more_older = True
        else:
            cursor = history.cursor_parse(before) if before else None
            rows, more_older = history.page_older(events, cursor, PAGE_SIZE)
            more_newer = cursor is not None
    except ValueError:
        field = "after" if after else "before"
        return {"rows": [], "error": (field, "not a page position: follow the page links")}
    for event in rows:
        event.actor = history.actor_of(event)
    return {
        "rows": rows,
        "older": history.cursor_of(rows[-1]) if rows and more_older else "",
        "newer": history.cursor_of(rows[0]) if rows and more_newer else "",
        "paged": bool(before or after),
    }


@require_GET
@login_required
def history_list(request):
    zone, zone_error = viewer_zone(request)
    with timezone.override(zoneinfo.ZoneInfo(zone)):  # naive from/to are the viewer's times
        found = HistoryFilter(request.GET, queryset=history.history_rows(event_visible(user=request.user)))
        errors = [("tz", zone_error)] if zone_error else []
        errors += [(field, error) for field, messages in found.errors.items() for error in messages]
        page = history_page(found.qs, request.GET) if not errors else {"rows": []}
        viewer_of(request.user).events(page["rows"])  # rows naming others' work redacted, for display
        if page.get("error"):
            errors.append(page["error"])
        form = found.form
        query = request.GET.copy()
        for name in PAGING:
            query.pop(name, None)
        query["tz"] = zone  # every link reads from/to in the zone this page shows
        quick = query.copy()
        for name in ("since", "from", "to"):
            quick.pop(name, None)
        context = {
            "page": page,
            "errors": errors,
            "zone": zone,
            "kinds": GangEventKind.values,
            "picked": request.GET.getlist("kind"),
            "values": {name: request.GET.get(name, "") for name in ("gang", "queue", "actor", "since")},
            "times": {name: _time_value(form, name) for name in ("from", "to")},
            "query": query.urlencode(),
            "quick": [(value, label, _since(quick, value)) for value, label in QUICK],
            "any_time": quick.urlencode(),
            "other_since": "since" not in found.errors and _since_other(request.GET.get("since", "")),
            "time_format": TIME_FORMAT,
        }
        return render(request, "dashboard/history.html", context, status=400 if errors else 200)


def _time_value(form, name: str) -> str:
    """``from`` or ``to`` as the field shows it: the valid value in the page's format, else what
    was typed."""
    value = form.cleaned_data.get(name) if hasattr(form, "cleaned_data") else None
    if value is not None:
        return timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S")
    return form.data.get(name, "")


def _since_other(since: str) -> bool:
    """A valid ``since`` that is not one of the quick choices (``90m``): named on its own."""
    return bool(since.strip()) and since not in dict(QUICK)


def _since(query, value: str) -> str:
    query = query.copy()
    query["since"] = value
    return query.urlencode()
