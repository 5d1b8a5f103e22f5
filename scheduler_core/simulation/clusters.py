"""Clusters to replay on: a compact spec, a named preset, or a node list CSV.

* Spec: ``1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8}``; several groups joined by ``+``
  (``32x{cpu=40,memory=256Gi,nvidia.com/gpu=4}+8x{cpu=96,memory=768Gi}``). Amounts are Kubernetes
  quantities, parsed exactly as the engine parses node allocatable.
* Presets: ``n32g4``, the cluster the Tiresias trace was measured on (32 nodes x 4 GPUs, 40 CPUs,
  256 GB).
* A node list CSV in the Alibaba ``openb`` format (``sn,cpu_milli,memory_mib,gpu,model``); the
  GPU model becomes the node label ``gpu-model`` so node selectors can target it.

Every node also gets block, rack and hostname labels by ``scheduler_core/simulation/rack_labels.py``'s rule
(8 nodes a rack, 4 racks a block, in list order), so topology-aware placement can be measured.

Errors are ``ClusterSpecError`` with the reason (and the line, for a CSV).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from scheduler_core.engine.model import Node
from scheduler_core.engine.quantity import QuantityError, canonical_amount
from scheduler_core.simulation.rack_labels import rack_labels

PRESETS = {"n32g4": "32x{cpu=40,memory=256Gi,nvidia.com/gpu=4}"}
OPENB_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
GPU_MODEL_LABEL = "gpu-model"
MAX_NODES = 100_000
_GROUP = re.compile(r"^\s*(\d+)\s*x\s*\{([^{}]*)\}\s*$")
_RESOURCE_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$")


class ClusterSpecError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str  # the spec or file name it came from, for the results
    nodes: tuple[Node, ...]

    def capacity(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for node in self.nodes:
            for resource, amount in node.allocatable.items():
                total[resource] = total.get(resource, 0) + amount
        return total


def load_cluster(spec: str) -> Cluster:
    """A preset name, a path to a node list CSV, or a spec."""
    spec = spec.strip()
    if spec in PRESETS:
        return Cluster(spec, parse_spec(PRESETS[spec]).nodes)
    if spec.lower().endswith(".csv"):
        return load_node_csv(spec)
    return parse_spec(spec)


def parse_spec(spec: str) -> Cluster:
    if not spec.strip():
        raise ClusterSpecError("the cluster spec is empty: expected e.g. 1000x{cpu=64,memory=512Gi}")
    nodes: list[Node] = []
    for number, text in enumerate(spec.split("+"), start=1):
        match = _GROUP.match(text)
        if match is None:
            raise ClusterSpecError(
                f"group {number} {text.strip()!r} is not COUNTx{{resource=amount,...}} "
                "(e.g. 1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8})"
            )
        count = int(match.group(1))
        if count < 1:
            raise ClusterSpecError(f"group {number}: the node count must be at least 1")
        allocatable = _resources(number, match.group(2))
        first = len(nodes)
        if first + count > MAX_NODES:
            raise ClusterSpecError(f"more than {MAX_NODES:,} nodes")
        for i in range(count):
            name = f"g{number}-n{i:05d}"
            nodes.append(Node(name, allocatable, rack_labels(first + i, name)))
    return Cluster(spec.strip(), tuple(nodes))


def _resources(number: int, body: str) -> dict[str, int]:
    allocatable: dict[str, int] = {}
    for item in body.split(","):
        if not item.strip():
            continue
        name, sep, amount = item.partition("=")
        name, amount = name.strip(), amount.strip()
        if not sep or not name or not amount:
            raise ClusterSpecError(f"group {number}: {item.strip()!r} is not resource=amount")
        if not _RESOURCE_NAME.match(name):
            raise ClusterSpecError(f"group {number}: {name!r} is not a resource name")
        if name in allocatable:
            raise ClusterSpecError(f"group {number}: {name} is given twice")
        try:
            allocatable[name] = canonical_amount(name, amount)
        except QuantityError as error:
            raise ClusterSpecError(f"group {number}: {error}") from error
    if not allocatable:
        raise ClusterSpecError(f"group {number}: no resources given")
    return allocatable


def load_node_csv(path: str | Path) -> Cluster:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise ClusterSpecError(f"cannot read the node list {path}: {error.strerror or error}") from error
    rows = list(csv.reader(text.splitlines()))
    if not rows or tuple(cell.strip() for cell in rows[0]) != OPENB_COLUMNS:
        raise ClusterSpecError(f"{path.name}: line 1: expected the header {','.join(OPENB_COLUMNS)}")
    nodes: list[Node] = []
    names: set[str] = set()
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(OPENB_COLUMNS):
            raise ClusterSpecError(
                f"{path.name}: line {number}: expected {len(OPENB_COLUMNS)} fields, found {len(row)}"
            )
        name, cpu, memory, gpu, model = (cell.strip() for cell in row)
        try:
            allocatable = {"cpu": int(cpu), "memory": int(memory) * 2**20}
            if int(gpu):
                allocatable["nvidia.com/gpu"] = int(gpu)
        except ValueError:
            raise ClusterSpecError(
                f"{path.name}: line {number}: cpu_milli, memory_mib and gpu must be whole numbers"
            ) from None
        if not name or name in names or min(allocatable.values()) < 0:
            raise ClusterSpecError(f"{path.name}: line {number}: empty, repeated or negative field")
        names.add(name)
        labels = rack_labels(len(nodes), name)
        if model:
            labels[GPU_MODEL_LABEL] = model
        nodes.append(Node(name, allocatable, labels))
    if not nodes:
        raise ClusterSpecError(f"{path.name}: no nodes")
    return Cluster(path.name, tuple(nodes))
