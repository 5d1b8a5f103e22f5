"""The Nodes page's topology: a heat map of the main resource per domain of each level,
and the ``?level=&domain=`` filter that narrows the node table to one domain.

The sums are grouped in PostgreSQL over the nodes and their stored use of the main resource
(``domain_sums``, one query; ``scheduler_core.reads.node_usage``), the filtered nodes paged there too:
no query per node or domain, nothing read from the members, and no node read into Python but the
page's. With Volcano HyperNodes (a tree resolved in Python) the sums come from one pass over the
nodes instead.
"""

from __future__ import annotations

import json
from typing import NamedTuple
from urllib.parse import urlencode

from django.db import connection
from django.utils.html import escape
from django.utils.safestring import mark_safe

from scheduler_core.engine.quantity import format_quantity
from scheduler_core.models import HyperNode, Node
from scheduler_core.reads.node_usage import usage_by_node
from scheduler_core.reads.topology import Level, level_keys, topologies
from scheduler_core.reads.topology_domains import node_domain_labels

from .domain_sums import domain_sums, nodes_in

GPU = "nvidia.com/gpu"
#: A narrower level with more domains than this is drawn only inside the domain picked at a wider
#: level (the racks of one block): 625 racks of a 5,000-node cluster are no map to read, and
#: drawing them doubled the page.
MAX_CELLS = 64
#: What a cell's number reads as, per main resource.
UNITS = {GPU: "GPUs", "cpu": "CPUs"}


class FilterError(ValueError):
    """A bad ``?level=&domain=``: ``field`` names the parameter, the message says why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


class _NodeRow(NamedTuple):
    """What the heat map needs of a node: its main resource only, not its whole JSON maps."""

    name: str
    labels: dict
    capacity: str | None
    external: str | None
    ready: bool
    unschedulable: bool


def main_resource() -> str:
    """GPUs when any node has them (they are what gangs wait for), else CPU."""
    having = Node.objects.filter(allocatable__has_key=GPU).exclude(allocatable__contains={GPU: 0})
    return GPU if having.exists() else "cpu"


def _node_rows(resource: str) -> list[_NodeRow]:
    """Every node, by name, with its allocatable and external use of ``resource`` (as text).
    A plain cursor: the ORM's per-row converters took two thirds of the page at 20,000 nodes."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT name, labels::text, allocatable ->> %s, external_usage ->> %s, ready, unschedulable "
            f"FROM {Node._meta.db_table} ORDER BY name",
            [resource, resource],
        )
        return [
            _NodeRow(name, json.loads(labels) if labels else {}, capacity, external, ready, cordoned)
            for name, labels, capacity, external, ready, cordoned in cursor.fetchall()
        ]


def topology_view(params) -> dict:
    """The heat maps; the nodes the filter keeps, in name order, to page (``nodes``: a QuerySet
    of Node, or a list of names when summed in Python); the domain per level key of those kept
    (``where``, by name: filled for a page by ``page_domains``) and the index of each table
    column's level among them (``columns_at``: ``domain_list`` picks them for the page's rows);
    and the filter's error (a ``FilterError``; then every node is kept).

    A level whose every domain holds a single node (the host level) gets no heat map: the node
    table is that map already. A level of more than MAX_CELLS domains below a wider one shows only
    the domains inside the picked one (its siblings when one of its own is picked). Free counts
    only ready, uncordoned nodes (what a gang could get); used and capacity count every node, as
    the node bars do. The sums are grouped in PostgreSQL (``domain_sums``), or, with Volcano
    HyperNodes (a tree resolved in Python), summed in one pass over the nodes.
    """
    tops = topologies()
    keys = level_keys(tops)
    try:
        chosen = _filter(params, keys)
    except FilterError as error:
        chosen, problem = None, error
    else:
        problem = None
    if not tops:
        return {"maps": [], "nodes": nodes_in(None, None), "where": {}, "keys": [], "columns_at": [],
                "levels": [], "filter": None, "error": problem}  # fmt: skip
    resource = main_resource()
    # With GPUs, each cell also carries its CPUs: a rack of CPU nodes has work and room too.
    cpu = None
    if HyperNode.objects.exists():
        sums, placed, listing, where = _summed_in_python(keys, resource, chosen)
        if resource != "cpu":
            cpu = _summed_in_python(keys, "cpu", chosen)[0]
    else:
        sums, placed = domain_sums(keys, resource, chosen)
        listing, where = nodes_in(*chosen) if chosen else nodes_in(None, None), {}
        if resource != "cpu":
            cpu = domain_sums(keys, "cpu", chosen)[0]
    index = {key: i for i, key in enumerate(keys)}
    maps = []
    for name, levels in tops:
        shown = []
        for depth, level in enumerate(levels):
            cells = sums[index[level.key]]
            crowded = len(cells) > MAX_CELLS
            inside = _inside(levels[:depth], index[level.key], chosen, index, placed) if crowded else None
            cpu_cells = cpu[index[level.key]] if cpu is not None else None
            shown.append(_level_map(level, cells, resource, chosen, inside, cpu_cells))
        maps.append({"topology": name, "levels": [m for m in shown if m is not None]})
    # The table's domain columns: the levels that have a heat map, each once, and one column per
    # short name (two topologies' racks, ``topology.gangsched.io/rack`` and
    # ``topology.kubernetes.io/rack``, are one "rack" column showing the node's value of either).
    columns: dict[str, dict] = {}
    for lvl in {lvl["key"]: lvl for m in maps for lvl in m["levels"]}.values():
        column = columns.setdefault(lvl["label"], {"label": lvl["label"], "keys": [], "at": []})
        column["keys"].append(lvl["key"])
        column["at"].append(index[lvl["key"]])
    for column in columns.values():
        column["key"] = ", ".join(column["keys"])
    return {
        "maps": maps,
        "nodes": listing,
        "where": where,
        "keys": keys,
        "columns_at": [column["at"] for column in columns.values()],
        "levels": list(columns.values()),
        "filter": chosen,
        "error": problem,
    }


def _summed_in_python(keys: list[str], resource: str, chosen) -> tuple[list, list, list[str], dict]:
    """``domain_sums``' figures from one pass over every node (their labels and HyperNodes), and
    the names the filter keeps with each one's domains."""
    nodes = _node_rows(resource)
    labels = node_domain_labels(nodes)
    used = {name: amounts[resource] for name, amounts in usage_by_node(resource=resource).items()}
    # Per level (index in keys), per domain, [capacity, used, free, nodes]; and the domains (at
    # every level) of the first node seen in each: where the domain sits.
    sums: list[dict[str, list[int]]] = [{} for _ in keys]
    placed: list[dict[str, list[str | None]]] = [{} for _ in keys]
    where: dict[str, list[str | None]] = {}
    at = keys.index(chosen[0]) if chosen else None
    for node in nodes:
        # ``domain_of`` is the label's value: read inline, 60,000 calls cost 100 ms at 20,000 nodes.
        domains = [*map(labels[node.name].get, keys)]
        if at is None or domains[at] == chosen[1]:
            where[node.name] = domains
        cap = int(node.capacity or 0)
        # Other schedulers' pods take room too (Kubernetes backend), as on the node bars.
        use = used.get(node.name, 0) + int(node.external or 0)
        free = max(cap - use, 0) if node.ready and not node.unschedulable else 0
        for i, domain in enumerate(domains):
            if domain is not None:
                cell = sums[i].get(domain)
                if cell is None:
                    cell = sums[i][domain] = [0, 0, 0, 0]
                    placed[i][domain] = domains
                cell[0] += cap
                cell[1] += use
                cell[2] += free
                cell[3] += 1
    return sums, placed, list(where), where


def page_domains(topology: dict, nodes: list[Node]) -> None:
    """Fill ``where`` for a page's nodes when the sums were grouped in SQL (no HyperNodes: a
    node's domains are its labels, its name standing for a missing hostname)."""
    missing = [node for node in nodes if node.name not in topology["where"]]
    if missing:
        labels, keys = node_domain_labels(missing, hypernodes=[]), topology["keys"]
        topology["where"].update({node.name: [*map(labels[node.name].get, keys)] for node in missing})


def domain_list(topology: dict, name: str) -> list[str | None]:
    """A node's domain per table column (the levels with a heat map, one per short name), as
    ``topology_view`` found: the values of the column's levels, each once (``r1 / rack-1``)."""
    domains = topology["where"].get(name)
    if not domains:
        return []
    picked = (
        [*dict.fromkeys(domains[i] for i in at if domains[i] is not None)] for at in topology["columns_at"]
    )
    return [" / ".join(values) or None for values in picked]


def _inside(wider: list[Level], here: int, chosen, index: dict[str, int], placed: list) -> tuple | None:
    """Which of a crowded level's domains to draw: ``(within, domains, label)``, ``within`` being
    the picked wider domain (``(level key, domain)``, shown as ``label``) or None when none is
    picked; None: draw them all (no wider level to pick from)."""
    if not wider:
        return None
    picked = None
    if chosen:
        at = index[chosen[0]]
        where = placed[at].get(chosen[1])
        if where is not None:
            # Picked at a wider level: that domain. At this level or a narrower one: the domain
            # just above this level that holds it.
            wider_keys = [level.key for level in wider]
            key = chosen[0] if chosen[0] in wider_keys else wider_keys[-1]
            picked = (key, where[index[key]]) if where[index[key]] is not None else None
    if picked is None:
        return (None, [], wider[-1].label)
    at = index[picked[0]]
    inside = [domain for domain, where in placed[here].items() if where[at] == picked[1]]
    return (picked, inside, picked[0].rsplit("/", 1)[-1])


def _filter(params, keys: list[str]) -> tuple[str, str] | None:
    level, domain = params.get("level", "").strip(), params.get("domain", "").strip()
    if not level and not domain:
        return None
    if not level:
        raise FilterError("level", "a domain needs its level (?level=<node-label key>&domain=<value>)")
    if not keys:
        raise FilterError("level", "no topology is declared, so no node is in a domain")
    if level not in keys:
        raise FilterError("level", f"{level!r} is no level of any topology (levels: {', '.join(keys)})")
    if not domain:
        raise FilterError("domain", f"which domain of {level}?")
    return level, domain


def _figures(resource: str, cell: list[int] | None) -> tuple[str, str, int | None]:
    """A cell's figures of one resource: what it says, what it shows, its percent used (None:
    the domain has none of it)."""
    unit = UNITS.get(resource, resource)
    cap, use, free, _ = cell or (0, 0, 0, 0)
    if not cap:
        return f"no {unit}", f"no {unit}", None
    free_text, used_text = format_quantity(resource, free), format_quantity(resource, use)
    said = f"{free_text} free, {used_text} used of {format_quantity(resource, cap)} {unit}"
    return said, f"{free_text} free · {used_text} used", min(100, round(100 * use / cap))


def _level_map(
    level: Level, cells: dict[str, list[int]], resource: str, chosen, inside, cpu_cells: dict | None = None
) -> dict | None:
    """One level's heat map; its cells are HTML made here, not by a template loop: a 5,000-node
    cluster has some 700 racks and blocks, which the template engine took 130 ms to draw.

    With ``cpu_cells`` (GPUs are the main resource), a cell shows its GPUs and its CPUs and is
    coloured by the more used of the two, so a full rack of CPU nodes is as dark as a full rack
    of GPU nodes."""
    if not cells or all(n == 1 for *_, n in cells.values()):
        return None
    unit = UNITS.get(resource, resource)
    if cpu_cells is not None:
        unit = f"{unit} and CPUs"
    note, drawn = "", sorted(cells)
    if inside is not None:
        picked, drawn, wider = inside[0], sorted(inside[1]), inside[2]
        note = (
            f"{len(cells)} {level.label} domains: those of {wider} {picked[1]} shown"
            if picked
            else f"{len(cells)} {level.label} domains: pick a {wider} above to see its own"
        )
    parts = []
    for domain in drawn:
        cap, use, free, nodes = cells[domain]
        figures, shown, main_pct = _figures(resource, cells[domain])
        pcts = [main_pct]
        extra = extra_said = ""
        if cpu_cells is not None:
            cpu = cpu_cells.get(domain)
            cpu_said, cpu_shown, cpu_pct = _figures("cpu", cpu)
            pcts.append(cpu_pct)
            figures += f"; {cpu_said}"
            # Two lines of figures: each says which resource it counts.
            shown = shown if main_pct is None else f"{UNITS.get(resource, resource)} {shown}"
            cpu_shown = cpu_shown if cpu_pct is None else f"CPUs {cpu_shown}"
            shown = f'{shown}</span> <span class="heat-figures heat-cpu">{cpu_shown}'
            c_cap, c_use, c_free = cpu[:3] if cpu else (0, 0, 0)
            extra = f' data-cpu-capacity="{c_cap}" data-cpu-used="{c_use}" data-cpu-free="{c_free}"'
            used = [
                f"{name} {p}% used" if p is not None else f"no {name}"
                for name, p in (("GPUs", main_pct), ("CPUs", cpu_pct))
            ]
            extra_said = f" ({', '.join(used)})"
        known = [p for p in pcts if p is not None]
        pct = max(known) if known else 0
        said = escape(f"{level.label} {domain}: {figures}, {pluralize(nodes)}")
        heat = str(min(10, pct // 10)) if known else "none"
        href = escape(urlencode({"level": level.key, "domain": domain}))
        current = ' aria-current="true"' if chosen == (level.key, domain) else ""
        title = escape(extra_said) if extra_said else f" ({pct}% used)"
        parts.append(
            f'<li><a class="heat-cell heat-{heat}" href="?{href}" data-level="{escape(level.key)}" '
            f'data-domain="{escape(domain)}" data-capacity="{cap}" data-used="{use}" data-free="{free}" '
            f'data-nodes="{nodes}" data-pct="{pct}"{extra} title="{said}{title}" '
            f'aria-label="{said}"{current}><span class="heat-domain">{escape(domain)}</span> '
            f'<span class="heat-figures">{shown}</span></a></li>'
        )
    cells_html = mark_safe("".join(parts))  # noqa: S308 (every value in it is escaped above)
    return {"key": level.key, "label": level.label, "unit": unit, "cells": cells_html, "note": note}


def pluralize(nodes: int) -> str:
    return f"{nodes} node{'' if nodes == 1 else 's'}"
