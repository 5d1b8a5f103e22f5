"""The Nodes page's topology (issue 20): a heat map of the main resource per domain of each level,
and the ``?level=&domain=`` filter that narrows the node table to one domain.

Everything is summed in one pass over the rows ``selectors.node_usage`` already built (each
node's allocatable and use): no query per node or per domain, one for the topologies.
"""

from __future__ import annotations

from collections import defaultdict

from scheduler_core.engine.quantity import format_quantity
from scheduler_core.topology_reads import Level, domains_by_node, level_keys, topologies

GPU = "nvidia.com/gpu"
#: What a cell's number reads as, per main resource.
UNITS = {GPU: "GPUs", "cpu": "CPUs"}


class FilterError(ValueError):
    """A bad ``?level=&domain=``: ``field`` names the parameter, the message says why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


def main_resource(rows: list[dict]) -> str:
    """GPUs when any node has them (they are what gangs wait for), else CPU."""
    return GPU if any((row["node"].allocatable or {}).get(GPU) for row in rows) else "cpu"


def topology_view(rows: list[dict], params) -> dict:
    """The heat maps, each row's domains (``row["domains"]``), the rows the filter keeps, and
    the filter's error (a ``FilterError``; then every row is kept).

    A level whose every domain holds a single node (the host level) gets no heat map: the node
    table is that map already. Free counts only ready, uncordoned nodes (what a gang could get);
    used and capacity count every node, as the node bars do.
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
        return {"maps": [], "rows": rows, "levels": [], "filter": None, "error": problem}
    domains = domains_by_node((row["node"] for row in rows), keys)
    resource = main_resource(rows)
    # One pass: per level key, per domain, [capacity, used, free, nodes].
    sums: dict[str, dict[str, list[int]]] = {key: defaultdict(lambda: [0, 0, 0, 0]) for key in keys}
    for row in rows:
        node = row["node"]
        row["domains"] = domains[node.name]
        cap = int((node.allocatable or {}).get(resource, 0))
        use = int(row["used"].get(resource, 0))
        free = max(cap - use, 0) if node.ready and not node.unschedulable else 0
        for key, domain in row["domains"].items():
            if domain is not None:
                cell = sums[key][domain]
                cell[0] += cap
                cell[1] += use
                cell[2] += free
                cell[3] += 1
    maps = []
    for name, levels in tops:
        shown = [_level_map(level, sums[level.key], resource, chosen) for level in levels]
        maps.append({"topology": name, "levels": [m for m in shown if m is not None]})
    if chosen:
        key, domain = chosen
        rows = [row for row in rows if row["domains"].get(key) == domain]
    # The table's domain columns: the levels that have a heat map, each once.
    columns = list({lvl["key"]: lvl for m in maps for lvl in m["levels"]}.values())
    for row in rows:
        row["domain_list"] = [row["domains"].get(column["key"]) for column in columns]
    return {"maps": maps, "rows": rows, "levels": columns, "filter": chosen, "error": problem}


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


def _level_map(level: Level, cells: dict[str, list[int]], resource: str, chosen) -> dict | None:
    if not cells or all(n == 1 for *_, n in cells.values()):
        return None
    unit = UNITS.get(resource, resource)
    out = []
    for domain in sorted(cells):
        cap, use, free, nodes = cells[domain]
        pct = min(100, round(100 * use / cap)) if cap else 0
        text = (
            f"{format_quantity(resource, free)} free, {format_quantity(resource, use)} used "
            f"of {format_quantity(resource, cap)} {unit}"
            if cap
            else f"no {unit}"
        )
        out.append(
            {"domain": domain, "capacity": cap, "used": use, "free": free, "nodes": nodes, "pct": pct,
             "heat": str(min(10, pct // 10)) if cap else "none", "text": text,
             "free_text": format_quantity(resource, free), "used_text": format_quantity(resource, use),
             "current": chosen == (level.key, domain)}
        )  # fmt: skip
    return {"key": level.key, "label": level.label, "unit": unit, "cells": out}
