"""The fullest node with room for every copy of a shape, without looking at every node.

Bin-packing gives all of a gang's copies to one node when one takes them all: the node with the
least of the dominant resource left after placing, relative to its capacity, the lowest index
among equals (``placement.whole_fit``, which compares every node). On 65,000 nodes that scan is
most of a gang's cost, and a cycle tries a thousand gangs.

Nodes of one capacity (a kind, ``ClusterState.kinds``) compare by what they have free of the
dominant resource alone. So, per kind and resource, the nodes are kept sorted by that free amount
(then by index): the answer for the kind is the first node of that order, from the first with
enough of the dominant resource, that the mask lets and that has room in every other resource
too, found by scanning the order in growing chunks. The kinds' answers are then compared as
``whole_fit`` compares nodes.

Placements change a few nodes at a time. A changed node is marked (its place in the orders is
stale): the scans pass over it and it is judged on its own, from the free capacity as it is. Past
``REBUILD_AFTER`` marked nodes the orders are dropped and sorted again when next needed. The answer
is ``whole_fit``'s, node for node (``tests/engine/test_free_index.py``).
"""

from __future__ import annotations

import numpy as np

#: Changed nodes judged one by one before the orders are sorted again.
REBUILD_AFTER = 512


class FreeIndex:
    def __init__(self, members: list[np.ndarray], nodes: int) -> None:
        self.members = members  # per kind, its nodes (ascending)
        self._orders: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._changed = np.zeros(nodes, bool)
        self._changed_nodes = np.zeros(REBUILD_AFTER, np.int64)  # the first ``_count`` of them
        self._count = 0
        self._shapes: dict[int, tuple[np.ndarray, list[int], int]] = {}  # by id(request): ``_shape``

    def changed(self, nodes: np.ndarray) -> None:
        """The free capacity of ``nodes`` changed."""
        new = nodes[~self._changed[nodes]]
        if not new.size:
            return
        if self._count + new.size > REBUILD_AFTER:
            self.reset()
            return
        self._changed[new] = True
        self._changed_nodes[self._count : self._count + new.size] = new
        self._count += new.size

    def reset(self) -> None:
        """Every order is stale (the free capacity was rebuilt): sort again when needed."""
        self._orders.clear()
        self._changed[:] = False
        self._count = 0

    def whole(
        self,
        free: np.ndarray,
        alloc: np.ndarray,
        request: np.ndarray,
        need: int,
        mask: np.ndarray,
        scale: np.ndarray,
        admitted: list[bool],
    ) -> int:
        """``placement.whole_fit`` over every node: the node that takes all ``need`` copies, or -1."""
        columns, dominant = self._shape(request, scale)
        wanted = [need * amount for amount in request[columns].tolist()]
        wanted_dominant = need * int(request[dominant])
        # Each other requested resource's free column (a view: the free capacity is column-major)
        # and the amount wanted of it; the dominant one is settled by where the scan starts.
        rooms = [(free[:, c], w) for c, w in zip(columns, wanted, strict=True) if c != dominant]
        found = []
        for kind in range(len(self.members)):
            if admitted[kind]:
                order, values = self._order(kind, dominant, free)
                node = self._scan(order, int(values.searchsorted(wanted_dominant)), rooms, mask)
                if node >= 0:
                    found.append(node)
        if self._count:
            # The nodes changed since the orders were sorted, judged on their own.
            changed = self._changed_nodes[: self._count]
            ok = mask[changed]
            for column, amount in zip(columns, wanted, strict=True):
                ok &= free[changed, column] >= amount
            found.extend(changed[ok].tolist())
        if len(found) <= 1:
            return found[0] if found else -1
        # As ``whole_fit``: the least left after placing, then the lowest index.
        nodes = np.array(found, np.int64)
        left = (free[nodes, dominant] - wanted_dominant) / np.maximum(alloc[nodes, dominant], 1)
        return int(nodes[np.lexsort((nodes, left))[0]])

    def _shape(self, request: np.ndarray, scale: np.ndarray) -> tuple[list[int], int]:
        """The requested columns and the dominant one, once per request row (rows are cached
        per shape by ``ClusterState.vector_of``, so the same object comes back)."""
        found = self._shapes.get(id(request))
        if found is None or found[0] is not request:
            found = (request, np.flatnonzero(request > 0).tolist(), int(np.argmax(request / scale)))
            self._shapes[id(request)] = found
        return found[1], found[2]

    def _order(self, kind: int, column: int, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found = self._orders.get((kind, column))
        if found is None:
            nodes = self.members[kind]
            values = free[nodes, column]
            ranked = np.argsort(values, kind="stable")  # equal amounts stay in index order
            found = self._orders[(kind, column)] = (nodes[ranked], values[ranked])
        return found

    def _scan(self, order: np.ndarray, start: int, rooms: list, mask: np.ndarray) -> int:
        """The first node of ``order`` from ``start`` not changed, let by the mask, with room."""
        size = 64
        changed = self._changed
        while start < order.size:
            chunk = order[start : start + size]
            ok = mask[chunk]
            ok &= ~changed[chunk]
            for room, wanted in rooms:
                ok &= room[chunk] >= wanted
            if ok.any():
                return int(chunk[ok.argmax()])
            start += chunk.size
            size *= 4
        return -1


def node_kinds(alloc: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], np.ndarray]:
    """Nodes by capacity: each node's kind, the distinct capacity rows, the nodes of each kind
    (ascending; none listed past 8 kinds) and each node's rank among them."""
    rows, kind = np.unique(alloc, axis=0, return_inverse=True)
    kind = kind.reshape(-1)
    members = [np.flatnonzero(kind == k) for k in range(len(rows))] if len(rows) <= 8 else []
    rank = np.zeros(len(kind), np.int64)
    for nodes in members:
        rank[nodes] = np.arange(nodes.size)
    return kind, rows, members, rank
