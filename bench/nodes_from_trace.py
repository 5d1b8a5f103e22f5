#!/usr/bin/env python
"""A real cluster's node list as ``v1 Node`` manifests, for ``manage.py apply -f`` or
``make run NODES=nodes.yaml``.

    python bench/nodes_from_trace.py traces/alibaba-openb-gpu-nodes-sample.csv > nodes.yaml

Reads a CSV with ``sn`` (the node's name), ``cpu_milli``, ``memory_mib``, ``gpu`` (count) and
``model`` (GPU model) columns, as Alibaba's cluster-trace-gpu-v2023 ``openb_node_list`` has.
Each node gets ``status.allocatable`` (cpu, memory, ``nvidia.com/gpu`` when it has GPUs, 110
pods) and the label ``gpu-model`` (nodes without GPUs: none), so node selectors can target a
model, and the topology labels of ``scheduler_core/simulation/rack_labels.py``: in list order, 8
nodes a rack (``topology.gangsched.io/rack: rack-0000``, ...) and 4 racks a block
(``topology.gangsched.io/block: block-000``, ...), plus ``kubernetes.io/hostname``, the levels a
Kueue/KAI ``Topology`` names (``--limit`` keeps the first nodes' racks as they are).
``--taint-gpu`` taints GPU nodes ``nvidia.com/gpu=present:NoSchedule`` as GKE and AKS do.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scheduler_core.simulation.rack_labels import rack_labels  # noqa: E402  (the repository's root, above)


def node_name(raw: str) -> str:
    """An RFC 1123 name: lowercase, other characters become '-'."""
    name = re.sub(r"[^a-z0-9.-]+", "-", raw.strip().lower()).strip("-.")
    return name or "node"


def node(row: dict[str, str], *, taint_gpu: bool, position: int = 0) -> dict:
    gpus = int(float(row.get("gpu") or 0))
    allocatable = {
        "cpu": f"{int(float(row['cpu_milli']))}m",
        "memory": f"{int(float(row['memory_mib']))}Mi",
        "pods": "110",
    }
    labels = {**rack_labels(position, node_name(row["sn"])), "type": "kwok"}
    spec: dict = {}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
        model = (row.get("model") or "").strip()
        if model:
            labels["gpu-model"] = model
        if taint_gpu:
            spec["taints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    manifest = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name(row["sn"]), "labels": labels},
        "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
    }
    if spec:
        manifest["spec"] = spec
    return manifest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="the node list (CSV)")
    parser.add_argument("--limit", type=int, help="only the first N nodes")
    parser.add_argument("--taint-gpu", action="store_true", help="taint GPU nodes (NoSchedule)")
    args = parser.parse_args()
    with open(args.csv, newline="") as handle:
        rows = list(csv.DictReader(handle))[: args.limit]
    nodes = [node(row, taint_gpu=args.taint_gpu, position=i) for i, row in enumerate(rows)]
    yaml.safe_dump_all(nodes, sys.stdout, sort_keys=False, explicit_start=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
