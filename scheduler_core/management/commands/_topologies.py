"""``get topologies`` and ``describe topology``: the cluster's topologies as kubectl would print
them. Figures are the API's (``scheduler_core/reads/topology_figures.py``): per level, each
domain's nodes and free/allocatable per resource, written as Kubernetes writes amounts.
Topologies are cluster-scoped: ``-n`` is ignored.
"""

from __future__ import annotations

from django.core.management.base import CommandError

from scheduler_core.engine.quantity import format_quantity
from scheduler_core.reads.topology_figures import TopologyView, topology_views

COLUMNS = ["name", "levels", "source_format", "domains"]
WIDE = ["created"]


class TopologyNotFound(LookupError):
    pass


def _row(view: TopologyView) -> dict:
    return {
        "name": view.name,
        "levels": " > ".join(view.levels),
        "source_format": view.source_format,
        # Domains per level, widest first: "2/4/16" for 2 blocks, 4 racks, 16 hosts.
        "domains": "/".join(
            str(len(view.domains.get(level, {}).get("domains", {}))) for level in view.levels
        ),
        "created": view.created.isoformat() if view.created else None,
    }


def topologies(namespace: str | None = None, application: str | None = None) -> list[dict]:
    if application:
        raise CommandError("--application selects gangs and pods; topologies belong to no application")
    return [_row(view) for view in topology_views()]


def topology_get(name: str) -> TopologyView:
    views = topology_views(name)
    if not views:
        raise TopologyNotFound(name)
    return views[0]


def _fraction(free: int, allocatable: int, resource: str) -> str:
    return f"{format_quantity(resource, free)}/{format_quantity(resource, allocatable)}"


def topology_detail(view: TopologyView) -> dict:
    detail = _row(view)
    detail["levels"] = view.levels
    detail["domains"] = view.domains
    return detail


def topology_text(d: dict) -> str:
    lines = [
        f"Name:           {d['name']}",
        f"Source:         {d['source_format'] or '<none>'}",
        f"Levels:         {' > '.join(d['levels'])}",
        "Domains (free/allocatable):",
    ]
    for level in d["levels"]:
        figures = d["domains"].get(level, {"domains": {}, "outside": 0})
        lines.append(f"  {level}: {len(figures['domains'])} domains, {figures['outside']} nodes in none")
        for value, domain in figures["domains"].items():
            amounts = ", ".join(
                f"{resource} {_fraction(domain['free'].get(resource, 0), amount, resource)}"
                for resource, amount in sorted(domain["allocatable"].items())
            )
            lines.append(f"    {value}: {domain['nodes']} nodes; {amounts or '<nothing allocatable>'}")
    return "\n".join(lines)
