"""A forward run's pods and gangs, kept so that a cycle costs what changed, not the cluster.

``apply_result`` walks every pod of the snapshot to apply a cycle's few decisions; on a busy
cluster that is tens of thousands of pods per cycle, and the run also rebuilt its list of
waiting pods and the snapshot the same way. Here the pods and the gangs are dictionaries in
the snapshot's order (a changed pod keeps its place, as ``apply_result`` keeps it): a cycle's
decisions are applied by ``apply_result`` itself, on a snapshot of the pods and gangs they
name only, and written back; the waiting pods are kept pod by pod. The engine is given the
same pods, in the same order, as the same objects (so its ``Carry`` reuses them).
"""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter
from collections.abc import Iterable

from scheduler_core.engine.apply import apply_result
from scheduler_core.engine.decisions import CycleResult
from scheduler_core.engine.model import INACTIVE_PHASES, Gang, Pod, Snapshot

from .room import Room


class Book:
    def __init__(self, snapshot: Snapshot) -> None:
        self.base = snapshot
        self.pods: dict[str, Pod] = {pod.key: pod for pod in snapshot.pods}
        self.gangs: dict[str, Gang] = {gang.key: gang for gang in snapshot.gangs}
        self.members: dict[str, list[str]] = {}  # gang key -> its pods' keys, in order
        for pod in snapshot.pods:
            if pod.gang is not None:
                self.members.setdefault(pod.gang, []).append(pod.key)
        # Pending pods that hold nothing, by gang (None: pods of no gang or of a settled gang),
        # and the bucket each is in.
        self.waiting: dict[str | None, dict[str, Pod]] = {}
        self._bucket: dict[str, str | None] = {}
        # Bumped whenever a bucket of ``waiting`` changes: what was worked out from a bucket
        # holds while its version does (``grouped``).
        self.version: Counter[str | None] = Counter()
        self._grouped: dict[tuple, tuple[tuple[int, ...], tuple]] = {}
        self.unplaced: set[str] = set()  # pending, unreserved, not terminating: maybe hidden
        self._snapshot: Snapshot | None = snapshot
        for pod in snapshot.pods:
            self._wait(pod)

    def copy(self) -> Book:
        """A book of its own to change, with the same pods and gangs (each forward run keeps
        one; copying is cheaper than walking the snapshot again)."""
        twin = copy.copy(self)
        twin.pods, twin.gangs = dict(self.pods), dict(self.gangs)
        twin.members = {key: list(keys) for key, keys in self.members.items()}
        twin.waiting = {bucket: dict(pods) for bucket, pods in self.waiting.items()}
        twin._bucket, twin.unplaced = dict(self._bucket), set(self.unplaced)
        twin.version, twin._grouped = Counter(self.version), dict(self._grouped)
        return twin

    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = dataclasses.replace(
                self.base, pods=tuple(self.pods.values()), gangs=tuple(self.gangs.values())
            )
        return self._snapshot

    def shown(self, gangs: set[str], lone: set[str]) -> Snapshot:
        """The snapshot without the pods that wait in units not shown (``window.py``)."""
        hidden = {key for key in self.unplaced if key not in lone and self.pods[key].gang not in gangs}
        if not hidden:
            return self.snapshot()
        pods = tuple(pod for key, pod in self.pods.items() if key not in hidden)
        return dataclasses.replace(self.base, pods=pods, gangs=tuple(self.gangs.values()))

    def apply(self, result: CycleResult, t: float) -> list[Pod]:
        """Apply a cycle's decisions; the pods bound or evicted, as they are now."""
        named = dict.fromkeys(d.pod for d in (*result.binds, *result.evictions, *result.releases))
        named.update(dict.fromkeys(d.pod for d in result.reservations))
        moved = dict.fromkeys(t_.gang for t_ in result.transitions if t_.gang in self.gangs)
        if not named and not moved:
            return []
        before = [self.pods[key] for key in named if key in self.pods]
        mini = Snapshot(pods=tuple(before), gangs=tuple(self.gangs[key] for key in moved))
        after = apply_result(mini, result, t)
        for pod in after.pods:
            self.pods[pod.key] = pod
        for gang in after.gangs:
            self.gangs[gang.key] = gang
        self._snapshot = None
        touched = [pod.key for pod in after.pods]
        for gang in moved:  # a gang's phase moves its waiting pods between buckets
            touched.extend(self.members.get(gang, ()))
        for key in dict.fromkeys(touched):
            pod = self.pods.get(key)
            if pod is not None:
                self._wait(pod)
        moved_pods = {d.pod for d in result.binds} | {d.pod for d in result.evictions}
        return [pod for pod in after.pods if pod.key in moved_pods]

    def replace(self, pods: Iterable[Pod]) -> None:
        """Pods whose estimate changed (the overrun rule): the same place, a new object."""
        for pod in pods:
            self.pods[pod.key] = pod
            self._snapshot = None

    def drop(self, pods: Iterable[str], gangs: Iterable[str]) -> None:
        """Pods gone (ended, or left by a finished gang) and gangs finished."""
        for key in pods:
            if self.pods.pop(key, None) is not None:
                self._unwait(key)
                self._snapshot = None
        for key in gangs:
            if self.gangs.pop(key, None) is not None:
                self._snapshot = None

    def add(self, gang: Gang, pods: Iterable[Pod]) -> None:
        """A gang submitted during the run (``arrivals.py``): it and its pods come last."""
        self.gangs[gang.key] = gang
        for pod in pods:
            self.pods[pod.key] = pod
            self.members.setdefault(gang.key, []).append(pod.key)
            self._wait(pod)
        self._snapshot = None

    def grouped(self, buckets: tuple[str | None, ...], room: Room) -> tuple:
        """``room.groups`` of the pods waiting in ``buckets``, worked out again only when one
        of them changed: most gangs wait, unchanged, through many cycles."""
        stamp = tuple(self.version[bucket] for bucket in buckets)
        found = self._grouped.get(buckets)
        if found is None or found[0] != stamp:
            pods = [pod for bucket in buckets for pod in self.waiting.get(bucket, {}).values()]
            found = self._grouped[buckets] = (stamp, room.groups(pods))
        return found[1]

    def forget_waiting(self, gang: str) -> list[str]:
        """A finished gang's waiting pods, taken out of the waiting lists (they are gone)."""
        self.version[gang] += 1
        keys = list(self.waiting.pop(gang, {}))
        keys += [key for key in self.members.get(gang, ()) if self._bucket.get(key, gang) is None]
        for key in keys:
            self._unwait(key)
        return keys

    def _wait(self, pod: Pod) -> None:
        self._unwait(pod.key)
        if pod.node is not None or pod.reserved_node is not None or pod.terminating:
            return
        self.unplaced.add(pod.key)
        gang = self.gangs.get(pod.gang) if pod.gang is not None else None
        if gang is not None and gang.phase in INACTIVE_PHASES:
            return
        bucket = None if gang is None or gang.settled else gang.key
        self.waiting.setdefault(bucket, {})[pod.key] = pod
        self._bucket[pod.key] = bucket
        self.version[bucket] += 1

    def _unwait(self, key: str) -> None:
        self.unplaced.discard(key)
        if key in self._bucket:
            bucket = self._bucket.pop(key)
            pods = self.waiting.get(bucket)
            self.version[bucket] += 1
            if pods is not None:
                pods.pop(key, None)
                if not pods:
                    del self.waiting[bucket]
