"""What each queue uses, may take and is owed, kept up to date through one cycle.

Opened by the session only when the snapshot defines queues (``Snapshot.queues`` not empty):
with no queues the engine never builds one, and every decision is what it was before queues.

Usage is what a queue's bound and reserved pods request (a gang member is charged to its gang's
queue, a pod scheduled alone to its own ``queue``), summed up the tree; demand is usage plus the
pending requests of its active units. Both are taken from the snapshot when the cycle opens; the
actions then ``charge`` what they bind, reserve, release and evict, so that admission and the
order across queues see this cycle's placements at once. Demand stays as it was (a bind moves
pending to usage, an eviction moves it back), and so do the fair shares (``fairshare.py``).

Admission (``headroom``): a queue may take, per resource, the least of

- for every queue on its path: its ``max`` less its usage;
- what its parent may take, less what the parent's other children keep reserved (their unmet
  guarantee while they have demand, what their lending limit keeps back) — at the top, what is
  free in the cluster.

So a queue below its guarantee takes it from the free capacity, and a queue above it borrows only
what no sibling (of it or of an ancestor) is owed. These are a few small vectors per unit: the
nodes are the trial's business (``session.Trial``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from . import fairshare
from .config import EngineConfig
from .model import INACTIVE_PHASES, Gang, Pod, Snapshot
from .state import ClusterState


class Ledger:
    def __init__(self, snapshot: Snapshot, state: ClusterState, gangs: dict[str, Gang], config: EngineConfig):
        self.state = state
        self.gangs = gangs
        self.gang_rule = config.gangs
        tree = self.tree = fairshare.build_tree(snapshot.queues)
        resources = state.resources
        self.guarantee = fairshare.guarantees(tree, fairshare.declared_guarantees(tree, resources))
        self.max = fairshare.amounts(tree, resources, "max", fairshare.UNLIMITED)
        self.lending = fairshare.amounts(tree, resources, "lending_limit", fairshare.UNLIMITED)
        self.leaf = np.array([tree.is_leaf(q) for q in range(tree.size)])
        pods = snapshot.pods
        # Per pod: its queue, and whether it waits in an active unit (its gang looked up once).
        by_gang = {
            key: (tree.index.get(g.queue, -1), g.phase not in INACTIVE_PHASES) for key, g in gangs.items()
        }
        index = tree.index
        rule = self.gang_rule
        queue_of, active = [], []
        for pod in pods:
            if rule and pod.gang is not None and pod.gang in by_gang:
                q, waits = by_gang[pod.gang]
            else:  # alone, or a provisional member (it waits for its gang, not in a unit)
                q, waits = index.get(pod.queue, -1), pod.gang is None or not rule
            queue_of.append(q)
            active.append(waits and pod.pending)
        self.pod_queue = np.array(queue_of, dtype=np.int64)
        placed = state.pod_where >= 0
        charged = placed & (self.pod_queue >= 0)
        own = np.zeros((tree.size, len(resources)))
        np.add.at(own, self.pod_queue[charged], state.pod_rows[charged])
        self.usage = fairshare.roll_up(tree, own)
        waiting = np.array(active, dtype=bool) & ~placed & (self.pod_queue >= 0)
        pending = np.zeros_like(own)
        np.add.at(pending, self.pod_queue[waiting], state.pod_rows[waiting])
        self.demand = self.usage + fairshare.roll_up(tree, pending)
        ready = np.array([node.ready and not node.unschedulable for node in snapshot.nodes], dtype=bool)
        capacity = state.alloc[ready].astype(float).sum(axis=0) if ready.any() else np.zeros(len(resources))
        self.capacity = np.minimum(capacity, fairshare.UNLIMITED)
        # Admission's top bound, what is free on all nodes (cordoned ones hold pods too).
        self.room = np.minimum(state.alloc.astype(float).sum(axis=0), fairshare.UNLIMITED)
        self.total = (
            state.pod_rows[placed].astype(float).sum(axis=0) if placed.any() else np.zeros(len(resources))
        )
        self.share = fairshare.fair_shares(
            tree, self.capacity, self.demand, self.guarantee, self.max, resources
        )
        # An unlimited guarantee (KAI's quota -1) is owed, and kept reserved, as its fair share.
        self.guarantee = fairshare.resolve_unlimited(self.guarantee, self.share)
        self.reserve = fairshare.reserves(self.guarantee, self.usage, self.demand, self.lending)
        # What the children of each queue keep reserved, summed; the last row is the root's.
        self.reserved_below = np.zeros((tree.size + 1, len(resources)))
        for q in range(tree.size):
            self.reserved_below[self._slot(q)] += self.reserve[q]
        # 1 / fair share (inf where there is none), so a ratio is one multiply and a max.
        with np.errstate(divide="ignore"):
            self.inverse = np.where(self.share > 1e-9, 1.0 / np.maximum(self.share, 1e-9), np.inf)
        # What a queue keeps reserved is max(0, keeps - usage) (fairshare.reserves).
        self.keeps = np.maximum(np.minimum(self.guarantee, self.demand), self.guarantee - self.lending)
        self.path_rows = [np.array(path) for path in tree.paths]
        self.slot_rows = [np.array([self._slot(p) for p in path]) for path in tree.paths]
        # Ratios measure what the queues are about (``fairshare.measured``): pods' slot counts
        # would otherwise make the share of a queue of many small pods look full.
        measured = self.measured = fairshare.measured(tree, resources)
        self.inverse[:, ~measured] = 0.0
        self.ratios: list[float] = fairshare.ratios(self.usage[:, measured], self.share[:, measured]).tolist()
        self.reclaim_failed: dict[tuple[int, str], list[np.ndarray]] = {}  # see actions/reclaim.py
        self.gated: set[str] = set()  # units whose first gang's queue takes no work (queue_order)
        self.victim_index = None  # actions/victim_index.VictimIndex, built by the first reclaim
        self.queue_victims: dict[int, object] = {}  # queue -> VictimPool: victims.of_queue
        self._by_queue = None  # snapshot pod positions sorted by queue, built on first use
        self.snapshot_pods = pods

    # -- which queue -------------------------------------------------------------------------

    def _queue_index(self, pod: Pod) -> int:
        gang = self.gangs.get(pod.gang) if pod.gang is not None and self.gang_rule else None
        return self.tree.index.get(gang.queue if gang is not None else pod.queue, -1)

    def queue_of(self, pod: Pod) -> int:
        """The queue a pod is charged to (-1: a queue the tree does not have)."""
        position = self.state.pod_position.get(id(pod))
        return int(self.pod_queue[position]) if position is not None else self._queue_index(pod)

    def pods_of(self, queues: set[int]) -> list[Pod]:
        """The snapshot's pods charged to ``queues``, in snapshot order."""
        if self._by_queue is None:
            order = np.argsort(self.pod_queue, kind="stable")
            self._by_queue = (order, self.pod_queue[order])
        order, sorted_queues = self._by_queue
        picked = [
            order[np.searchsorted(sorted_queues, q) : np.searchsorted(sorted_queues, q, side="right")]
            for q in queues
        ]
        positions = np.sort(np.concatenate(picked)) if picked else np.zeros(0, np.int64)
        pods = self.snapshot_pods
        return [pods[i] for i in positions.tolist()]

    def queue_named(self, name: str) -> int:
        return self.tree.index.get(name, -1)

    def _slot(self, q: int) -> int:
        parent = self.tree.parent[q]
        return parent if parent >= 0 else self.tree.size

    # -- charging ----------------------------------------------------------------------------

    def charge(self, q: int, amount: np.ndarray) -> None:
        """Add ``amount`` (negative: take it off) to queue ``q`` and its ancestors."""
        self.total += amount
        if q < 0:
            return
        path, slots = self.path_rows[q], self.slot_rows[q]
        self.usage[path] += amount
        usage = self.usage[path]
        before = self.reserve[path]
        after = np.maximum(self.keeps[path] - usage, 0.0)
        self.reserve[path] = after
        self.reserved_below[slots] += after - before  # one parent per path step: no repeats
        scaled = np.zeros_like(usage)
        np.multiply(usage, self.inverse[path], out=scaled, where=usage > 1e-9)
        for p, ratio in zip(self.tree.paths[q], scaled.max(axis=1).tolist(), strict=True):
            self.ratios[p] = ratio

    def save(self) -> tuple:
        """The charged state, for ``restore`` after a dry run that charges much."""
        return (
            self.usage.copy(),
            self.reserve.copy(),
            self.reserved_below.copy(),
            self.total.copy(),
            list(self.ratios),
        )

    def restore(self, saved: tuple) -> None:
        usage, reserve, below, total, ratios = saved
        self.usage[:] = usage
        self.reserve[:] = reserve
        self.reserved_below[:] = below
        self.total[:] = total
        self.ratios[:] = ratios

    def charge_pods(self, pods: Iterable[Pod], sign: int = 1) -> None:
        by_queue: dict[int, np.ndarray] = defaultdict(lambda: np.zeros(len(self.state.resources)))
        for pod in pods:
            by_queue[self.queue_of(pod)] += self.state.vector(pod)
        for q, amount in by_queue.items():
            self.charge(q, sign * amount)

    def charge_trial(self, trial) -> None:
        """Charge what a trial placed (its ``placed`` know their queue and request)."""
        for placed in trial.placed:
            self.charge(placed.queue, placed.request * len(placed.pods))

    # -- admission ---------------------------------------------------------------------------

    def headroom(self, q: int, placed: Iterable = ()) -> np.ndarray:
        """How much more queue ``q`` may take (module docstring), given a trial's ``placed``.

        The walk down the path, ``room = min(own_p, room - others_p)`` from the top, unrolled:
        the least of ``own_p`` less what the siblings of the queues below p keep, and of the
        free room less what all of them keep (``_walk`` does it step by step, and says which
        rule bounds).
        """
        if placed:
            return self._walk(q, placed)[0]
        path, slots = self.path_rows[q], self.slot_rows[q]  # leaf first
        others = self.reserved_below[slots] - self.reserve[path]
        below = np.cumsum(others, axis=0) - others  # what the queues below each one keep out
        own = self.max[path] - self.usage[path] - below
        return np.minimum(own.min(axis=0), self.room - self.total - others.sum(axis=0))

    def _walk(self, q: int, placed: Iterable = (), column: int | None = None):
        """(headroom, what bounds ``column``: ("max" | "borrow", queue)) along q's path."""
        path = self.tree.paths[q]
        extra: dict[int, np.ndarray] = {}
        spent = 0.0
        for item in placed:
            amount = item.request * len(item.pods)
            spent = spent + amount
            if item.queue >= 0:
                for p in self.tree.paths[item.queue]:
                    if p in path:
                        extra[p] = extra.get(p, 0.0) + amount
        room = self.room - self.total - spent
        bound = ("free", -1)
        for p in reversed(path):
            taken = self.usage[p] + extra.get(p, 0.0)
            own = self.max[p] - taken
            lent = room - (self.reserved_below[self._slot(p)] - self.reserve[p])
            if column is not None:
                if own[column] <= lent[column]:
                    if own[column] < room[column]:
                        bound = ("max", p)
                elif lent[column] < room[column]:
                    bound = ("borrow", p)
            room = np.minimum(own, lent)
        return room, bound

    def binding(self, q: int, column: int, placed: Iterable = ()) -> tuple[str, int]:
        """Which rule limits queue ``q`` on ``column``: ("max", p), ("borrow", p) or ("free", -1)."""
        return self._walk(q, placed, column)[1]

    # -- order and reclaim -------------------------------------------------------------------

    def ratio(self, q: int) -> float:
        """Dominant usage over fair share: below 1, the queue is below its fair share."""
        return self._ratio(self.usage[q], q)

    def ratio_after(self, q: int, amount: np.ndarray) -> float:
        return self._ratio(self.usage[q] + amount, q)

    def _ratio(self, usage: np.ndarray, q: int) -> float:
        """``fairshare.ratios`` for one row, without its temporaries (it runs on every charge)."""
        out = np.zeros_like(usage)
        np.multiply(usage, self.inverse[q], out=out, where=usage > 1e-9)
        return float(out.max()) if out.size else 0.0

    # -- the record ----------------------------------------------------------------------------

    def report(self) -> dict[str, dict]:
        """Per queue, after this cycle's decisions: plain dicts the service stores as they are."""
        tree = self.tree
        borrowed = np.maximum(self.usage - self.guarantee, 0.0)
        lendable = np.minimum(np.maximum(self.guarantee - self.usage, 0.0), self.lending)
        lent = np.zeros_like(lendable)
        for kids in (tree.top, *tree.children):
            if not kids:
                continue
            ids = np.array(kids)
            wanted = borrowed[ids].sum(axis=0)
            offered = lendable[ids].sum(axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                part = np.where(offered > 0, np.minimum(wanted / np.maximum(offered, 1e-9), 1.0), 0.0)
            lent[ids] = lendable[ids] * part
        out = {}
        for q, queue in enumerate(tree.queues):
            out[queue.name] = {
                "path": tree.names[q],
                "parent": tree.queues[tree.parent[q]].name if tree.parent[q] >= 0 else None,
                "leaf": bool(self.leaf[q]),
                "open": queue.open,
                "weight": queue.weight,
                "usage": self._amounts(self.usage[q]),
                "guarantee": self._amounts(self.guarantee[q]),
                "fair_share": self._amounts(self.share[q]),
                "max": self._amounts(self.max[q], limit=True),
                "pending": self._amounts(np.maximum(self.demand[q] - self.usage[q], 0.0)),
                "borrowed": self._amounts(borrowed[q]),
                "lent": self._amounts(lent[q]),
            }
        return out

    def _amounts(self, row: np.ndarray, limit: bool = False) -> dict[str, int]:
        """A row as {resource: int}, zeros left out (for ``limit``: unlimited left out)."""
        out = {}
        for i, name in enumerate(self.state.resources):
            value = row[i]
            if limit and value >= fairshare.UNLIMITED:
                continue
            if value > 0.5 or (limit and value >= 0):
                if name == "pods" and not limit:
                    continue
                out[name] = int(value + 1e-6)
        return out
