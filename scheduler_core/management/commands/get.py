"""Print objects, as ``kubectl get`` does: a table by default, ``-o json`` or ``-o wide``.

    manage.py get gangs|pods|nodes|queues|topologies [-n NAMESPACE | -A] [--application ID] [-o json|wide]

``--application`` keeps the gangs (and their pods) of one application: YuniKorn's
``applicationId``, which names each of its task groups' gangs and its own.

Each resource is a function in ``RESOURCES`` returning (columns, wide columns, rows as dicts);
adding ``get pods`` or ``get nodes`` is one more function.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from scheduler_core.engine.quantity import (
    QuantityError,
    canonical_amount,
    display_duration,
    display_quantity,
    format_quantity,
)
from scheduler_core.reads.forecasts import forecast_view, forecasts_for
from scheduler_core.reads.selectors import gang_list, gang_state, node_usage, pod_list

from . import _queues, _topologies


def gang_row(gang, forecast=None) -> dict:
    """``forecast``: the gang's stored forecast (None: none); ``start`` is its expected start as
    ``squeue --start`` prints one (N/A: the gang does not wait, or nothing forecasts a start)."""
    view = forecast_view(gang, forecast, sees_all=True)
    return {
        "namespace": gang.namespace,
        "name": gang.name,
        "group": gang.group.key if gang.group else None,
        "min_member": gang.min_member,
        "total_number": gang.total_number,
        "mode": gang.mode,
        "style": gang.style,
        "wait_seconds": gang.wait_seconds,
        "state": gang_state(gang),
        "start": _start(view),
        "forecast": forecast_json(view),
        "members": gang.members_count,
        "bound": gang.bound_count,
        "priority": gang.priority,
        "queue": gang.queue,
        "source_format": gang.source_format,
        # The declaration style it came from (volcano-job, workload, kueue...; "api" for the REST API).
        "source": gang.source_format or "api",
        "application": gang.application or None,
        # The object that made its pods (job.batch/train, pytorchjob.kubeflow.org/bert...).
        "owner": getattr(gang, "owner", None) or None,
        "reason": gang.reason,
        "message": gang.message,
        "created": gang.created.isoformat(),
    }


def _start(view: dict | None) -> str:
    if view is None or view["start_p50"] is None:
        return "N/A"
    return timezone.localtime(view["start_p50"]).strftime("%Y-%m-%dT%H:%M:%S")


def forecast_json(view: dict | None) -> dict | None:
    """The forecast as ``-o json`` gives it (times in ISO 8601; the command sees every gang, so
    positions are Kueue's and the explanation is not redacted)."""
    if view is None:
        return None
    times = ("start_p10", "start_p50", "start_p90", "made_at", "stale_after")
    keep = ("status", "note", "queue", "position_in_queue", "position_in_local_queue", "position_in_cluster")
    return {
        **{name: view[name] and view[name].isoformat() for name in times},
        **{name: view[name] for name in keep},
        "stale": view["stale"],
        "text": view["text"],
        "waiting_for": view["waiting_for"],
    }


def gangs(namespace: str | None, application: str | None = None) -> list[dict]:
    rows = gang_list(namespace=namespace)
    if application:
        rows = rows.filter(application=application)
    rows = list(rows)
    forecasts = forecasts_for(rows)
    return [gang_row(gang, forecasts.get(gang.pk)) for gang in rows]


def quantities(resources: dict[str, int]) -> dict[str, str]:
    return {name: format_quantity(name, int(amount)) for name, amount in sorted(resources.items())}


def pods(namespace: str | None, application: str | None = None) -> list[dict]:
    rows = pod_list(namespace=namespace)
    if application:
        rows = rows.filter(gang__application=application)
    return [
        {
            "namespace": pod.namespace,
            "name": pod.name,
            "gang": pod.gang.name if pod.gang else None,
            "phase": pod.phase,
            "node": pod.node,
            "reserved_node": pod.reserved_node,
            "priority": pod.priority,
            "requests": quantities(pod.requests),
            "started": pod.started_at.isoformat() if pod.started_at else None,
        }
        for pod in rows
    ]


def _fraction(used: dict[str, int], allocatable: dict[str, int], resource: str) -> str:
    if resource not in allocatable and not used.get(resource):
        return "-"
    amounts = used.get(resource, 0), allocatable.get(resource, 0)
    return "/".join(format_quantity(resource, amount) for amount in amounts)


def nodes(namespace: str | None = None, application: str | None = None) -> list[dict]:
    """Nodes are not namespaced: ``-n`` is ignored, as kubectl ignores it."""
    if application:
        raise CommandError("--application selects gangs and pods; nodes belong to no application")
    rows = []
    for entry in node_usage():
        node, used = entry["node"], entry["used"]
        status = "Ready" if node.ready else "NotReady"
        rows.append(
            {
                "name": node.name,
                "status": status + (",SchedulingDisabled" if node.unschedulable else ""),
                "allocatable": quantities(node.allocatable),
                "used": quantities(used),
                "pods": used.get("pods", 0),
                "unschedulable": node.unschedulable,
                "ready": node.ready,
                "labels": node.labels,
                "taints": node.taints,
                "cpu": _fraction(used, node.allocatable, "cpu"),
                "memory": _fraction(used, node.allocatable, "memory"),
                "gpu": _fraction(used, node.allocatable, "nvidia.com/gpu"),
            }
        )
    return rows


#: resource (and its aliases) -> (rows, table columns, extra -o wide columns)
RESOURCES = {
    "gangs": (
        gangs,
        [
            "namespace",
            "name",
            "state",
            "start",
            "min_member",
            "members",
            "bound",
            "mode",
            "style",
            "wait_seconds",
            "group",
            "owner",
        ],
        ["priority", "queue", "source_format", "application", "reason"],
    ),
    "pods": (pods, ["namespace", "name", "gang", "phase", "node"], ["reserved_node", "priority", "started"]),
    "nodes": (nodes, ["name", "status", "pods", "cpu", "memory", "gpu"], ["labels", "taints"]),
    "queues": (_queues.queues, _queues.COLUMNS, _queues.WIDE),
    "topologies": (_topologies.topologies, _topologies.COLUMNS, _topologies.WIDE),
}
ALIASES = {
    "gang": "gangs",
    "pod": "pods",
    "po": "pods",
    "node": "nodes",
    "no": "nodes",
    "queue": "queues",
    "q": "queues",
    "topology": "topologies",
    "topo": "topologies",
}


#: The nodes table's columns that hold one resource's "used/allocatable".
FRACTION_COLUMNS = {"cpu": "cpu", "memory": "memory", "gpu": "nvidia.com/gpu"}


def shown(resource: str, text: str) -> str:
    """An exact quantity (``250000Mi``) as tables display it (``244Gi``, ``display_quantity``)."""
    try:
        return display_quantity(resource, canonical_amount(resource, text))
    except QuantityError:
        return text


def table_cell(column: str, value) -> str:
    """A value as the table prints it: durations with their unit (``10min``), amounts as
    displayed (``cpu=16.5,memory=244Gi``); ``-o json`` keeps the exact values."""
    if value is None or value == "":
        return "<none>"
    if column.endswith("_seconds"):
        return display_duration(value)
    if isinstance(value, str) and column in FRACTION_COLUMNS and "/" in value:
        return "/".join(shown(FRACTION_COLUMNS[column], part) for part in value.split("/"))
    if isinstance(value, str) and "=" in value and not value.startswith("<"):  # name=qty,name=qty
        pairs = [part.partition("=") for part in value.split(",")]
        if all(sep for _, sep, _ in pairs):
            return ",".join(f"{name}={shown(name, amount)}" for name, _, amount in pairs)
    return str(value)


def table(rows: list[dict], columns: list[str]) -> str:
    headers = [c.upper().replace("_SECONDS", "").replace("_", "-") for c in columns]
    cells = [[table_cell(c, row[c]) for c in columns] for row in rows]
    widths = [max(len(x) for x in column) for column in zip(headers, *cells, strict=False)]
    return "\n".join(
        "   ".join(value.ljust(width) for value, width in zip(line, widths, strict=True)).rstrip()
        for line in [headers, *cells]
    )


class Command(BaseCommand):
    help = "List gangs, pods, nodes, queues or topologies as a table or JSON."
    # A read answers at once, as kubectl does: Django's system checks would import every URL
    # and view (the whole web side) first. `manage.py check`, migrate and the servers run them.
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("resource", help=f"one of: {', '.join(RESOURCES)}")
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument("-n", "--namespace")
        scope.add_argument("-A", "--all-namespaces", action="store_true")
        parser.add_argument("-o", "--output", choices=["json", "wide"])
        parser.add_argument(
            "--application", help="only this application's gangs or pods (YuniKorn's applicationId)"
        )

    def handle(
        self,
        *args,
        resource: str,
        namespace: str | None,
        output: str | None,
        application: str | None = None,
        **options,
    ):
        resource = ALIASES.get(resource, resource)
        if resource not in RESOURCES:
            raise CommandError(f"unknown resource {resource!r}; one of: {', '.join(RESOURCES)}")
        rows_of, columns, wide = RESOURCES[resource]
        if application is not None and not application.strip():
            raise CommandError("--application: give an application id")
        rows = rows_of(namespace, application)
        if output == "json":
            self.stdout.write(json.dumps(rows, indent=2))
        elif not rows:
            where = (f" for application {application}" if application else "") + (
                f" in namespace {namespace}" if namespace else ""
            )
            self.stdout.write(f"No {resource} found{where}.")
        else:
            self.stdout.write(table(rows, columns + (wide if output == "wide" else [])))
