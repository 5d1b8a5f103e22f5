"""The Nodes page's heat-map sums, grouped in PostgreSQL: per level and domain, the
capacity, use and free room of the main resource and the node count, in one query over the nodes
and their stored usage, so the page does not read 20,000 nodes into Python to add them up.

A level is a node-label key and a node's domain its label's value (``kubernetes.io/hostname``
defaulting to the node's name, as ``topology_domains.node_domain_labels`` says). Volcano's
HyperNodes name no label: their tree is resolved in Python (patterns, label selectors), so with
HyperNodes the page sums in one pass over the nodes instead (``node_domains``).
"""

from __future__ import annotations

from django.db import connection
from django.db.models.expressions import RawSQL

from scheduler_core.models import Node, NodeUsage
from scheduler_core.reads.topology_domains import HOSTNAME

_NODE = Node._meta.db_table


def _domain_sql(table: str, key: str) -> str:
    """A node's domain at level ``key`` (passed as a parameter), ``table`` naming the node row."""
    return f"COALESCE({table}.labels ->> %s, {table}.name)" if key == HOSTNAME else f"{table}.labels ->> %s"


def _grouped(keys: list[str], resource: str, skip: set[int]) -> tuple[list[dict], list[dict], bool]:
    """The sums per level but those in ``skip``, the first node's name per domain, and whether
    any node's hostname label differs from its name (the totals row: no grouping)."""
    sums: list[dict] = [{} for _ in keys]
    first: list[dict] = [{} for _ in keys]
    grouped = [i for i in range(len(keys)) if i not in skip]
    domains = ", ".join(f"{_domain_sql('n', keys[i])} AS d{i}" for i in grouped)
    columns = [f"d{i}" for i in grouped]
    sets = ", ".join([*(f"({column})" for column in columns), "()"])
    # One GROUPING SETS query: a row per (level, domain) and one of totals; GROUPING() says which.
    sql = f"""
        WITH used AS (
            SELECT node, SUM(amount) AS amount FROM {NodeUsage._meta.db_table}
             WHERE resource = %s GROUP BY node
        ), nodes AS (
            SELECT n.name, COALESCE((n.allocatable ->> %s)::numeric, 0) AS cap,
                   COALESCE(u.amount, 0) + COALESCE((n.external_usage ->> %s)::numeric, 0) AS use,
                   n.ready AND NOT n.unschedulable AS open, n.labels ->> %s <> n.name AS renamed
                   {", " + domains if domains else ""}
              FROM {_NODE} n LEFT JOIN used u ON u.node = n.name
        )
        SELECT {"".join(f"GROUPING({column}), {column}, " for column in columns)}
               SUM(cap), SUM(use), SUM(CASE WHEN open THEN GREATEST(cap - use, 0) ELSE 0 END), COUNT(*),
               MIN(name), bool_or(renamed)
          FROM nodes GROUP BY GROUPING SETS ({sets})
    """
    params = [resource, resource, resource, HOSTNAME, *(keys[i] for i in grouped)]
    renamed = False
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for row in cursor.fetchall():
            cap, use, free, count, name, any_renamed = row[2 * len(grouped) :]
            level = next((i for j, i in enumerate(grouped) if row[2 * j] == 0), None)
            if level is None:  # the totals
                renamed = bool(any_renamed)
                continue
            domain = row[2 * grouped.index(level) + 1]
            if domain is None:  # nodes without the label are in no domain of the level
                continue
            sums[level][domain] = [int(cap), int(use), int(free), count]
            first[level][domain] = name
    return sums, first, renamed


def domain_sums(keys: list[str], resource: str, chosen: tuple[str, str] | None) -> tuple[list, list]:
    """Per level (index in ``keys``), per domain: ``[capacity, used, free, nodes]`` (free counts
    ready, uncordoned nodes only; used adds other schedulers' use, ``external_usage``); and per
    level, per domain, the domains at every level of its first node by name (where it sits).

    The hostname level has a domain per node (the kubelet sets it to the node's name): it is
    grouped only if some node's label says otherwise, so 20,000 one-node groups are not made
    and sent to be dropped (a level of one-node domains gets no heat map: left empty here), but
    for the ``chosen`` one (the filter), whose node says where it sits."""
    host = {keys.index(HOSTNAME)} if HOSTNAME in keys else set()
    sums, first, renamed = _grouped(keys, resource, host)
    if renamed:
        sums, first, _ = _grouped(keys, resource, set())
    elif host and chosen and chosen[0] == HOSTNAME:
        first[keys.index(HOSTNAME)][chosen[1]] = chosen[1]  # its own name: no label says otherwise
    names = sorted({name for level in first for name in level.values()})
    where: dict[str, list[str | None]] = {}
    if names:
        picks = ", ".join(_domain_sql("n", key) for key in keys)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT n.name, {picks} FROM {_NODE} n WHERE n.name = ANY(%s)", [*keys, names])
            where = {name: list(domains) for name, *domains in cursor.fetchall()}
    placed = [{domain: where[name] for domain, name in level.items() if name in where} for level in first]
    return sums, placed


def nodes_in(key: str | None, domain: str | None):
    """The nodes of ``domain`` at level ``key`` (every node when None), by name, for paging."""
    nodes = Node.objects.order_by("name")
    if key is None:
        return nodes
    expression = RawSQL(_domain_sql(_NODE, key), [key])
    return nodes.alias(domain_value=expression).filter(domain_value=domain)
