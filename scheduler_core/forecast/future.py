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
preemptor binds on the room it was given), as the trace replay does. Nothing arrives: no
submission is forecast. The run stops when no real end is left (what still waits, waits for
pods that never end: they have no estimate), at the horizon, or after ``max_cycles``.

A gang *starts* when ``min_member`` of its pods are bound, as the trace replay counts it.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from scheduler_core.engine.apply import apply_result
from scheduler_core.engine.carry import Carry
from scheduler_core.engine.config import EngineConfig
from scheduler_core.engine.cycle import run_cycle
from scheduler_core.engine.decisions import CycleResult, TransitionKind
from scheduler_core.engine.model import GangPhase, Pod, Snapshot
from scheduler_core.engine.runtimes import Estimate, overrun

#: Why a run stopped.
NO_EVENT = "no event left"
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
    ) -> None:
        self.snapshot = snapshot
        self.now = now
        self.config = config
        self.truth = truth
        self.watched = dict(watched)  # pending gang key -> min_member, until it starts
        self.horizon = horizon
        self.max_cycles = max_cycles
        self.tick = tick
        self.out = Run(quantile)
        self.carry = Carry()
        self.ends: list[tuple[float, str, int]] = []  # (true end, pod key, binding) of bound pods
        self.binding: Counter[str] = Counter()  # pod key -> how many times it was bound
        self.believed: list[tuple[float, str]] = []  # (the engine's end, pod key): overrun checks
        self.bound_pods: dict[str, Pod] = {}  # pod key -> bound pod (as last seen)
        self.bound_of: Counter[str] = Counter()  # gang key -> its bound pods
        for pod in snapshot.pods:
            if pod.node is not None and not pod.terminating:
                self._bound(pod, now)

    def _bound(self, pod: Pod, now: float) -> None:
        """Remember a bound pod and when it really ends in this run."""
        self.bound_pods[pod.key] = pod
        self.binding[pod.key] += 1
        if pod.gang is not None:
            self.bound_of[pod.gang] += 1
        started = pod.started if pod.started is not None else now
        runtime = self.truth(pod, now - started)
        if math.isfinite(runtime):
            heapq.heappush(self.ends, (started + runtime, pod.key, self.binding[pod.key]))
        if pod.duration is not None:
            heapq.heappush(self.believed, (started + pod.duration, pod.key))

    # -- the loop ------------------------------------------------------------------------------

    def run(self, first: CycleResult) -> Run:
        """``first``: the cycle at ``now`` on the input snapshot, shared by every run."""
        t = self.now
        self._apply(first, t)
        rerun = _rerun(first)
        while True:
            if self.out.cycles >= self.max_cycles:
                self.out.stopped_by = CYCLES
                break
            if not self.watched:
                break
            if rerun:
                t = t + self.tick
            elif self.ends:
                t = max(t + self.tick, math.ceil(self.ends[0][0] / self.tick - 1e-9) * self.tick)
            else:
                self.out.stopped_by = NO_EVENT
                break
            if t > self.horizon:
                self.out.stopped_by = HORIZON
                break
            self._end_until(t)
            self._overrun(t)
            result = run_cycle(self.snapshot, t, self.config, self.carry)
            self.out.cycles += 1
            self._apply(result, t)
            rerun = _rerun(result)
        self.out.end = t
        for gang in self.snapshot.gangs:
            if gang.key in self.watched and gang.phase == GangPhase.TIMED_OUT:
                self.out.timed_out.add(gang.key)
        return self.out

    def _apply(self, result: CycleResult, t: float) -> None:
        self.snapshot = apply_result(self.snapshot, result, t)
        if not (result.binds or result.evictions):
            return
        changed = {bind.pod for bind in result.binds} | {evict.pod for evict in result.evictions}
        for pod in self.snapshot.pods:
            if pod.key not in changed:
                continue
            if pod.node is not None:
                self._bound(pod, t)
            elif pod.key in self.bound_pods:  # evicted: its end is dropped when popped
                del self.bound_pods[pod.key]
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
        gone: set[str] = set()
        finished: set[str] = set()
        while self.ends and self.ends[0][0] <= t:
            _, key, binding = heapq.heappop(self.ends)
            if key not in self.bound_pods or self.binding[key] != binding:
                continue  # evicted since, or bound again with another end
            pod = self.bound_pods.pop(key)
            gone.add(key)
            if pod.gang is not None:
                self.bound_of[pod.gang] -= 1
                if self.bound_of[pod.gang] <= 0 and pod.gang not in self.watched:
                    finished.add(pod.gang)
        if not gone:
            return
        snapshot = self.snapshot
        pods = tuple(p for p in snapshot.pods if p.key not in gone and (p.gang not in finished or p.node))
        gangs = snapshot.gangs
        if finished:
            gangs = tuple(g for g in gangs if g.key not in finished)
        self.snapshot = dataclasses.replace(snapshot, pods=pods, gangs=gangs)

    def _overrun(self, t: float) -> None:
        """Running pods the engine believes ended by ``t`` get the overrun rule's estimate."""
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
        if not late:
            return
        for key, pod in late.items():
            self.bound_pods[key] = pod
            heapq.heappush(self.believed, (pod.started + pod.duration, key))
        pods = tuple(late.get(p.key, p) for p in self.snapshot.pods)
        self.snapshot = dataclasses.replace(self.snapshot, pods=pods)


def _rerun(result: CycleResult) -> bool:
    return bool(result.evictions or result.releases or any(t.kind in _RERUN for t in result.transitions))
