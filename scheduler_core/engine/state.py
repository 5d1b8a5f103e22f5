"""The cluster as numpy arrays: one row per node, one column per resource.

The engine never walks nodes in Python during a cycle; it works on ``alloc`` and ``used``
(int64, canonical units) so that a gang of 1,000 members over 5,000 nodes is a few vector ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Protocol

import numpy as np

from .free_index import FreeIndex, node_kinds
from .members import GangCodes
from .model import Pod, Snapshot
from .pod_flags import ends_of, pending_of, reserved_of, terminating_of
from .request_rows import RequestRows

#: Nodes per block of the free-capacity summary (``ClusterState._room``).
BLOCK = 64

#: Below this many nodes ``candidates`` does not narrow: whole-array operations over a small
#: cluster cost less than choosing which nodes to look at.
NARROW_FROM = 2048

#: Narrow only while at least this share of the nodes is idle: on a busy cluster the nodes in
#: use are most of the candidates, and keeping the summary cost more than it saved (measured on
#: the 1,000-gang cycles of ``bench/engine.py`` at 5,000 and 20,000 nodes, 85% full).
IDLE_SHARE_TO_NARROW = 0.25

#: A node that does not declare ``pods`` capacity is not limited by pod count.
UNLIMITED = np.int64(1) << np.int64(50)


class Memory(Protocol):
    """What a state may be restored from and kept in between cycles (``carry.Carry``)."""

    def restore(self, state: ClusterState, snapshot: Snapshot) -> bool: ...

    def keep(self, state: ClusterState, snapshot: Snapshot) -> None: ...


class ClusterState(RequestRows):
    """Capacity and usage of every node of a snapshot, with the resource columns it needs.

    ``used`` counts bound pods and held reservations; pods on nodes that are gone count nowhere.
    """

    def __init__(self, snapshot: Snapshot, carry: Memory | None = None) -> None:
        self.pods = snapshot.pods
        self.pod_ids: tuple[np.ndarray, np.ndarray] | None = None  # the pods' ids, sorted too (carry)
        self.pod_used: np.ndarray | None = None  # the pods' usage per node, before the cycle (carry)
        # The node and pod parts come from the previous cycle's state when a carry holds one
        # that still describes this snapshot (``carry.py``), else they are built here.
        if carry is None or not carry.restore(self, snapshot):
            self._build(snapshot)
            if carry is not None:
                carry.keep(self, snapshot)
        if self.pod_used is None:
            self.pod_used = np.zeros_like(self.alloc)
            placed = self.pod_where >= 0
            np.add.at(self.pod_used, self.pod_where[placed], self.pod_rows[placed])
            self.pod_used.flags.writeable = False
        self._used = self.pod_used.copy()
        # Free capacity and the nodes nothing takes from (a bool per node), kept by ``take`` and
        # ``give``, rebuilt after anybody else had ``used`` in hand (None: to rebuild).
        self._pristine: np.ndarray | None = None
        self._free = self._used
        self._room: np.ndarray | None = None
        self._start: list[int] = []  # per kind: no idle node before this rank (``_first_idle``)
        self._position: dict[int, int] | None = None
        self._index: FreeIndex | None = None  # built on first use (``whole``)

    def _build(self, snapshot: Snapshot) -> None:
        pods = snapshot.pods
        # Members of a gang share one requests mapping (snapshot/build.py decodes each distinct JSON
        # once, apply_result keeps them): the pods' rows are built from the distinct mappings.
        requests = [pod.requests for pod in pods]
        identities = list(map(id, requests))
        distinct = dict(zip(identities, requests, strict=True))
        names: set[str] = {"pods"}
        for node in snapshot.nodes:
            names.update(node.allocatable)
        for mapping in distinct.values():
            names.update(mapping)
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
        self.alloc.flags.writeable = False
        self._kinds: tuple | None = None
        self._admits: dict[int, tuple[np.ndarray, list[bool]]] = {}  # ``_admitted``
        # The largest capacity of each resource: the yardstick for "how big is this pod".
        self.scale = np.maximum(self.alloc.max(axis=0), 1) if len(self.node_names) else np.ones(len(names))
        self.scale.flags.writeable = False
        self._vectors: dict[tuple, np.ndarray] = {}
        self._by_identity: dict[int, np.ndarray] = {}
        self._keep_alive: list = []  # ids stay valid only while their objects live
        # One row per snapshot pod, and where it sits (-1: nowhere), so that actions needing
        # the usage of many pods index these arrays instead of walking pods in Python.
        empty = np.zeros((0, len(self.resources)), np.int64)
        table = np.stack([self.vector_of(mapping) for mapping in distinct.values()]) if pods else empty
        code = {identity: i for i, identity in enumerate(distinct)}
        self.pod_rows = table[np.fromiter(map(code.__getitem__, identities), np.int64, len(pods))]
        self.pod_where = self.where_of(pods)
        self.pod_pending = pending_of(pods)
        self.gang_codes = GangCodes()  # per pod, its gang's code (``members.py``)
        self.pod_gang = self.gang_codes.of(pods)
        self.pod_reserved = reserved_of(pods)
        self.pod_end, self.pod_terminating = np.full(len(pods), np.nan), np.zeros(len(pods), bool)
        placed = np.flatnonzero(self.pod_where >= 0)  # only the pods on a node end (pod_flags.py)
        on_nodes = [pods[i] for i in placed.tolist()]
        self.pod_end[placed], self.pod_terminating[placed] = ends_of(on_nodes), terminating_of(on_nodes)
        for array in (self.pod_rows, self.pod_where, self.pod_pending, self.pod_gang, self.pod_reserved):
            array.flags.writeable = False

    def where_of(self, pods: Sequence[Pod]) -> np.ndarray:
        """The node index each pod is bound or reserved on, -1 for none (or a node gone)."""
        located = [pod.node or pod.reserved_node for pod in pods]
        return np.fromiter(map(self.node_index.get, located, repeat(-1)), np.int64, len(pods))

    def pending_pods(self) -> list[Pod]:
        """The snapshot's pending pods (``Pod.pending``), in snapshot order."""
        return list(map(self.pods.__getitem__, np.flatnonzero(self.pod_pending).tolist()))

    @property
    def pod_position(self) -> dict[int, int]:
        """id(pod) -> its row in ``pod_rows``; built on first use (preemption, queues)."""
        if self._position is None:
            self._position = dict(zip(map(id, self.pods), range(len(self.pods)), strict=True))
        return self._position

    @property
    def used(self) -> np.ndarray:
        """Usage per node (N x R). Whoever takes it may change it in place, so the pristine
        nodes are recounted before their next use (``take`` and ``give`` keep them current)."""
        self._pristine = None
        return self._used

    @used.setter
    def used(self, value: np.ndarray) -> None:
        self._pristine = None
        self._used = value

    @property
    def free(self) -> np.ndarray:
        return self.alloc - self._used

    def free_at(self, nodes: np.ndarray) -> np.ndarray:
        """Free capacity of the given nodes only (len(nodes) x R)."""
        self._recount()
        return self._free[nodes]

    def free_all(self) -> np.ndarray:
        """Free capacity of every node (N x R), read-only: it changes with ``take``/``give``."""
        self._recount()
        return self._free

    def _recount(self) -> None:
        """Rebuild the free capacity and the idle nodes after ``used`` was out of our hands."""
        if self._pristine is None:
            # Column-major: a placement reads one resource of many nodes at a time (``whole_fit``).
            column_major = np.empty(self.alloc.shape, np.int64, order="F")
            self._free = np.subtract(self.alloc, self._used, out=column_major)
            self._pristine = ~self._used.any(axis=1)
            self._start = [0] * len(self.kinds()[1])
            self._room = None  # the block summary, rebuilt when next needed (``_blocks``)
            if self._index is not None:
                self._index.reset()

    def _blocks(self) -> None:
        """Per block of BLOCK nodes: the most free of each resource on one of its nodes, and how
        many of its nodes are in use (``_busy_candidates`` skips blocks where none fits)."""
        n, r = self._free.shape
        blocks = -(-n // BLOCK)
        padded = np.full((blocks * BLOCK, r), -1, np.int64)
        padded[:n] = self._free
        self._room = padded.reshape(blocks, BLOCK, r).max(axis=1)
        busy = np.zeros(blocks * BLOCK, np.int64)
        busy[:n] = ~self._pristine
        self._busy = busy.reshape(blocks, BLOCK).sum(axis=1)
        self._stale = np.zeros(blocks, dtype=bool)

    def _reblock(self, nodes: np.ndarray) -> None:
        """Mark the blocks of ``nodes`` stale (refreshed together when next read, ``_refresh``:
        refreshing at each change cost more than narrowing saved), and tell the free index."""
        if self._room is not None:
            self._stale[nodes // BLOCK] = True
        if self._index is not None:
            self._index.changed(nodes)

    def _refresh(self) -> None:
        """Recompute the stale blocks of the summary, in one go."""
        stale = np.flatnonzero(self._stale)
        if not stale.size:
            return
        n = self._free.shape[0]
        rows = stale[:, None] * BLOCK + np.arange(BLOCK)
        inside = rows < n
        rows = np.minimum(rows, n - 1)
        free = self._free[rows]
        free[~inside] = -1
        self._room[stale] = free.max(axis=1)
        self._busy[stale] = (~self._pristine[rows] & inside).sum(axis=1)
        self._stale[stale] = False

    def take(self, nodes: np.ndarray, times: np.ndarray, request: np.ndarray) -> None:
        """Add ``times[i]`` copies of ``request`` on ``nodes[i]``: only those rows change."""
        delta = times[:, None] * request
        self._used[nodes] += delta
        if self._pristine is not None:
            self._free[nodes] -= delta
            self._pristine[nodes] = False
            self._reblock(nodes)

    def give(self, nodes: np.ndarray, times: np.ndarray, request: np.ndarray) -> None:
        """Take back what ``take`` added."""
        delta = times[:, None] * request
        self._used[nodes] -= delta
        if self._pristine is not None:
            self._free[nodes] += delta
            idle = ~self._used[nodes].any(axis=1)
            self._pristine[nodes] = idle
            self._reblock(nodes)
            self._idle_again(nodes[idle])

    def shift(self, nodes: np.ndarray, rows: np.ndarray, sign: int) -> None:
        """Add (``sign`` 1) or take off (-1) one row per pod on its node (a node may repeat):
        preemption's and reclaim's trials of victims gone, kept current as ``take`` and ``give``
        are, so that the fit tests between them rebuild nothing."""
        (np.add if sign > 0 else np.subtract).at(self._used, nodes, rows)
        if self._pristine is None or not len(nodes):
            return
        touched = np.unique(nodes)
        self._free[touched] = self.alloc[touched] - self._used[touched]
        idle = ~self._used[touched].any(axis=1)
        again = touched[idle & ~self._pristine[touched]]
        self._pristine[touched] = idle
        self._reblock(touched)
        self._idle_again(again)

    def _idle_again(self, nodes: np.ndarray) -> None:
        """Nodes idle again: the scan of their kind for idle nodes restarts there."""
        if nodes.size and self._kinds is not None:
            kind, _rows, _members, rank = self._kinds
            for node in nodes.tolist():
                k = int(kind[node])
                self._start[k] = min(self._start[k], int(rank[node]))

    def whole(self, mask: np.ndarray, request: np.ndarray, need: int) -> int | None:
        """``placement.whole_fit`` over every node from the free index (``free_index.py``); None
        on a small cluster or one of many node shapes (no index)."""
        members = self.kinds()[2] if mask.size >= NARROW_FROM else []
        if not members:
            return None
        self._recount()
        if self._index is None:
            self._index = FreeIndex(members, mask.size)
        admitted = self._admitted(mask, members)
        return self._index.whole(self._free, self.alloc, request, need, mask, self.scale, admitted)

    def candidates(self, mask: np.ndarray, request: np.ndarray, need: int) -> np.ndarray | None:
        """The masked nodes (ascending) that bin-packing ``need`` copies of ``request`` on the
        free capacity can choose from, without the idle nodes it cannot reach.

        Idle nodes (nothing on them) of one capacity are interchangeable: the same copies fit
        and they are equally full, so ``placement.choose`` ranks them by index alone and takes
        at most ceil(need / copies) of them. Only those are kept: the candidates grow with the
        nodes in use, not with the cluster, and the choice is the one over all masked nodes.
        None: no narrowing (a small cluster, many node shapes), every node is looked at.
        """
        if mask.size < NARROW_FROM:
            return None
        kind, rows, members, _rank = self.kinds()
        if len(rows) > 8:  # many node shapes: narrowing would cost more than it saves
            return None
        self._recount()
        if IDLE_SHARE_TO_NARROW * mask.size > np.count_nonzero(self._pristine):
            return None  # a busy cluster: the nodes in use are most candidates, none to narrow out
        if need <= 0:
            return np.zeros(0, np.int64)
        positive = request > 0
        parts = [self._busy_candidates(mask, request, positive)]
        admitted = self._admitted(mask, members)
        for k, row in enumerate(rows):
            copies = int((row[positive] // request[positive]).min()) if positive.any() else need
            if copies > 0 and admitted[k]:  # else none fits or none is let: choose() passes them over
                parts.append(self._first_idle(k, members[k], mask, -(-need // min(copies, need))))
        parts = [part for part in parts if part.size]
        if len(parts) <= 1:
            return parts[0] if parts else np.zeros(0, np.int64)
        chosen = np.concatenate(parts)
        chosen.sort()
        return chosen

    def _admitted(self, mask: np.ndarray, members: list[np.ndarray]) -> list[bool]:
        """Per node kind, whether the mask lets any of its nodes (a kind it shuts out is never
        scanned); once per mask, the node filter's cached arrays (kept with it: its id stays valid)."""
        cached = self._admits.get(id(mask))
        if cached is None or cached[0] is not mask:
            if len(self._admits) > 4096:  # masks made on the fly, not the filter's: forget them
                self._admits.clear()
            cached = self._admits[id(mask)] = (mask, [bool(mask[nodes].any()) for nodes in members])
        return cached[1]

    def _busy_candidates(self, mask: np.ndarray, request: np.ndarray, positive: np.ndarray) -> np.ndarray:
        """The masked nodes in use, but only in blocks where some node has room for one copy:
        elsewhere every node takes none, and ``choose`` passes over nodes that take none."""
        if self._room is None:
            if mask.size <= 4 * BLOCK:  # a few blocks: not worth summarising
                return np.flatnonzero(mask & ~self._pristine)
            self._blocks()
        self._refresh()
        roomy = np.flatnonzero((self._room[:, positive] >= request[positive]).all(axis=1) & (self._busy > 0))
        if 2 * roomy.size * BLOCK > mask.size:
            return np.flatnonzero(mask & ~self._pristine)
        rows = (roomy[:, None] * BLOCK + np.arange(BLOCK)).ravel()
        rows = rows[rows < mask.size]
        return rows[mask[rows] & ~self._pristine[rows]]

    def _first_idle(self, k: int, members: np.ndarray, mask: np.ndarray, count: int) -> np.ndarray:
        """The first ``count`` idle masked nodes of kind ``k``, scanning in growing chunks from
        the first idle one (idle nodes are taken lowest index first, so the scan stays short)."""
        pristine = self._pristine
        start = self._start[k]
        size = 64
        while start < len(members):
            idle = pristine[members[start : start + size]]
            if idle.any():
                start += int(np.argmax(idle))
                break
            start += idle.size
            size *= 2
        self._start[k] = start
        found: list[np.ndarray] = []
        have = 0
        size = max(64, 2 * count)
        while start < len(members) and have < count:
            chunk = members[start : start + size]
            hits = chunk[pristine[chunk] & mask[chunk]]
            found.append(hits[: count - have])
            have += min(hits.size, count - have)
            start += chunk.size
            size *= 2
        return np.concatenate(found) if found else members[:0]

    def kinds(self) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], np.ndarray]:
        """Nodes by capacity (``free_index.node_kinds``), built on first use."""
        if self._kinds is None:
            self._kinds = node_kinds(self.alloc)
        return self._kinds
