"""One forward run: the engine, cycle after cycle, in virtual time, with one guess of the truth.

The engine plans with the estimates (``Pod.duration``), as the service's engine will; the run
knows, in addition, when each pod *really* ends in this guess: its estimate scaled by its
source's spread at the run's quantile (``spreads.py``), given what it has already run. Between
cycles the run jumps to the next real end (every end up to the cycle's time is applied first:
the pods are gone, and a gang whose bound pods all ended is finished and gone with its waiting
ones), and runs ``run_cycle`` and ``apply_result`` there, with one ``Carry`` across its cycles as
the worker keeps one. A running pod that outlives its estimate gets the overrun rule's estimate,
as the snapshot gives it to the service's engine.

A cycle that evicted or released something is followed by another one ``tick`` later (the
preemptor binds on the room it was given), as the trace replay does. Nothing arrives unless
the arrival model gives the run its copies (``arrivals.py``): each joins the run, waiting, at
its delivery time, which is then one more event between the ends. The run stops when no real
end is left (what still waits, waits for pods that never end: they have no estimate), at the
horizon, or after ``max_cycles``.

A gang *starts* when ``min_member`` of its pods are bound, as the trace replay counts it.
"""

from __future__ import annotations

import copy
import dataclasses
import heapq
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scheduler_core.engine.carry import Carry
from scheduler_core.engine.config import EngineConfig
from scheduler_core.engine.cycle import run_cycle
from scheduler_core.engine.decisions import CycleResult, TransitionKind
from scheduler_core.engine.model import Gang, GangMode, GangPhase, Pod, Snapshot
from scheduler_core.engine.runtimes import Estimate, overrun

from .book import Book
from .history import SKIPPED, History
from .room import Room
from .window import Window

#: Why a run stopped.
NO_EVENT = "no event left"
ALL_STARTED = "every gang started"
HORIZON = "horizon"
CYCLES = "cycle cap"

_RERUN = {TransitionKind.DEADLOCK_BROKEN, TransitionKind.PREEMPTED}

#: (pod, gang's source quantile runtime) -> the pod's true runtime from its start, in seconds.
Truth = Callable[[Pod, float], float]


@dataclass
class Run:
    """What one forward run found."""

    quantile: float
    starts: dict[str, float] = field(default_factory=dict)  # gang key -> virtual start time
    timed_out: set[str] = field(default_factory=set)
    stopped_by: str = NO_EVENT
    end: float = 0.0  # virtual time it stopped at
    cycles: int = 0


class Future:
    """``Future(...).run(first)``: continue from the snapshot after the shared first cycle."""

    def __init__(
        self,
        snapshot: Snapshot,
        now: float,
        config: EngineConfig,
        truth: Truth,
        watched: dict[str, int],
        *,
        quantile: float,
        horizon: float,
        max_cycles: int,
        tick: float,
        resolution: float,
        window: Window,
        history: History | None = None,
        arrivals: Sequence[tuple[float, Gang, Sequence[Pod]]] = (),
        room: Room | None = None,
    ) -> None:
        """``room``: the snapshot's (``Room``), when the caller built it for several runs; each
        run changes a copy."""
        self.book = Book(snapshot)
        self.now = now
        self.config = config
        # The cycles after the first decide as the service's would and say nothing of units that
        # fail: only the first cycle's explanations are read (``make.py``).
        self.quiet = dataclasses.replace(config, explain=False)
        self.truth = truth
        self.watched = dict(watched)  # pending gang key -> min_member, until it starts
        self.horizon = horizon
        self.max_cycles = max_cycles
        self.tick = tick
        self.resolution = resolution
        self.window = window
        self.history = history if history is not None else History()
        self.past = 0  # this run's past, as ``history`` numbers it (0: the first cycle)
        self.out = Run(quantile)
        self.carry = Carry()
        self.room = room.copy() if room is not None else Room(snapshot.nodes, snapshot.pods)
        self.modes = {g.key: (config.force_mode or g.mode) == GangMode.NON_STRICT for g in snapshot.gangs}
        self.requests = {pod.key: pod.requests for pod in snapshot.pods}
        self.gang_of = {pod.key: pod.gang for pod in snapshot.pods}
        self.reserved = {pod.key: pod.reserved_node for pod in snapshot.pods if pod.reserved_node}
        self.ends: list[tuple[float, str, int]] = []  # (true end, pod key, binding) of bound pods
        self.binding: Counter[str] = Counter()  # pod key -> how many times it was bound
        self.believed: list[tuple[float, str]] = []  # (the engine's end, pod key): overrun checks
        self.bound_pods: dict[str, Pod] = {}  # pod key -> bound pod (as last seen)
        self.bound_of: Counter[str] = Counter()  # gang key -> its bound pods
        self.gone: set[str] = set()  # pods ended since the last cycle
        self.finished: set[str] = set()  # gangs finished since the last cycle
        for pod in snapshot.pods:
            if pod.node is not None and not pod.terminating:
                self._bound(pod, now)
        self.arrivals = list(arrivals)  # (delivery time, gang, pods) in time order (arrivals.py)
        self.arrived = 0

    def fork(self, truth: Truth, quantile: float) -> Future:
        """A run from the same start with another guess of the truth, before either has run:
        what does not depend on the truth (the pods, the gangs, what is bound) is copied, not
        built again from the snapshot's pods; only the true ends are worked out anew."""
        twin = copy.copy(self)  # the config, window, history and arrivals are shared
        twin.book = self.book.copy()
        twin.truth = truth
        twin.out = Run(quantile)
        twin.carry = Carry()
        twin.room = self.room.copy()
        twin.watched, twin.modes = dict(self.watched), dict(self.modes)
        twin.requests, twin.gang_of, twin.reserved = (
            dict(self.requests),
            dict(self.gang_of),
            dict(self.reserved),
        )
        twin.binding, twin.bound_of = Counter(self.binding), Counter(self.bound_of)
        twin.bound_pods, twin.believed = dict(self.bound_pods), list(self.believed)
        twin.gone, twin.finished = set(), set()
        ends = (
            (twin._true_end(pod, self.now), key, twin.binding[key]) for key, pod in twin.bound_pods.items()
        )
        twin.ends = [entry for entry in ends if entry[0] is not None]
        heapq.heapify(twin.ends)
        return twin

    @property
    def waiting(self) -> dict[str | None, dict[str, Pod]]:
        """Pending pods that hold nothing, by gang (None: pods of no gang or of a settled gang)."""
        return self.book.waiting

    def _bound(self, pod: Pod, now: float) -> None:
        """Remember a bound pod and when it really ends in this run."""
        self.bound_pods[pod.key] = pod
        self.binding[pod.key] += 1
        if pod.gang is not None:
            self.bound_of[pod.gang] += 1
        end = self._true_end(pod, now)
        if end is not None:
            heapq.heappush(self.ends, (end, pod.key, self.binding[pod.key]))
        if pod.duration is not None:
            started = pod.started if pod.started is not None else now
            heapq.heappush(self.believed, (started + pod.duration, pod.key))

    def _true_end(self, pod: Pod, now: float) -> float | None:
        """When ``pod``, bound, really ends in this run; None: never (no estimate)."""
        started = pod.started if pod.started is not None else now
        runtime = self.truth(pod, now - started)
        return started + runtime if math.isfinite(runtime) else None

    # -- the loop ------------------------------------------------------------------------------

    def run(self, first: CycleResult) -> Run:
        """``first``: the cycle at ``now`` on the input snapshot, shared by every run."""
        t = self.now
        self._apply(first, t)
        rerun = _rerun(first)
        while self.watched:
            if self.out.cycles >= self.max_cycles:
                self.out.stopped_by = CYCLES
                break
            if rerun:
                t = t + self.tick
            elif self.ends:
                # The ends within a tenth of the time ahead of the first are taken together, at
                # the last of them (not at the window's edge: an end alone is taken when it is).
                first_end = self.ends[0][0]
                batch = first_end + self.resolution * max(first_end - self.now, 0.0)
                last = max(end for end, _key, _binding in self.ends if end <= batch)
                after = max(t + self.tick, math.ceil(last / self.tick - 1e-9) * self.tick)
                if self.arrived < len(self.arrivals):  # a submission comes first (arrivals.py)
                    due = math.ceil(self.arrivals[self.arrived][0] / self.tick - 1e-9) * self.tick
                    after = min(after, max(t + self.tick, due))
                t = after
            else:
                self.out.stopped_by = NO_EVENT
                break
            if t > self.horizon:
                self.out.stopped_by = HORIZON
                break
            self._end_until(t)
            self._arrive_until(t)
            past = self.history.next(self.past, t, self.gone, self.finished)
            result = self.history.result(past)
            if result is SKIPPED or (
                result is None and not rerun and not self.room.may_start(self._waiting())
            ):
                self.history.record(past, SKIPPED)
                continue  # nothing can start on this room: no cycle until more ends
            self.past = past
            self._refresh(t)
            if result is None:
                result = run_cycle(self._shown(), t, self.quiet, self.carry)
                self.history.record(past, result)
            else:
                self.carry.requeue.clear()  # it did not see this cycle: its book starts again
            self.out.cycles += 1
            self._apply(result, t)
            rerun = _rerun(result)
        else:
            self.out.stopped_by = ALL_STARTED
        self.out.end = t
        self._refresh(t)
        for key in self.watched:
            gang = self.book.gangs.get(key)
            if gang is not None and gang.phase == GangPhase.TIMED_OUT:
                self.out.timed_out.add(key)
        return self.out

    def _shown(self) -> Snapshot:
        """The snapshot without the waiting units the window leaves out (``window.py``)."""
        holders = {self.gang_of.get(key) for key in self.reserved} - {None}
        need = {key: self.watched[key] - self.bound_of[key] for key in self.watched}
        shown = self.window.shown(self.book, self.room, need, self.modes, holders)
        if shown is None:
            return self.book.snapshot()
        return self.book.shown(*shown)

    def _waiting(self):
        """(members still needed, NonStrict?, its pending pods' shapes) per gang or pod that
        waits (``Room.may_start``)."""
        for gang, pods in self.waiting.items():
            if not pods:
                continue
            if gang is None:
                for pod in pods.values():
                    yield 1, False, self.room.groups((pod,))
            else:
                need = self.watched.get(gang, 1) - self.bound_of[gang]
                yield need, self.modes.get(gang, False), self.book.grouped((gang,), self.room)

    def _apply(self, result: CycleResult, t: float) -> None:
        changed = self.book.apply(result, t)
        for release in result.releases:
            if self.reserved.pop(release.pod, None) is not None:
                self.room.take(self.requests[release.pod], release.node, -1)
        for reserve in result.reservations:
            old = self.reserved.get(reserve.pod)
            if old is not None:
                self.room.take(self.requests[reserve.pod], old, -1)
            self.reserved[reserve.pod] = reserve.node
            self.room.take(self.requests[reserve.pod], reserve.node, 1)
        for pod in changed:
            if pod.node is not None:
                old = self.reserved.pop(pod.key, None)
                if old is not None:
                    self.room.take(pod.requests, old, -1)
                self.room.take(pod.requests, pod.node, 1)
                self._bound(pod, t)
            elif pod.key in self.bound_pods:  # evicted: its end is dropped when popped
                last = self.bound_pods.pop(pod.key)
                self.room.take(pod.requests, last.node, -1)
                if pod.gang is not None:
                    self.bound_of[pod.gang] -= 1
        for bind in result.binds:
            need = self.watched.get(bind.gang) if bind.gang is not None else None
            if need is not None and self.bound_of[bind.gang] >= need:
                self.out.starts[bind.gang] = t
                del self.watched[bind.gang]

    def _end_until(self, t: float) -> None:
        """Every pod that really ended by ``t`` is gone; so is a gang all of whose bound pods
        ended (it finished), with the pods it still had waiting."""
        while self.ends and self.ends[0][0] <= t:
            _, key, binding = heapq.heappop(self.ends)
            if key not in self.bound_pods or self.binding[key] != binding:
                continue  # evicted since, or bound again with another end
            pod = self.bound_pods.pop(key)
            self.room.take(pod.requests, pod.node, -1)
            self.gone.add(key)
            if pod.gang is not None:
                self.bound_of[pod.gang] -= 1
                if self.bound_of[pod.gang] <= 0 and pod.gang not in self.watched:
                    self.finished.add(pod.gang)
                    self.gone.update(self.book.forget_waiting(pod.gang))

    def _arrive_until(self, t: float) -> None:
        """The gangs the arrival model submits by ``t`` join the run, waiting."""
        while self.arrived < len(self.arrivals) and self.arrivals[self.arrived][0] <= t:
            _when, gang, pods = self.arrivals[self.arrived]
            self.arrived += 1
            self.book.add(gang, pods)
            self.modes[gang.key] = (self.config.force_mode or gang.mode) == GangMode.NON_STRICT
            for pod in pods:
                self.requests[pod.key] = pod.requests
                self.gang_of[pod.key] = pod.gang

    def _refresh(self, t: float) -> None:
        """The snapshot at ``t``: without the pods gone and the gangs finished, and with the
        overrun rule's estimate for running pods the engine believes ended."""
        late: dict[str, Pod] = {}
        while self.believed and self.believed[0][0] < t:
            _, key = heapq.heappop(self.believed)
            pod = self.bound_pods.get(key)
            if pod is None or pod.duration is None or pod.started is None:
                continue
            if pod.started + pod.duration >= t:
                continue  # an entry of an earlier binding
            seconds = overrun(Estimate(pod.duration, "overrun"), t - pod.started).seconds
            late[key] = dataclasses.replace(pod, duration=seconds)
        for key, pod in late.items():
            self.bound_pods[key] = pod
            heapq.heappush(self.believed, (pod.started + pod.duration, key))
        self.book.replace(late.values())
        self.book.drop(self.gone, self.finished)
        self.gone, self.finished = set(), set()


def _rerun(result: CycleResult) -> bool:
    return bool(result.evictions or result.releases or any(t.kind in _RERUN for t in result.transitions))
