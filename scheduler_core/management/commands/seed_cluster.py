"""Fill the simulated cluster with a mixed CPU/GPU fleet, so a fresh `make run` has somewhere to
schedule. The shape (N=16: 12 CPU nodes and 4 GPU nodes) is a small training cluster:

- ``cpu-NN``: cpu 32, memory 128Gi, pods 110; labels ``node-pool=cpu``;
- ``gpu-NN``: cpu 64, memory 512Gi, nvidia.com/gpu 8, pods 110; labels ``node-pool=gpu``,
  ``gpu-model=a100``; tainted ``nvidia.com/gpu=present:NoSchedule``, as GKE and AKS taint GPU
  pools, so only pods that tolerate it (the demo's GPU pods do) land on the expensive nodes.

A quarter of the nodes (rounded down) are GPU nodes. Names are fixed, so running it again adds
only the nodes that are missing; ``--if-empty`` does nothing at all if any node exists.

Topology, so the demo shows it: racks of ``NODES_PER_RACK`` nodes, ``RACKS_PER_BLOCK``
racks to a block, per pool, in name order: ``cpu-NN`` is in rack ``cpu-rack-RR`` with
RR = (NN - 1) // 4 + 1 and block ``cpu-block-BB`` with BB = (RR - 1) // 2 + 1, ``gpu-NN`` likewise
in ``gpu-rack-RR`` and ``gpu-block-BB`` (labels ``topology.gangsched.io/rack`` and
``topology.gangsched.io/block``, plus ``kubernetes.io/hostname`` as the kubelet sets it). A node's
place depends on its name only, so seeding more nodes later never moves one. The ``Topology``
``demo`` (block > rack > host) is created with the fleet if it does not exist.

``--nodes-file FILE`` seeds from a ``v1 Node`` manifest instead (as ``manage.py apply -f``
reads it: a file, a directory, ``kind: List``), e.g. one written by ``bench/nodes_from_trace.py``
from a real cluster's node list.
"""

from django.core.management.base import BaseCommand, CommandError

from scheduler_core.declarations import DeclarationError, documents_parse, manifests_apply
from scheduler_core.models import Node, Topology
from scheduler_core.services.nodes import node_add
from scheduler_core.services.topology import topologies_put
from scheduler_core.specs.topology import TopologySpec

from .apply import manifest_files

CPU_NODE = {"cpu": "32", "memory": "128Gi", "pods": "110"}
GPU_NODE = {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
NODES_PER_RACK = 4
RACKS_PER_BLOCK = 2
BLOCK, RACK, HOST = "topology.gangsched.io/block", "topology.gangsched.io/rack", "kubernetes.io/hostname"
DEMO_TOPOLOGY = "demo"


def placed(pool: str, number: int) -> dict[str, str]:
    """The topology labels of node ``<pool>-<number>`` (numbers from 1)."""
    rack = (number - 1) // NODES_PER_RACK
    return {
        BLOCK: f"{pool}-block-{rack // RACKS_PER_BLOCK + 1:02d}",
        RACK: f"{pool}-rack-{rack + 1:02d}",
        HOST: f"{pool}-{number:02d}",
    }


def fleet(count: int) -> list[dict]:
    """The node specs for ``count`` nodes: node_add's keyword arguments."""
    gpus = count // 4
    cpus = count - gpus
    specs = [
        {
            "name": f"cpu-{i:02d}",
            "allocatable": CPU_NODE,
            "labels": {"node-pool": "cpu", **placed("cpu", i)},
        }
        for i in range(1, cpus + 1)
    ]
    specs += [
        {
            "name": f"gpu-{i:02d}",
            "allocatable": GPU_NODE,
            "labels": {
                "node-pool": "gpu",
                "gpu-model": "a100",
                **placed("gpu", i),
            },
            "taints": [GPU_TAINT],
        }
        for i in range(1, gpus + 1)
    ]
    return specs


def demo_topology() -> bool:
    """The demo fleet's Topology, unless one of that name exists (an operator's stays as it is),
    written by the service every Topology manifest goes through (``services/topology.py``)."""
    if Topology.objects.filter(name=DEMO_TOPOLOGY).exists():
        return False
    levels = [BLOCK, RACK, HOST]
    spec = TopologySpec(DEMO_TOPOLOGY, levels, "gangsched", "seed_cluster", "seed_cluster.levels")
    topologies_put([spec], [])
    return True


class Command(BaseCommand):
    help = "Add a mixed CPU/GPU fleet of nodes to the simulated cluster (3 CPU nodes per GPU node)."

    def add_arguments(self, parser):
        parser.add_argument("--nodes", type=int, default=16, help="How many nodes (default 16).")
        parser.add_argument("--if-empty", action="store_true", help="Do nothing if any node exists.")
        parser.add_argument("--nodes-file", help="Seed from this Node manifest (file or directory) instead.")

    def handle(self, *args, nodes: int, if_empty: bool, nodes_file: str | None = None, **options):
        if nodes < 1:
            raise CommandError("--nodes must be at least 1")
        if if_empty and Node.objects.exists():
            self.stdout.write(f"The cluster already has {Node.objects.count()} nodes; nothing to do")
            return
        if nodes_file:
            self._from_file(nodes_file)
            return
        existing = set(Node.objects.values_list("name", flat=True))
        added = [node_add(**spec).name for spec in fleet(nodes) if spec["name"] not in existing]
        topology = "; topology demo: block > rack > host" if demo_topology() else ""
        self.stdout.write(f"Added {len(added)} nodes ({Node.objects.count()} in the cluster){topology}")

    def _from_file(self, target: str) -> None:
        before = Node.objects.count()
        for source in manifest_files([target]):
            try:
                manifests_apply(documents_parse(source.read_bytes()), submitter="seed_cluster")
            except DeclarationError as error:
                where = f"{source}: {error.field}" if error.field else str(source)
                raise CommandError(f"{where}: {error.reason}") from None
        total = Node.objects.count()
        self.stdout.write(f"Added {total - before} nodes from {target} ({total} in the cluster)")
