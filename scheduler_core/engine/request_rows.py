"""Requests as rows of the cluster state's resource columns, and back (``ClusterState``'s part
that turns pods' request mappings into numpy rows)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from .model import Pod


class RequestRows:
    """Needs ``resources``, ``column``, ``alloc``, ``node_index`` and the caches ``_vectors``,
    ``_by_identity`` and ``_keep_alive`` (``ClusterState`` builds or carries them)."""

    resources: tuple[str, ...]
    column: dict[str, int]
    alloc: np.ndarray
    node_index: dict[str, int]
    _vectors: dict[tuple, np.ndarray]
    _by_identity: dict[int, np.ndarray]
    _keep_alive: list

    def vector(self, pod: Pod) -> np.ndarray:
        """The pod's request as a row; every pod also takes one of its node's ``pods``.

        Cached by content: members of a gang mostly share one request, so a 1,000-pod gang
        builds one array, not 1,000.
        """
        return self.vector_of(pod.requests)

    def vector_of(self, requests: Mapping[str, int]) -> np.ndarray:
        """``vector`` of a requests mapping."""
        # First by identity: snapshots share one requests mapping among the members of a gang
        # (snapshot/build.py decodes each distinct JSON once), so most lookups stop here.
        cached = self._by_identity.get(id(requests))
        if cached is not None:
            return cached
        key = tuple(requests.items())
        cached = self._vectors.get(key)
        if cached is None:
            cached = self.requests_vector(requests)
            cached[self.column["pods"]] = 1
            cached.flags.writeable = False
            self._vectors[key] = cached
        self._by_identity[id(requests)] = cached
        self._keep_alive.append(requests)
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
