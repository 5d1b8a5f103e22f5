"""What changed between the snapshot the requeue book saw last and this one, as wake events.

A unit parked by requeue (``requeue.py``) waits for an event that could let it place. Most
events are read off the snapshots: the nodes, queues, gangs and pods of the last cycle against
this cycle's. Snapshots share the objects of what did not change (``apply_result``, the
service's ``snapshot/reuse.py``), so the pods are matched by identity first, as ``carry.py``
does, and only the few that are not the same object are compared by value. Room freed on the
nodes and a queue's usage falling are read off the cluster state and the queue ledger instead
(``actions/park.py``): that also catches a bind the cluster did not carry out.

Only changes that can widen what a unit may take are events: a node removed, shrunk, cordoned or
not ready, a pod bound or reserved, take room and wake nobody. The node set changing (a node added,
removed or moved) is taken as every node event, since the arrays of the two cycles no longer line
up node for node.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .config import EngineConfig
from .model import Gang, Node, Pod, Snapshot


class Wake(enum.Flag):
    """Kinds of event that wake a parked unit (``requeue.WAKES`` maps failure reasons to them)."""

    NONE = 0
    ROOM = enum.auto()  # room freed on the nodes: a pod ended, was deleted, evicted or is terminating
    NODES = enum.auto()  # a node added, grown, ready, uncordoned, relabelled or retainted
    QUOTA = enum.auto()  # a queue may take more: usage or demand fell, the tree or limits changed


#: Every kind of event: what a unit waits for when its reason does not narrow it down.
ANY = Wake.ROOM | Wake.NODES | Wake.QUOTA

#: A gang's scheduling state, which the engine's own transitions change every cycle; the rest of
#: its fields are its spec.
_STATE = frozenset({"phase", "satisfied", "wait_started", "fallen_back"})
_SPEC = tuple(f.name for f in dataclasses.fields(Gang) if f.compare and f.name not in _STATE)


@dataclass
class Changes:
    """What happened between two snapshots.

    ``everyone``: every parked unit wakes (a gang created, deleted or respecified, the gang groups,
    topologies or engine configuration changed: a new head or a new order can change anything).
    ``touched``: gang keys and lone pod keys whose own objects changed (a member joined or left,
    a gang's phase moved): the units holding them wake whatever they wait for.
    """

    wakes: Wake = Wake.NONE
    everyone: bool = False
    touched: set[str] = field(default_factory=set)


def changes(
    before: Snapshot | None,
    after: Snapshot,
    config: EngineConfig,
    last: EngineConfig | None,
    pods: tuple[PodIndex | None, PodIndex],
) -> Changes:
    """What happened from ``before`` (run with ``last``) to ``after`` (with ``config``);
    ``pods``: the index of each snapshot's pods (``before``'s None when there is none)."""
    out = Changes()
    if before is None or pods[0] is None or config != last:
        out.everyone = True
        return out
    if before.gang_groups != after.gang_groups or before.topologies != after.topologies:
        out.everyone = True
        return out
    if before.queues != after.queues:
        out.wakes |= Wake.QUOTA
    out.wakes |= node_wakes(before.nodes, after.nodes)
    if _gangs_changed(before.gangs, after.gangs, out.touched):
        out.everyone = True
        return out
    if _pods_changed(pods[0], pods[1], out.touched):
        out.wakes |= Wake.ROOM
    return out


def node_wakes(before: Sequence[Node], after: Sequence[Node]) -> Wake:
    if before is after:
        return Wake.NONE
    if len(before) != len(after) or any(a.name != b.name for a, b in zip(before, after, strict=True)):
        return ANY
    for old, new in zip(before, after, strict=True):
        if old is new or old == new:
            continue
        opened = (new.ready and not old.ready) or (old.unschedulable and not new.unschedulable)
        if opened or _grew(old, new) or old.labels != new.labels or old.taints != new.taints:
            return ANY
    return Wake.NONE


def _grew(old: Node, new: Node) -> bool:
    """Can ``new`` hold more of some resource than ``old``? A node without ``pods`` holds any number."""
    for name in old.allocatable.keys() | new.allocatable.keys():
        if name == "pods":
            if "pods" not in new.allocatable:
                if "pods" in old.allocatable:
                    return True
                continue
            if "pods" not in old.allocatable:
                continue
        if new.allocatable.get(name, 0) > old.allocatable.get(name, 0):
            return True
    return False


def _gangs_changed(before: Sequence[Gang], after: Sequence[Gang], touched: set[str]) -> bool:
    """Record gangs whose state changed in ``touched``; True: one was created, deleted or
    respecified."""
    if before is after:
        return False
    old = {gang.key: gang for gang in before}
    if len(old) != len(after):
        return True
    for gang in after:
        was = old.get(gang.key)
        if was is None:
            return True
        if was is gang or was == gang:
            continue
        if any(getattr(was, name) != getattr(gang, name) for name in _SPEC):
            return True
        touched.add(gang.key)
    return False


class PodIndex:
    """A snapshot's pods with their ids sorted, to find the same objects in the next snapshot
    with two sorted searches instead of a set of every pod."""

    def __init__(self, pods: Sequence[Pod], ids: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.pods = pods  # held: the ids stay those of these objects
        # The ids and sorted ids, when the carry has them already (``ClusterState.pod_ids``).
        self._ids, self._sorted = ids if ids is not None else (None, None)

    @property
    def ids(self) -> np.ndarray:
        """Built on first use: a cycle with no unit parked compares no snapshots."""
        if self._ids is None:
            self._ids = np.fromiter(map(id, self.pods), np.int64, len(self.pods))
        return self._ids

    @property
    def sorted(self) -> np.ndarray:
        if self._sorted is None:
            self._sorted = np.sort(self.ids)
        return self._sorted

    def holds(self, ids: np.ndarray) -> np.ndarray:
        """Per id, whether one of these pods has it."""
        if not self.sorted.size:
            return np.zeros(len(ids), bool)
        at = np.minimum(np.searchsorted(self.sorted, ids), self.sorted.size - 1)
        return self.sorted[at] == ids


def _pods_changed(before: PodIndex, after: PodIndex, touched: set[str]) -> bool:
    """Record in ``touched`` the keys (and gangs) of pods added, removed or changed; True: a
    pod on a node started terminating (backfilling and preemption count its room as freed)."""
    if before.pods is after.pods:
        return False
    gone = [before.pods[i] for i in np.flatnonzero(~after.holds(before.ids)).tolist()]
    fresh = [after.pods[i] for i in np.flatnonzero(~before.holds(after.ids)).tolist()]
    was = {pod.key: pod for pod in gone}
    terminating = False
    seen: set[str] = set()
    for pod in fresh:
        seen.add(pod.key)
        old = was.get(pod.key)
        if old == pod:
            continue
        _touch(pod, touched)
        if old is not None:
            _touch(old, touched)
        if pod.terminating and pod.node is not None and (old is None or not old.terminating):
            terminating = True
    for pod in gone:
        if pod.key not in seen:
            _touch(pod, touched)
    return terminating


def _touch(pod: Pod, touched: set[str]) -> None:
    touched.add(pod.key)
    if pod.gang is not None:
        touched.add(pod.gang)
