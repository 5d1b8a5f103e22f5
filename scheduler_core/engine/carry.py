"""What one cycle's cluster state leaves to the next, so that ``open`` applies changes instead of
rebuilding every running pod's request row.

The worker keeps one ``Carry`` and passes it to every ``run_cycle``. Snapshots share objects
between cycles: ``apply_result`` keeps every pod it does not change, and the service's snapshot
reuses the objects of unchanged rows (``snapshot/reuse.py``). Pods are frozen, so a pod object
seen last cycle has the same requests and the same node: its row and node index are copied from
the last state by identity, and only the pods new since are looked at one by one.

The carry holds the last snapshot's pods, so their ids cannot be given to new objects while it
compares them. It starts again from scratch (a full build, exactly what a cycle without a carry
does) when the nodes are not the same objects in the same order, when the set of resources would
differ, or when the request mappings it remembers outgrow the pods (a long-running worker sees
new mappings every cycle).

The result is the state a full build gives, array for array: ``tests/engine/test_carry.py``
runs cycles both ways and compares them.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter, is_

import numpy as np

from .filters import NodeFilter
from .gang_map import GangMap
from .model import Node, Pod, Snapshot
from .pod_flags import ends_of, pending_of, reserved_of, terminating_of
from .requeue import RequeueBook
from .same_objects import LastIds, Moves
from .state import NARROW_FROM, ClusterState
from .victim_book import VictimBook

#: Node-side attributes of a ClusterState that depend only on the nodes and the resources.
_NODE_PART = (
    "resources",
    "column",
    "node_names",
    "node_index",
    "alloc",
    "scale",
    "_kinds",
    "_admits",
    "_vectors",
    "_by_identity",
    "_keep_alive",
)

#: Remembered request mappings beyond this many per pod (plus a floor): start again.
_MAPPINGS_PER_POD = 2
_MAPPINGS_FLOOR = 50_000


class Carry:
    """The previous cycle's nodes, node filter and cluster state, and the requeue book, for the
    next cycle."""

    def __init__(self) -> None:
        self.nodes: tuple[Node, ...] | None = None
        self.filter: NodeFilter | None = None
        self._filter_nodes: tuple[Node, ...] = ()
        self._state: ClusterState | None = None
        self._pods: tuple[Pod, ...] = ()
        self._last_ids = LastIds()  # the last snapshot's pods' ids (same_objects.py)
        self._named = np.zeros((0, 0), bool)  # per pod: which resource names its requests name
        self._node_named = np.zeros(0, bool)  # per column: named by a node's allocatable or "pods"
        self.restored = 0  # cycles whose state was carried, for tests and the bench
        self.requeue = RequeueBook()  # units that failed and what may wake them (requeue.py)
        self.gang_map = GangMap()  # the gangs by key, and those that may time out (gang_map.py)
        self.victim_book = VictimBook()  # preemption's candidates per running gang (victim_book.py)
        self.rebuilt = 0

    def same_nodes(self, nodes: Sequence[Node]) -> bool:
        known = self.nodes
        return known is not None and len(known) == len(nodes) and all(map(is_, known, nodes))

    def node_filter(self, nodes: Sequence[Node]) -> NodeFilter:
        """The last cycle's filter when the nodes are the same objects (its masks stay valid)."""
        known = self._filter_nodes
        if self.filter is None or len(known) != len(nodes) or not all(map(is_, known, nodes)):
            self.filter = NodeFilter(nodes)
            self._filter_nodes = tuple(nodes)
        return self.filter

    def restore(self, state: ClusterState, snapshot: Snapshot) -> bool:
        """Fill ``state``'s node and pod parts from the last state; False: build it afresh."""
        last = self._state
        if last is None or not self.same_nodes(snapshot.nodes):
            return False
        pods = snapshot.pods
        most = max(_MAPPINGS_FLOOR, _MAPPINGS_PER_POD * len(pods))
        if len(last._keep_alive) > most or len(last.gang_codes) > most:
            return False
        ids = np.fromiter(map(id, pods), np.int64, len(pods))
        moves = Moves(self._last_ids.match(ids))
        fresh = moves.fresh
        new_pods = [pods[i] for i in fresh.tolist()]
        column = last.column
        requests = list(map(attrgetter("requests"), new_pods))
        distinct = dict(zip(map(id, requests), requests, strict=True))
        if any(name not in column for mapping in distinct.values() for name in mapping):
            return False  # a new resource: the columns change
        size = len(pods)
        named = moves.carried(self._named, size, False)
        rows = moves.carried(last.pod_rows, size, 0)
        where = moves.carried(last.pod_where, size, -1)
        pending = moves.carried(last.pod_pending, size, False)
        gang = moves.carried(last.pod_gang, size, 0)
        reserved = moves.carried(last.pod_reserved, size, False)
        end = moves.carried(last.pod_end, size, np.nan)
        terminating = moves.carried(last.pod_terminating, size, False)
        state.gang_codes = last.gang_codes
        for name in _NODE_PART:
            setattr(state, name, getattr(last, name))
        if new_pods:
            # One row per distinct requests mapping (members of a gang share one), then indexed.
            code = {identity: i for i, identity in enumerate(distinct)}
            index = np.fromiter(map(code.__getitem__, map(id, requests)), np.int64, len(requests))
            rows[fresh] = np.stack([state.vector_of(mapping) for mapping in distinct.values()])[index]
            named[fresh] = _names_of(distinct.values(), column)[index]
            where[fresh] = state.where_of(new_pods)
            pending[fresh] = pending_of(new_pods)
            gang[fresh] = state.gang_codes.of(new_pods)
            reserved[fresh] = reserved_of(new_pods)
            placed = fresh[where[fresh] >= 0]  # only the pods on a node end (pod_flags.py)
            if placed.size:
                on_nodes = [pods[i] for i in placed.tolist()]
                end[placed], terminating[placed] = ends_of(on_nodes), terminating_of(on_nodes)
        unnamed = np.flatnonzero(~self._node_named)  # columns only pods name (usually none)
        if unnamed.size and not named[:, unnamed].any(axis=0).all():
            return False  # a resource no pod or node names any more: the columns change
        gone = _gone(last, moves)
        # Preemption's candidates look again at the gangs of the pods new or gone (victim_book.py).
        self.victim_book.pods_changed(np.concatenate((gang[fresh], last.pod_gang[gone])))
        state.pod_used = _used(last, moves, rows, where, gone)
        for array in (rows, where, pending, gang, reserved):
            array.flags.writeable = False
        state.pod_rows, state.pod_where, state.pod_pending = rows, where, pending
        state.pod_gang, state.pod_reserved = gang, reserved
        state.pod_end, state.pod_terminating = end, terminating
        self._remember(state, snapshot, named, ids)
        self.restored += 1
        return True

    def keep(self, state: ClusterState, snapshot: Snapshot) -> None:
        """Remember a state built afresh."""
        self._remember(state, snapshot, _names(snapshot.pods, state.column))
        self.victim_book.start_over()  # gang codes and arrays are new: nothing it kept holds
        if len(snapshot.nodes) >= NARROW_FROM:
            state.kinds()  # nodes by capacity, for narrowing: once per set of nodes, not per cycle
        self._node_named = np.zeros(len(state.column), bool)
        self._node_named[state.column["pods"]] = True
        for node in snapshot.nodes:
            for name in node.allocatable:
                self._node_named[state.column[name]] = True
        self.rebuilt += 1

    def _remember(
        self, state: ClusterState, snapshot: Snapshot, named: np.ndarray, ids: np.ndarray | None = None
    ) -> None:
        self._state = state
        self.nodes = tuple(snapshot.nodes)
        self._pods = snapshot.pods
        if ids is None:
            ids = np.fromiter(map(id, snapshot.pods), np.int64, len(snapshot.pods))
        self._last_ids = LastIds(ids)
        self._named = named
        # The requeue book compares snapshots by the same ids (``requeue_events.PodIndex``).
        state.pod_ids = (ids, self._last_ids.sorted)


def _gone(last: ClusterState, moves: Moves) -> np.ndarray:
    """The positions in the last state of its pods not in this snapshot."""
    matched = np.zeros(len(last.pods), bool)
    matched[moves.at] = True
    return np.flatnonzero(~matched)


def _used(
    last: ClusterState, moves: Moves, rows: np.ndarray, where: np.ndarray, gone: np.ndarray
) -> np.ndarray:
    """The usage per node of this snapshot's pods: the last one's, less the pods gone since, plus
    the new ones (the pods kept are the same objects, on the same nodes, with the same rows)."""
    used = last.pod_used.copy()
    gone = gone[last.pod_where[gone] >= 0]
    np.subtract.at(used, last.pod_where[gone], last.pod_rows[gone])
    placed = moves.fresh[where[moves.fresh] >= 0]
    np.add.at(used, where[placed], rows[placed])
    used.flags.writeable = False
    return used


def _names(pods: Sequence[Pod], column: dict[str, int]) -> np.ndarray:
    """Per pod, which of the columns its requests mapping names (an amount of 0 included)."""
    if not pods:
        return np.zeros((0, len(column)), bool)
    requests = list(map(attrgetter("requests"), pods))
    distinct = dict(zip(map(id, requests), requests, strict=True))
    code = {identity: i for i, identity in enumerate(distinct)}
    index = np.fromiter(map(code.__getitem__, map(id, requests)), np.int64, len(requests))
    return _names_of(distinct.values(), column)[index]


def _names_of(mappings, column: dict[str, int]) -> np.ndarray:
    """Per mapping, which of the columns it names."""
    table = np.zeros((len(mappings), len(column)), bool)
    for row, mapping in zip(table, mappings, strict=True):
        for name in mapping:
            row[column[name]] = True
    return table
