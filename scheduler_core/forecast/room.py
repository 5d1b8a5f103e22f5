"""The free room of a forward run's nodes, to skip the cycles that cannot start anything.

A run jumps from one end of a running pod to the next. Most ends free room that no waiting
gang can use yet (a 64-pod gang waits for 64 places, not one): a cycle there would place
nothing. ``Room`` keeps what the pods bound or reserved take from each node, as a matrix, and
``may_start`` answers, for the waiting gangs, whether any could possibly be placed now: all of
the members it still needs (``min_member`` less those bound) as copies of its pods' requests on
the free room, counted node by node, or one member for a NonStrict gang (it reserves what fits).
It honours the engine's node filters (readiness, cordons, taints, selectors, affinity) but not
topology or the queues, so it says yes too often
(then the cycle runs and places nothing), never no where a cycle could place something on the
nodes' resources. Preemption is the one thing it does not see: a cycle that could only preempt
is skipped until room frees where a gang fits (see docs/forecasts.md).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from scheduler_core.engine.filters import NodeFilter, constraint_key
from scheduler_core.engine.model import Node, Pod

#: A node that declares no pod count takes any number of pods.
_NO_LIMIT = np.iinfo(np.int64).max // 4


class Room:
    def __init__(self, nodes: Sequence[Node], pods: Iterable[Pod]) -> None:
        names = sorted({name for node in nodes for name in node.allocatable} | {"pods"})
        self.column = {name: i for i, name in enumerate(names)}
        self.node_index = {node.name: i for i, node in enumerate(nodes)}
        self.alloc = np.zeros((len(nodes), len(names)), np.int64)
        for i, node in enumerate(nodes):
            for name, amount in node.allocatable.items():
                self.alloc[i, self.column[name]] = amount
            if "pods" not in node.allocatable:
                self.alloc[i, self.column["pods"]] = _NO_LIMIT
        self.used = np.zeros_like(self.alloc)
        self.filter = NodeFilter(nodes)
        self._rows: dict[tuple, np.ndarray] = {}
        # (ids of a pod's requests, tolerations, selector, affinity) -> (row, node mask, the
        # objects themselves, kept so that their ids are not reused).
        self._shapes: dict[tuple[int, ...], tuple] = {}
        self._canonical: dict[tuple, tuple] = {}  # by content: (node indexes, columns, amounts)
        for pod in pods:
            where = pod.node or pod.reserved_node
            if where is not None:
                self.take(pod.requests, where, 1)

    def copy(self) -> Room:
        """A room of its own to change, from the same nodes and pods: each forward run takes
        and frees on its own, and building one walks every pod. What depends on the nodes alone
        (capacity, filters, request rows and shapes, by content) is shared."""
        twin = copy.copy(self)
        twin.used = self.used.copy()
        return twin

    def row(self, requests: Mapping[str, int]) -> np.ndarray | None:
        """A request as a row (one pod counted); None: it names a resource no node has."""
        key = tuple(sorted(requests.items()))
        row = self._rows.get(key)
        if row is None and key not in self._rows:
            row = np.zeros(len(self.column), np.int64)
            row[self.column["pods"]] = 1
            for name, amount in key:
                if amount and name not in self.column:
                    row = None
                    break
                if amount:
                    row[self.column[name]] = amount
            self._rows[key] = row
        return row

    def take(self, requests: Mapping[str, int], node: str, sign: int) -> None:
        """A pod bound or reserved on ``node`` (``sign`` 1), or gone from it (-1)."""
        index = self.node_index.get(node)
        row = self.row(requests)
        if index is not None and row is not None:
            self.used[index] += sign * row

    def shape(self, pod: Pod) -> tuple | None:
        """(request row, nodes whose filters admit the pod); None: no node could take it."""
        key = (id(pod.requests), id(pod.tolerations), id(pod.node_selector), id(pod.affinity))
        found = self._shapes.get(key)
        if found is None:
            row = self.row(pod.requests)
            content = (tuple(sorted(pod.requests.items())), constraint_key(pod))
            shape = self._canonical.get(content)
            if shape is None and row is not None:
                wanted = row > 0
                shape = (np.flatnonzero(self.filter.mask(pod)), wanted, row[wanted])
                self._canonical[content] = shape
            found = (shape, pod.requests, pod.tolerations, pod.node_selector, pod.affinity)
            self._shapes[key] = found
        return found[0]

    def copies(self, shape: tuple, free: np.ndarray) -> int:
        nodes, wanted, row = shape
        return int(np.maximum((free[nodes][:, wanted] // row).min(axis=1, initial=_NO_LIMIT), 0).sum())

    def groups(self, pods: Iterable[Pod]) -> tuple[tuple[tuple, int], ...]:
        """The pods' shapes (``shape``), each with how many of the pods have it; pods no node
        could take are left out."""
        counts: dict[int, tuple[tuple, int]] = {}
        for pod in pods:
            shape = self.shape(pod)
            if shape is None:
                continue
            entry = counts.get(id(shape))
            counts[id(shape)] = (shape, entry[1] + 1 if entry else 1)
        return tuple(counts.values())

    def may_start(
        self,
        waiting: Iterable[tuple[int, bool, Sequence[tuple[tuple, int]]]],
        memo: dict | None = None,
    ) -> bool:
        """``waiting``: (members still needed, NonStrict?, its pending pods' ``groups``).
        ``memo``: copies per shape, valid while the room does not change."""
        memo = {} if memo is None else memo
        if "free" not in memo:
            memo["free"] = self.alloc - self.used
        free = memo["free"]
        for need, partial, groups in waiting:
            fits = 0
            for shape, count in groups:
                key = id(shape)
                if key not in memo:
                    memo[key] = self.copies(shape, free)
                fits += min(memo[key], count)
            if fits >= (1 if partial else max(need, 1)):
                return True
        return False
