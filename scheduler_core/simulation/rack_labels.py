"""Rack and block labels for clusters that have none: the replay's clusters and the node lists
turned into manifests.

A trace's node list (Alibaba's ``openb`` list, the ``n32g4`` preset, a ``1000x{...}`` spec) says
nothing about the network, yet topology-aware placement can only be measured on a cluster with
racks. So racks and blocks are given by one fixed rule, in node-list order: nodes 0-7 are rack 0,
8-15 rack 1, ...; racks 0-3 are block 0, 4-7 block 1, ... Eight nodes a rack is a rack of 8-GPU
servers under one leaf switch (a DGX H100 rack holds 4, an HGX rack of air-cooled servers 8);
four racks a block is 32 nodes, the size of an NVIDIA DGX SuperPOD scalable unit (32 nodes
behind one set of leaf switches), the usual unit of a GPU cluster's fabric. The last rack and
block may be short.

The labels (``topology.gangsched.io/block``, ``topology.gangsched.io/rack``, and
``kubernetes.io/hostname`` = the node's name) are the levels of ``LEVELS``, widest first: a
Kueue/KAI ``Topology`` with these levels is what the replay gives the engine. Plain Python, so
``bench/nodes_from_trace.py`` imports it without Django.
"""

from __future__ import annotations

HOSTNAME_LABEL = "kubernetes.io/hostname"
RACK_LABEL = "topology.gangsched.io/rack"
BLOCK_LABEL = "topology.gangsched.io/block"
#: Widest first, as Kueue's and KAI-Scheduler's ``Topology`` list them.
LEVELS = (BLOCK_LABEL, RACK_LABEL, HOSTNAME_LABEL)
#: The name of the topology the replay builds from these levels.
TOPOLOGY_NAME = "racks"
NODES_PER_RACK = 8
RACKS_PER_BLOCK = 4


def rack_labels(position: int, hostname: str) -> dict[str, str]:
    """The block, rack and hostname labels of the node at ``position`` (0-based) in list order."""
    rack = position // NODES_PER_RACK
    return {
        BLOCK_LABEL: f"block-{rack // RACKS_PER_BLOCK:03d}",
        RACK_LABEL: f"rack-{rack:04d}",
        HOSTNAME_LABEL: hostname,
    }
