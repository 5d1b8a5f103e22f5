"""The normalized form of every topology format, before anything is written.

Kueue's and KAI-Scheduler's ``Topology`` become a ``TopologySpec`` (``engine.model.Topology``
one to one); Volcano's ``HyperNode`` a ``HyperNodeSpec``. ``services/topology.py`` checks them
as a whole and writes the rows; ``field`` is the path of what declared each, so an error found
then still names it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class TopologySpec:
    """A Kueue or KAI ``Topology``: node-label keys, widest level first."""

    name: str
    levels: list[str]
    source_format: str  # "kueue", "kai"
    field: str  # where it was declared, e.g. "items[0].metadata.name"
    levels_field: str  # "items[0].spec.levels"
    declaration: dict[str, Any] = field(default_factory=dict)


@dataclass
class HyperNodeSpec:
    """A Volcano ``HyperNode``: a tier-numbered group of nodes or of lower-tier HyperNodes."""

    name: str
    tier: int
    members: list[dict[str, Any]]  # as declared: [{"type": "Node", "selector": {...}}]
    field: str
    members_field: str
    tier_name: str = ""
    declaration: dict[str, Any] = field(default_factory=dict)
