"""Topology manifests as cluster objects on ``Loaded.objects``, written all at once.

``topologies.py`` reads Kueue's and KAI-Scheduler's ``Topology`` into ``TopologySpec`` and
Volcano's ``HyperNode`` into ``HyperNodeSpec``; each is wrapped in an object below with
``object_name`` (kubectl's ``topology.kueue.x-k8s.io/default``), ``write()`` and ``delete()``.
Nothing is written while manifests are loaded: ``apply.py`` calls ``topologies_write`` once,
before the gangs, so that ``services/topology.py`` judges every topology and HyperNode of one
apply together with what is stored (duplicate levels, a cycle of HyperNodes, a member of the
wrong tier) and the gangs of the same apply may name the levels it declares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler_core.specs.topology import HyperNodeSpec, TopologySpec


@dataclass
class TopologyObject:
    spec: TopologySpec
    kind: str  # "topology.kueue.x-k8s.io", "topology.kai.scheduler"
    status: str | None = None  # set by ``topologies_write``

    @property
    def object_name(self) -> str:
        return f"{self.kind}/{self.spec.name}"

    def write(self) -> str:
        return self.status or "unchanged"

    def delete(self) -> str:
        from scheduler_core.services.topology import topology_remove

        topology_remove(self.spec.name)
        return ""


@dataclass
class HyperNodeObject:
    spec: HyperNodeSpec
    kind: str = "hypernode.topology.volcano.sh"
    status: str | None = None

    @property
    def object_name(self) -> str:
        return f"{self.kind}/{self.spec.name}"

    def write(self) -> str:
        return self.status or "unchanged"

    def delete(self) -> str:
        from scheduler_core.services.topology import hypernode_remove

        hypernode_remove(self.spec.name)
        return ""


#: The objects that are topology (``delete -f`` removes them after the gangs that use them).
TOPOLOGY_OBJECTS = (TopologyObject, HyperNodeObject)


def topology_specs(loaded: list[Any]) -> tuple[list[TopologySpec], list[HyperNodeSpec]]:
    """Every Topology and HyperNode spec of one apply's loaded objects, in order."""
    topologies, hypernodes = [], []
    for item in loaded:
        for obj in item.objects:
            if isinstance(obj, TopologyObject):
                topologies.append(obj.spec)
            elif isinstance(obj, HyperNodeObject):
                hypernodes.append(obj.spec)
    return topologies, hypernodes


def topologies_write(loaded: list[Any]) -> None:
    """Check and write every Topology and HyperNode of one apply (``services.topology``); each
    object's ``write`` then reports its own status."""
    from scheduler_core.services.topology import topologies_put

    topologies, hypernodes = topology_specs(loaded)
    if not topologies and not hypernodes:
        return
    statuses = topologies_put(topologies, hypernodes)
    for item in loaded:
        for obj in item.objects:
            if isinstance(obj, TopologyObject):
                obj.status = statuses[("topology", obj.spec.name)]
            elif isinstance(obj, HyperNodeObject):
                obj.status = statuses[("hypernode", obj.spec.name)]
