"""One cycle's working state, shared by the actions (Volcano's session, kept small).

The session is opened on a snapshot, the actions run in a fixed order and record their decisions
in ``result``; placements are tried inside a ``Trial`` that is committed only when the gang rule
holds, and discarded otherwise, so no half-placed gang ever leaks out of an action.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .carry import Carry
from .config import EngineConfig
from .decisions import CycleResult
from .filters import NodeFilter, constraint_key
from .ledger import Ledger
from .members import GangMembers
from .model import Gang, GangMode, Placement, Pod, Snapshot
from .placement import choose, fit_counts, whole_fit
from .queue import Unit, build_units
from .state import ClusterState


class Session:
    def __init__(
        self, snapshot: Snapshot, now: float, config: EngineConfig, carry: Carry | None = None
    ) -> None:
        self.snapshot = snapshot
        self.now = now
        self.config = config
        self.state = ClusterState(snapshot, carry)
        self.filter = carry.node_filter(snapshot.nodes) if carry is not None else NodeFilter(snapshot.nodes)
        # Units that failed in earlier cycles and what may wake them (``requeue.py``); None
        # without a carry: every unit is tried.
        self.requeue = carry.requeue if carry is not None else None
        # The gangs by key (a copy: the cycle changes it) and, with a carry, the keys of those
        # that may time out, kept from the last cycle (``gang_map.py``).
        self.may_time_out: set[str] | None = None
        if carry is not None:
            self.gangs, self.may_time_out = carry.gang_map.update(snapshot.gangs)
            carry.victim_book.gangs_changed(carry.gang_map.changed, self.gangs)
        else:
            self.gangs: dict[str, Gang] = {gang.key: gang for gang in snapshot.gangs}
        self.members = GangMembers(snapshot.pods, self.state.pod_gang, self.state.gang_codes)
        self.pending: list[Pod] = self.state.pending_pods()  # in snapshot order
        self.result = CycleResult()
        # Reservations changed during the cycle: pod key -> node name (None: released).
        self.reserved: dict[str, str | None] = {}
        # Gangs that hold or held a reservation in this cycle: the others skip the lookups.
        holding = np.unique(self.state.pod_gang[self.state.pod_reserved])
        keys = self.state.gang_codes.keys
        self.holders: set[str] = {keys[code] for code in holding[holding >= 0].tolist()}
        self.bound_at: dict[str, int] = {}  # pods bound in this cycle -> node index
        self.evicted: set[str] = set()
        self.evicted_at: list[int] = []  # the evicted pods' snapshot positions (``evict``)
        self.units: list[Unit] = []
        # Units finished with in this cycle (placed, reserved by preemption): skipped by later actions.
        self.done: set[str] = set()
        # Preemption candidates, built on first use (actions/victims.py: a VictimPool).
        self.victims = None
        # What the last cycles found per running gang, and what changed since, with a carry
        # (``victim_book.py``).
        self.victim_book = carry.victim_book if carry is not None else None
        self.terminating_usage = None  # per-node usage of terminating pods, or False: none
        # Units that searched for victims in this cycle (EngineConfig.preempt_depth), and those
        # that would have searched past the bound (their explanation says so).
        self.searched: set[str] = set()
        self.deferred: set[str] = set()
        # Queues: None when the snapshot defines none, and then no queue logic runs.
        self.queues: Ledger | None = (
            Ledger(snapshot, self.state, self.gangs, config) if snapshot.queues else None
        )
        # Dry runs that ask "would it fit on the nodes" (backfill plans, empty-cluster checks)
        # turn admission off; everything else places within the queues' headroom.
        self.admission = True
        # Topology: each level's domain of every node, built on first use
        # (``topology.py``); None until a gang with a constraint is placed.
        self.domains = None
        # A what-if that takes pods' usage off the state (backfill's endings, an empty cluster,
        # terminating pods gone) says which pods it takes away, so that they stop holding an
        # exclusive domain too (``topology_exclusive.py``); None: the cluster as it is.
        self.vanished: Callable[[Pod], bool] | None = None
        # ``shapes`` of each list of pods asked for, by the pods' identities: preemption and
        # backfill try the same unit dozens of times a cycle, and grouping is per pod work.
        self.shape_memo: dict[tuple[int, ...], list[tuple[np.ndarray, list[Pod]]]] = {}
        # Explanations: per shape, how many nodes could take one copy empty (diagnosis.py);
        # it depends on the nodes alone, so it is the node filter's, carried with it.
        self.empty_fits: dict[tuple, int] = self.filter.empty_fits

    def build_queue(self) -> None:
        self.units = build_units(self.snapshot, self.config, self.gangs, self.members, self.pending)

    def mode(self, gang: Gang) -> GangMode:
        return self.config.force_mode or gang.mode

    def reserved_node(self, pod: Pod) -> str | None:
        return self.reserved.get(pod.key, pod.reserved_node)

    def reserve(self, pod: Pod, node: str | None) -> None:
        """Record a reservation made (a node) or released (None) in this cycle."""
        self.reserved[pod.key] = node
        if pod.gang is not None:
            self.holders.add(pod.gang)

    def held(self, gang_key: str) -> list[Pod]:
        """Pending members of the gang that hold a reservation right now."""
        if gang_key not in self.holders:
            return []
        return [
            pod
            for pod in self.members.get(gang_key, ())
            if pod.pending and pod.key not in self.bound_at and self.reserved_node(pod) is not None
        ]

    def waiting(self, gang_key: str) -> list[Pod]:
        """Pending members of the gang with nothing held, in a stable order."""
        if gang_key not in self.holders:
            return [
                pod for pod in self.members.get(gang_key, ()) if pod.pending and pod.key not in self.bound_at
            ]
        return [
            pod
            for pod in self.members.get(gang_key, ())
            if pod.pending and pod.key not in self.bound_at and self.reserved_node(pod) is None
        ]

    def evict(self, pod: Pod) -> None:
        """``pod`` (of the snapshot) is evicted in this cycle."""
        self.evicted.add(pod.key)
        self.evicted_at.append(self.state.pod_position[id(pod)])

    def running(self, gang_key: str) -> list[Pod]:
        return [
            pod
            for pod in self.members.get(gang_key, ())
            if (not pod.pending or pod.key in self.bound_at) and pod.key not in self.evicted
        ]


@dataclass
class Placed:
    """Copies of one shape placed in a trial: the pods and the node index of each."""

    pods: list[Pod]
    nodes: np.ndarray
    request: np.ndarray
    queue: int = -1  # the queue charged (ledger.py), when queues are defined
    where: np.ndarray | None = None  # the distinct nodes of ``nodes``, ascending
    times: np.ndarray | None = None  # copies on each of them

    def __post_init__(self) -> None:
        if self.where is None:
            self.where, self.times = np.unique(self.nodes, return_counts=True)


@dataclass
class Trial:
    """Tentative placements: applied to the state at once, undone by ``discard``.

    ``limit`` (N x R), when given, caps what the trial may take on each node: the capacity a
    backfilled unit may use without delaying the head of the queue. ``ledger``, when given,
    caps what it may take in all: each queue's headroom (admission, ``ledger.py``); ``cut``
    records the queue and request of the first shape it held back.
    """

    state: ClusterState
    limit: np.ndarray | None = None
    placed: list[Placed] = field(default_factory=list)
    ledger: Ledger | None = None
    cut: tuple[int, np.ndarray] | None = None

    def available(self) -> np.ndarray:
        """A new array the caller may keep and change: the kept free capacity, copied or capped."""
        free = self.state.free_all()
        return free.copy() if self.limit is None else np.minimum(free, self.limit)

    def available_before(self, count: int) -> np.ndarray:
        """What was available before the placements after the first ``count`` (placing takes
        the same from the free capacity and the limit, so adding them back restores both)."""
        available = self.available()
        for placed in self.placed[count:]:
            available[placed.where] += placed.times[:, None] * placed.request
        return available

    def place(
        self,
        session: Session,
        pods: list[Pod],
        gang: Gang | None,
        within: np.ndarray | None = None,
        groups: list | None = None,
        counts: np.ndarray | None = None,
    ) -> list[Pod]:
        """Place as many of ``pods`` as fit, shape by shape; return those left unplaced.

        ``within`` (a node mask) keeps them on those nodes: a topology domain (``topology.py``,
        which passes the pods' ``shapes`` too, computed once for all the domains it tries, and
        for a single shape its ``counts`` per node on the trial's available capacity)."""
        left: list[Pod] = []
        placement = gang.placement if gang is not None else Placement.BINPACK
        queue = -1
        if self.ledger is not None:
            queue = self.ledger.queue_of(pods[0]) if pods else -1
        for request, shape_pods in groups if groups is not None else shapes(session, pods):
            mask = session.filter.mask(shape_pods[0])
            if within is not None:
                mask = mask & within
            need = len(shape_pods)
            if self.ledger is not None and queue >= 0:
                need = self._admit(queue, request, need)
            # Bin-packing first looks for one node that takes every copy (``_whole``); else only
            # the nodes that can matter are looked at (``ClusterState.candidates``), unless they
            # are most of the cluster: then whole-array operations over every node are cheaper
            # than gathering them. Either way the choice is the one over every node.
            packing = self.limit is None and counts is None and placement == Placement.BINPACK
            node = self._whole(mask, request, need, within) if packing and need > 0 else -1
            nodes = None
            if node < 0 and packing and within is None:
                nodes = self._candidates(mask, request, need)
            if node >= 0:
                where, times = np.array([node]), np.array([need])
            elif nodes is None:
                available = self.state.free_all()
                if self.limit is not None:
                    available = np.minimum(available, self.limit)
                fit = fit_counts(available, request, mask) if counts is None else np.where(mask, counts, 0)
                takes = choose(fit, need, available, self.state.alloc, request, placement, self.state.scale)
                where = np.flatnonzero(takes > 0)
                times = takes[where]
            else:
                available = self.state.free_at(nodes)
                fit = fit_counts(available, request)
                alloc = self.state.alloc[nodes]
                takes = choose(fit, need, available, alloc, request, placement, self.state.scale)
                chosen = np.flatnonzero(takes > 0)
                where, times = nodes[chosen], takes[chosen]
            if where.size:
                self.state.take(where, times, request)
                if self.limit is not None:
                    self.limit[where] -= times[:, None] * request
                copies = np.repeat(where, times)
                self.placed.append(Placed(shape_pods[: copies.size], copies, request, queue, where, times))
                left.extend(shape_pods[copies.size :])
            else:
                left.extend(shape_pods)
        return left

    def _whole(self, mask: np.ndarray, request: np.ndarray, need: int, within: np.ndarray | None) -> int:
        """The node that takes every copy under bin-packing (``placement.whole_fit``), or -1."""
        state = self.state
        found = state.whole(mask, request, need)
        if found is not None:
            return found
        nodes = self._candidates(mask, request, need) if within is None else None
        return whole_fit(state.free_all(), state.alloc, request, need, mask, state.scale, nodes)

    def _candidates(self, mask: np.ndarray, request: np.ndarray, need: int) -> np.ndarray | None:
        nodes = self.state.candidates(mask, request, need)
        return None if nodes is not None and 2 * nodes.size > mask.size else nodes

    def _admit(self, queue: int, request: np.ndarray, need: int) -> int:
        """How many copies of ``request`` the queue's headroom admits, at most ``need``."""
        room = self.ledger.headroom(queue, self.placed)
        positive = request > 0
        allowed = int(max(np.floor(room[positive] / request[positive]).min(), 0)) if positive.any() else need
        if allowed < need:
            if self.cut is None:
                self.cut = (queue, request)
            return allowed
        return need

    def discard(self) -> None:
        for placed in reversed(self.placed):
            self._undo(placed)
        self.placed.clear()

    def undo_since(self, count: int) -> None:
        """Undo the placements made after the first ``count`` (a domain tried and given up)."""
        for placed in reversed(self.placed[count:]):
            self._undo(placed)
        del self.placed[count:]

    def discard_gang(self, gang_key: str) -> None:
        """Undo only the placements of one gang (a Strict gang inside a group that failed)."""
        keep = []
        for placed in self.placed:
            if placed.pods[0].gang == gang_key:
                self._undo(placed)
            else:
                keep.append(placed)
        self.placed = keep

    def _undo(self, placed: Placed) -> None:
        self.state.give(placed.where, placed.times, placed.request)
        if self.limit is not None:
            self.limit[placed.where] += placed.times[:, None] * placed.request

    def assignments(self) -> list[tuple[Pod, str]]:
        names = self.state.node_names
        return [
            (pod, names[int(index)])
            for placed in self.placed
            for pod, index in zip(placed.pods, placed.nodes, strict=True)
        ]


def shapes(session: Session, pods: list[Pod]) -> list[tuple[np.ndarray, list[Pod]]]:
    """Pods grouped by identical request and constraints, biggest first, stable within a shape.

    Remembered for the cycle (the snapshot keeps the pods alive, so their ids stand for them);
    callers only read the groups."""
    key = tuple(map(id, pods))
    found = session.shape_memo.get(key)
    if found is None:
        found = session.shape_memo[key] = _shapes(session, pods)
    return found


def _shapes(session: Session, pods: list[Pod]) -> list[tuple[np.ndarray, list[Pod]]]:
    if pods and _one_shape(pods):
        return [(session.state.vector(pods[0]), list(pods))]
    groups: dict[tuple, tuple[np.ndarray, list[Pod]]] = {}
    for pod in pods:
        request = session.state.vector(pod)
        key = (request.tobytes(), constraint_key(pod))
        if key not in groups:
            groups[key] = (request, [])
        groups[key][1].append(pod)
    if len(groups) == 1:
        return list(groups.values())
    scale = session.state.scale
    return sorted(groups.values(), key=lambda item: -float((item[0] / scale).sum()))


def _one_shape(pods: list[Pod]) -> bool:
    """Whether every pod shares the first one's request and constraint objects: a gang's
    members made from one template do, and are one shape without a key built per member."""
    first = pods[0]
    requests, selector, tolerations, affinity = (
        first.requests,
        first.node_selector,
        first.tolerations,
        first.affinity,
    )
    return all(
        pod.requests is requests
        and pod.node_selector is selector
        and pod.tolerations is tolerations
        and pod.affinity is affinity
        for pod in pods
    )
