"""A small world with racks and blocks for the topology tests.

``fleet("b0:r0=4,r1=2 b1:r2=4")`` builds nodes named ``<rack>-h<i>`` labelled with their block,
rack and hostname; amounts are whole CPUs, GiB and GPUs as in ``tests/engine/world.py``.
"""

from __future__ import annotations

import dataclasses

from scheduler_core.engine import Snapshot, Topology, TopologyConstraint

from ..world import node, snapshot

BLOCK = "example.com/block"
RACK = "example.com/rack"
HOST = "kubernetes.io/hostname"
TOPOLOGY = Topology("default", (BLOCK, RACK, HOST))


def fleet(spec: str, cpu: float = 8, gpu: int = 8, **kwargs) -> tuple:
    """Nodes per rack per block, from ``"b0:r0=4,r1=2 b1:r2=4"``."""
    out = []
    for block_spec in spec.split():
        block, racks = block_spec.split(":")
        for rack_spec in racks.split(","):
            rack, count = rack_spec.split("=")
            for i in range(int(count)):
                name = f"{rack}-h{i}"
                labels = {BLOCK: block, RACK: rack, HOST: name}
                out.append(node(name, cpu=cpu, gpu=gpu, labels=labels, **kwargs))
    return tuple(out)


def labelled(name: str, labels: dict, cpu: float = 8, gpu: int = 0, **kwargs):
    return node(name, cpu=cpu, gpu=gpu, labels={**labels, HOST: name}, **kwargs)


def required(level: str, topology: str | None = None) -> TopologyConstraint:
    return TopologyConstraint(required=level, topology=topology)


def preferred(level: str, topology: str | None = None) -> TopologyConstraint:
    return TopologyConstraint(preferred=level, topology=topology)


def world(nodes=(), pods=(), gangs=(), groups=(), topologies=(TOPOLOGY,), **kwargs) -> Snapshot:
    return dataclasses.replace(snapshot(nodes, pods, gangs, groups), topologies=tuple(topologies), **kwargs)


def label_of(snapshot: Snapshot, node_name: str, level: str) -> str | None:
    return next(n.labels.get(level) for n in snapshot.nodes if n.name == node_name)


def domains_of(snapshot: Snapshot, result, gang_key: str, level: str) -> set:
    """The domains of ``level`` the gang's binds landed in (as label-value paths)."""
    nodes = {n.name: n for n in snapshot.nodes}
    levels = TOPOLOGY.levels[: TOPOLOGY.levels.index(level) + 1] if level in TOPOLOGY.levels else (level,)
    return {
        tuple(nodes[b.node].labels.get(key) for key in levels) for b in result.binds if b.gang == gang_key
    }
