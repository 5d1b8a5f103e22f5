"""The cluster as numpy arrays: one row per node, one column per resource.

The engine never walks nodes in Python during a cycle; it works on ``alloc`` and ``used``
(int64, canonical units) so that a gang of 1,000 members over 5,000 nodes is a few vector ops.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from .model import Pod, Snapshot

#: A node that does not declare ``pods`` capacity is not limited by pod count.
UNLIMITED = np.int64(1) << np.int64(50)


class ClusterState:
    """Capacity and usage of every node of a snapshot, with the resource columns it needs.

    ``used`` counts bound pods and held reservations; pods on nodes that are gone count nowhere.
    """

    def __init__(self, snapshot: Snapshot) -> None:
        names: set[str] = {"pods"}
        for node in snapshot.nodes:
            names.update(node.allocatable)
        for pod in snapshot.pods:
            names.update(pod.requests)
        self.resources: tuple[str, ...] = tuple(sorted(names))
        self.column = {name: i for i, name in enumerate(self.resources)}
        self.node_names: tuple[str, ...] = tuple(node.name for node in snapshot.nodes)
        self.node_index = {name: i for i, name in enumerate(self.node_names)}
        self.alloc = np.zeros((len(self.node_names), len(self.resources)), dtype=np.int64)
        pods_col = self.column["pods"]
        for i, node in enumerate(snapshot.nodes):
            for name, amount in node.allocatable.items():
                self.alloc[i, self.column[name]] = amount
            if "pods" not in node.allocatable:
                self.alloc[i, pods_col] = UNLIMITED
        self.used = np.zeros_like(self.alloc)
        # The largest capacity of each resource: the yardstick for "how big is this pod".
        self.scale = np.maximum(self.alloc.max(axis=0), 1) if len(self.node_names) else np.ones(len(names))
        self._vectors: dict[tuple, np.ndarray] = {}
        self._by_identity: dict[int, np.ndarray] = {}
        self._keep_alive: list = []  # ids stay valid only while their objects live
        # One row per snapshot pod, and where it sits (-1: nowhere), so that actions needing
        # the usage of many pods index these arrays instead of walking pods in Python.
        pods = snapshot.pods
        empty = np.zeros((0, len(self.resources)), np.int64)
        self.pod_rows = np.stack([self.vector(pod) for pod in pods]) if pods else empty
        self.pod_where = np.fromiter(
            (self.node_index.get(pod.node or pod.reserved_node, -1) for pod in pods),
            dtype=np.int64,
            count=len(pods),
        )
        self.pod_position = {id(pod): i for i, pod in enumerate(pods)}
        placed = self.pod_where >= 0
        np.add.at(self.used, self.pod_where[placed], self.pod_rows[placed])

    @property
    def free(self) -> np.ndarray:
        return self.alloc - self.used

    def vector(self, pod: Pod) -> np.ndarray:
        """The pod's request as a row; every pod also takes one of its node's ``pods``.

        Cached by content: members of a gang mostly share one request, so a 1,000-pod gang
        builds one array, not 1,000.
        """
        # First by identity: snapshots share one requests mapping among the members of a gang
        # (snapshot.py decodes each distinct JSON once), so most lookups stop here.
        cached = self._by_identity.get(id(pod.requests))
        if cached is not None:
            return cached
        key = tuple(pod.requests.items())
        cached = self._vectors.get(key)
        if cached is None:
            cached = self.requests_vector(pod.requests)
            cached[self.column["pods"]] = 1
            cached.flags.writeable = False
            self._vectors[key] = cached
        self._by_identity[id(pod.requests)] = cached
        self._keep_alive.append(pod.requests)
        return cached

    def requests_vector(self, requests: Mapping[str, int]) -> np.ndarray:
        row = np.zeros(len(self.resources), dtype=np.int64)
        for name, amount in requests.items():
            column = self.column.get(name)
            if column is not None:
                row[column] = amount
        return row

    def usage_of(self, pods: Iterable[Pod]) -> np.ndarray:
        """Per-node usage (N x R) of the given pods where they are bound or reserved."""
        usage = np.zeros_like(self.alloc)
        for pod in pods:
            where = pod.node if pod.node is not None else pod.reserved_node
            index = self.node_index.get(where) if where is not None else None
            if index is not None:
                usage[index] += self.vector(pod)
        return usage

    def describe(self, row: np.ndarray) -> dict[str, int]:
        """A request row back as {resource: amount}, without the implicit pod count."""
        return {name: int(row[i]) for i, name in enumerate(self.resources) if row[i] and name != "pods"}
