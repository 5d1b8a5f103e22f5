"""Replaying a trace in virtual time: a discrete-event loop around the service's own engine.

The loop, for one policy:

1. Take the next event (a submission, a job's end, a wake-up) and round its time up to the next
   scheduling tick (``tick``, 1 s: gangsched's cycle interval). Every event up to that tick is
   handled first: ends free their pods, submissions add a gang and its pods to the queue.
2. Run ``run_cycle`` at the tick only if something changed that could let work start: a job
   ended, or a new job has a pod that fits somewhere on the free capacity (if none of its pods
   fits on any node, no policy can place anything of it, and the rest of the queue was already
   at a fixed point). ``apply_result`` gives the next state, as in the service.
3. A cycle that evicted or released something is followed by another at the same tick (the
   preemptor binds on the room it was nominated, the losers of a broken deadlock re-queue).
4. A job *starts* when ``min_workers`` of its pods are bound (the gang runs) and ends
   ``duration`` later; pods bound before that hold resources without doing work (the waste).
   A job that is preempted starts over.
5. The replay stops when no event is left and nothing can progress, or at the virtual time cap.

The engine sees every pod that holds resources and the first ``queue_window`` pending jobs in
its own queue order (priority, rank, submission, trace order), not the whole backlog: a scheduler
looking at a bounded queue, like Slurm's ``bf_max_job_test``. When a cycle started jobs while
jobs were left out, the next tick runs a cycle too, so the backlog moves up without waiting for
an event.
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from scheduler_core.engine import apply_result, run_cycle
from scheduler_core.engine.decisions import CycleResult, TransitionKind
from scheduler_core.engine.model import Gang, GangMode, HeadOfLine, Pod, Snapshot, permit_quorum
from scheduler_core.engine.queue import rank

from .clusters import Cluster
from .policies import Policy
from .traces import Trace

NAMESPACE = "sim"
DEFAULT_TIME_CAP_S = 30 * 24 * 3600.0  # after the last submission
_RERUN = {TransitionKind.DEADLOCK_BROKEN, TransitionKind.PREEMPTED}


@dataclass
class ReplayOptions:
    tick: float = 1.0
    queue_window: int = 256
    time_cap: float = DEFAULT_TIME_CAP_S  # virtual seconds after the last submission
    max_cycles_per_tick: int = 8
    # Leave out of a cycle the jobs it is certain to fail (see _Loop._view): no decision changes,
    # a test replays with and without; off only to check that.
    skip_certain_failures: bool = True
    progress: Callable[[float], None] | None = None  # fraction of the trace's jobs ended


@dataclass
class Timeline:
    """State after each tick that ran a cycle or handled an event, for the plots."""

    times: list[float] = field(default_factory=list)
    queued: list[int] = field(default_factory=list)  # submitted jobs not running yet
    running: list[int] = field(default_factory=list)
    useful: list[np.ndarray] = field(default_factory=list)  # per resource, of running jobs
    held: list[np.ndarray] = field(default_factory=list)  # per resource, of jobs not running


@dataclass
class Replay:
    """What happened to every job, plus integrals and timings, for ``metrics.summarise``."""

    policy: str
    resources: tuple[str, ...]
    capacity: np.ndarray
    submit: np.ndarray
    start: np.ndarray  # NaN: never started (or preempted and not restarted)
    finish: np.ndarray  # NaN: not finished
    deadlocked: np.ndarray  # bool: not running at the end with members bound or reserved
    demand: np.ndarray  # per job: what all its workers ask of ``main_resource`` (cpu in cores)
    useful_seconds: np.ndarray  # per resource: integral of what running jobs held
    held_seconds: np.ndarray  # per resource: integral of what jobs not yet running held
    end_time: float
    stopped_by: str
    time_cap: float
    cycles: int
    cycle_seconds: list[float]
    preemptions: int
    timeline: Timeline
    wall_seconds: float = 0.0
    permit_timeouts: int = 0  # coscheduling: holds of pods at Permit that timed out
    left_out: int = 0  # jobs left out of cycles that were certain to fail them (_Bounds)
    overtake_limit_s: float = 0.0  # the queue order's limit (0: FIFO), from the policy's config


@dataclass
class _Job:
    index: int
    gang: Gang
    pods: list[Pod]
    request: np.ndarray  # per resource of the replay
    min_workers: int
    duration: float
    priority: int
    order: tuple  # queue order among pending jobs
    start: float | None = None
    epoch: int = 0
    bound: int = 0
    held: int = 0  # bound or reserved
    view: list[Pod] | None = None  # what the engine sees of a running job (see _Loop._merge)
    merged: int = 0  # how many pods at the front of ``view`` stand for bound pods
    hold_since: float | None = None  # permit timeout: when its pods began waiting at Permit

    def contribution(self) -> tuple[np.ndarray, np.ndarray]:
        if self.start is not None:
            return self.request * self.bound, self.request * 0
        return self.request * 0, self.request * self.held


class _Loop:
    def __init__(self, trace: Trace, cluster: Cluster, policy: Policy, options: ReplayOptions) -> None:
        self.trace = trace
        self.policy = policy
        # One priority: preemption can never find a victim (it needs strictly lower priority),
        # so switching it off changes no decision and saves building the victims every cycle.
        single = len({job.priority for job in trace.jobs}) <= 1
        self.config = dataclasses.replace(policy.config, preemption=policy.config.preemption and not single)
        self.options = options
        self.nodes = cluster.nodes
        capacity = cluster.capacity()
        self.resources = tuple(sorted(capacity))
        self.capacity = np.array([capacity[r] for r in self.resources], dtype=np.float64)
        self.node_index = {node.name: i for i, node in enumerate(self.nodes)}
        self.alloc = np.array(
            [[node.allocatable.get(r, 0) for r in self.resources] for node in self.nodes], dtype=np.int64
        )
        self.used = np.zeros_like(self.alloc)
        count = len(trace.jobs)
        self.submit = np.array([job.submit for job in trace.jobs], dtype=np.float64)
        self.start = np.full(count, np.nan)
        self.finish = np.full(count, np.nan)
        self.jobs: dict[int, _Job] = {}
        self.by_gang: dict[str, _Job] = {}
        self.pending: list[tuple] = []  # queue order of jobs not running
        self.running: dict[int, _Job] = {}
        self.holding: set[int] = set()  # jobs not running whose pods hold resources
        self.arrivals = sorted(range(count), key=lambda i: (trace.jobs[i].submit, i))
        self.next_arrival = 0
        self.ends: list[tuple[float, int, int]] = []  # (time, job index, epoch)
        # Permit timeouts of gangs holding pods at Permit: (deadline, job index, hold_since).
        self.permit_timeout = policy.permit_timeout_s
        self.deadlines: list[tuple[float, int, float]] = []
        self.wake: float | None = None
        self.clock = 0.0
        self.useful = np.zeros(len(self.resources))
        self.held = np.zeros(len(self.resources))
        self.useful_seconds = np.zeros(len(self.resources))
        self.held_seconds = np.zeros(len(self.resources))
        self.cycles = 0
        self.cycle_seconds: list[float] = []
        self.preemptions = 0
        self.permit_timeouts = 0
        self.left_out = 0
        self.timeline = Timeline()
        self.finished = 0
        # Merging a running job's bound pods is exact when nothing running can ever be evicted.
        self.merge = not self.config.preemption
        self._merged_requests: dict[tuple, dict[str, int]] = {}
        self.incomplete: set[int] = set()  # running jobs with members beyond min_workers to place
        self.width = max(len(str(count - 1)), 1)

    # -- the loop ----------------------------------------------------------------------------

    def run(self) -> Replay:
        last_submit = float(self.submit.max()) if len(self.submit) else 0.0
        cap = last_submit + self.options.time_cap
        stopped_by = "no event left"
        while True:
            upcoming = self._next_event_time()
            if upcoming is None:
                break
            tick = math.ceil(upcoming / self.options.tick - 1e-9) * self.options.tick
            if tick > cap:
                stopped_by = "virtual time cap"
                break
            changed = self._handle_events(tick)
            self._advance(tick)
            if changed:
                self._schedule(tick)
            self._record(tick)
        end = self.clock
        if stopped_by == "virtual time cap":
            self._advance(cap)
            end = cap
        deadlocked = np.zeros(len(self.submit), dtype=bool)
        for job in self.jobs.values():
            if job.start is None and job.held > 0:
                deadlocked[job.index] = True
        return Replay(
            policy=self.policy.name,
            resources=self.resources,
            capacity=self.capacity,
            submit=self.submit,
            start=self.start,
            finish=self.finish,
            deadlocked=deadlocked,
            demand=self._demand(),
            useful_seconds=self.useful_seconds,
            held_seconds=self.held_seconds,
            end_time=end,
            stopped_by=stopped_by,
            time_cap=cap,
            cycles=self.cycles,
            cycle_seconds=self.cycle_seconds,
            preemptions=self.preemptions,
            permit_timeouts=self.permit_timeouts,
            timeline=self.timeline,
            left_out=self.left_out,
            overtake_limit_s=self.config.overtake_limit_s,
        )

    def _demand(self) -> np.ndarray:
        main = main_resource(self.resources)
        unit = 1000.0 if main == "cpu" else 1.0
        return np.array([job.workers * job.requests.get(main, 0) / unit for job in self.trace.jobs])

    def _next_event_time(self) -> float | None:
        times = []
        if self.next_arrival < len(self.arrivals):
            times.append(self.submit[self.arrivals[self.next_arrival]])
        if self.ends:
            times.append(self.ends[0][0])
        if self._next_deadline() < math.inf:
            times.append(self._next_deadline())
        if self.wake is not None:
            times.append(self.wake)
        return float(min(times)) if times else None

    def _handle_events(self, tick: float) -> bool:
        """Ends and submissions up to ``tick``, in time order; True if a cycle may place something."""
        changed = self.wake is not None and self.wake <= tick
        if changed:
            self.wake = None
        while True:
            end = self.ends[0][0] if self.ends else math.inf
            arrival = (
                self.submit[self.arrivals[self.next_arrival]]
                if self.next_arrival < len(self.arrivals)
                else math.inf
            )
            deadline = self._next_deadline()
            if min(end, arrival, deadline) > tick:
                return changed
            if deadline < min(end, arrival):
                when, index, _since = heapq.heappop(self.deadlines)
                self._advance(when)
                self._permit_timeout(self.jobs[index], when)
                changed = True
            elif end <= arrival:
                when, index, epoch = heapq.heappop(self.ends)
                job = self.jobs.get(index)
                if job is not None and job.epoch == epoch:
                    self._advance(when)
                    self._end(job, when)
                    changed = True
            else:
                index = self.arrivals[self.next_arrival]
                self.next_arrival += 1
                self._advance(float(arrival))
                job = self._arrive(index)
                changed = changed or self._could_place(job)

    def _next_deadline(self) -> float:
        """The earliest permit timeout still due (entries of holds that ended are dropped)."""
        while self.deadlines:
            _when, index, since = self.deadlines[0]
            job = self.jobs.get(index)
            if job is not None and job.start is None and job.hold_since == since:
                return self.deadlines[0][0]
            heapq.heappop(self.deadlines)
        return math.inf

    def _advance(self, when: float) -> None:
        if when > self.clock:
            self.useful_seconds += self.useful * (when - self.clock)
            self.held_seconds += self.held * (when - self.clock)
            self.clock = when

    # -- jobs --------------------------------------------------------------------------------

    def _arrive(self, index: int) -> _Job:
        spec = self.trace.jobs[index]
        name = f"job-{index:0{self.width}d}"
        gang = Gang(
            NAMESPACE,
            name,
            min_member=spec.min_workers,
            total_number=spec.workers,
            created=spec.submit,
            priority=spec.priority,
            queue=spec.queue,
        )
        requests = dict(spec.requests)  # one mapping shared by the gang's pods (engine caches by it)
        digits = len(str(spec.workers - 1))
        pods = [
            Pod(
                NAMESPACE,
                f"{name}-{i:0{digits}d}",
                requests,
                priority=spec.priority,
                created=spec.submit,
                gang=gang.key,
                duration=spec.duration,
            )
            for i in range(spec.workers)
        ]
        request = np.array([spec.requests.get(r, 0) for r in self.resources], dtype=np.float64)
        job = _Job(
            index,
            gang,
            pods,
            request,
            spec.min_workers,
            spec.duration,
            spec.priority,
            self._order(spec.priority, spec.submit, pods, index),
        )
        self.jobs[index] = job
        self.by_gang[gang.key] = job
        bisect.insort(self.pending, job.order)
        return job

    def _order(self, priority: int, created: float, pods: list[Pod], index: int) -> tuple:
        """The engine's queue order (``Unit.sort_key``; job names sort as indices)."""
        return (-priority, rank(created, pods, self.config.overtake_limit_s), created, index)

    def _could_place(self, job: _Job) -> bool:
        """Could a cycle place anything of this new job? If not, the cycle can be skipped."""
        if self.config.preemption and any(other.priority < job.priority for other in self.running.values()):
            return True
        wanted = job.request > 0
        free = self.alloc[:, wanted] - self.used[:, wanted]
        return bool(np.any(np.all(free >= job.request[wanted], axis=1)))

    def _end(self, job: _Job, when: float) -> None:
        self._account(job, -1)
        self.finish[job.index] = when
        del self.running[job.index]
        self.incomplete.discard(job.index)
        del self.jobs[job.index]
        del self.by_gang[job.gang.key]
        self.finished += 1
        if self.options.progress is not None and self.finished % 100 == 0:
            self.options.progress(self.finished / len(self.submit))

    def _permit_timeout(self, job: _Job, when: float) -> None:
        """Coscheduling's permit timeout: the waiting pods are rejected, the group goes to the back.

        Unreserve rejects every waiting pod of the group and records the failure, whose time
        becomes the group's place in the queue (QueueSort uses the last failure, not the
        creation, to avoid head-of-line blocking): behind everything submitted before it.
        """
        self._account(job, -1)
        self._set_pods(
            job,
            [
                dataclasses.replace(pod, reserved_node=None) if pod.reserved_node is not None else pod
                for pod in job.pods
            ],
        )
        self._account(job, +1)
        if not job.held:
            self.holding.discard(job.index)
        job.hold_since = None
        self.pending.pop(bisect.bisect_left(self.pending, job.order))
        job.order = self._order(job.priority, when, job.pods, job.index)
        job.gang = dataclasses.replace(job.gang, created=when)
        bisect.insort(self.pending, job.order)
        self.permit_timeouts += 1

    def _account(self, job: _Job, sign: int) -> None:
        """Take away (-1) or add back (+1) what a job's pods use and hold, around a change to them."""
        useful, held = job.contribution()
        self.useful += sign * useful
        self.held += sign * held
        self._move(job.pods, sign, job.request)

    @staticmethod
    def _set_pods(job: _Job, pods: list[Pod]) -> None:
        job.pods = pods
        job.bound = sum(1 for pod in pods if pod.node is not None)
        job.held = job.bound + sum(1 for pod in pods if pod.node is None and pod.reserved_node)

    def _move(self, pods: list[Pod], sign: int, request: np.ndarray) -> None:
        where = [self.node_index[p.node or p.reserved_node] for p in pods if p.node or p.reserved_node]
        if where:
            np.add.at(self.used, np.array(where), sign * request.astype(np.int64))

    # -- cycles ------------------------------------------------------------------------------

    def _schedule(self, tick: float) -> None:
        for _ in range(self.options.max_cycles_per_tick):
            if not self.pending and not self.incomplete:
                return  # nothing waits: a cycle would place nothing
            snapshot, offsets, truncated = self._view()
            started = time.perf_counter()
            result = run_cycle(snapshot, tick, self.config)
            self.cycle_seconds.append(time.perf_counter() - started)
            self.cycles += 1
            began = self._apply(snapshot, result, offsets, tick)
            if truncated and began:
                self.wake = tick + self.options.tick
            rerun = result.evictions or result.releases or any(t.kind in _RERUN for t in result.transitions)
            if not rerun:
                return

    def _view(self) -> tuple[Snapshot, dict[int, tuple[int, int, int]], bool]:
        """What the engine sees: running and holding jobs, and pending jobs that matter.

        A pending job that cannot place anything on the free capacity at the start of the cycle
        places nothing during it either (capacity only shrinks within a cycle), so leaving it out
        changes no decision, with two exceptions the filter keeps: the first such job that could
        run on an empty cluster becomes the head of the queue (RESERVE and BLOCK: it limits or
        stops what is behind it), and with preemption or deadlock breaking at work capacity can
        grow within a cycle (then no job is filtered). Of the jobs that pass, the first
        ``queue_window`` are the window; of those, the ones ``_Bounds`` proves cannot start in
        this cycle are left out too (but still count against the window, so the window is the
        same), except the first, which may be the head.
        """
        chosen: list[_Job] = list(self.running.values())
        room = self.options.queue_window
        exact = not self.config.preemption and not (self.config.deadlock_resolution and self.holding)
        wants_head = self.config.head_of_line != HeadOfLine.NONE
        free = self.alloc - self.used
        copies: dict[bytes, tuple[int, int]] = {}
        bounds = _Bounds(self.config, self.options.skip_certain_failures)
        truncated = False
        for order in self.pending:
            job = self.jobs[order[-1]]
            if job.held:
                continue  # holders are all shown, below
            if not exact:
                if room == 0:
                    truncated = True
                    break
                chosen.append(job)
                room -= 1
                continue
            shape = job.request.tobytes()
            if shape not in copies:
                copies[shape] = (self._copies(free, job.request), self._copies(self.alloc, job.request))
            now, empty = copies[shape]
            if now >= self._need(job):
                if room == 0:
                    truncated = True
                    if not wants_head:
                        break
                    continue
                room -= 1
                if bounds.certain_to_fail(job, shape, now, empty):
                    if wants_head:  # the first failure of the cycle may be the head: keep it
                        chosen.append(job)
                        wants_head = False
                    else:
                        self.left_out += 1
                    continue
                chosen.append(job)
            elif wants_head and empty >= job.min_workers:
                chosen.append(job)  # the head of the queue
                if room == 0:
                    break
                wants_head = False
        chosen.extend(self.jobs[index] for index in sorted(self.holding))
        pods: list[Pod] = []
        offsets: dict[int, tuple[int, int, int]] = {}
        for position, job in enumerate(chosen):
            seen = job.view if job.view is not None else job.pods
            offsets[job.index] = (len(pods), len(pods) + len(seen), position)
            pods.extend(seen)
        snapshot = Snapshot(self.nodes, tuple(pods), tuple(job.gang for job in chosen))
        return snapshot, offsets, truncated

    def _need(self, job: _Job) -> int:
        """Copies of its pod that must fit now for the engine to place anything of the job."""
        if not self.config.gangs or self.config.force_mode == GangMode.NON_STRICT:
            return 1  # pods placed one by one, or kept as reservations one by one
        if self.config.permit_hold > 0:
            return permit_quorum(job.min_workers, self.config.permit_hold)  # kept at Permit
        return job.min_workers

    @staticmethod
    def _copies(free: np.ndarray, request: np.ndarray) -> int:
        wanted = request > 0
        return int((np.maximum(free[:, wanted], 0) // request[wanted].astype(np.int64)).min(axis=1).sum())

    def _apply(
        self, snapshot: Snapshot, result: CycleResult, offsets: dict[int, tuple[int, int, int]], tick: float
    ) -> bool:
        touched = {d.gang for d in itertools.chain(result.binds, result.reservations) if d.gang}
        touched.update(d.gang for d in itertools.chain(result.releases, result.evictions) if d.gang)
        touched.update(t.gang for t in result.transitions)
        if not touched:
            return False
        after = apply_result(snapshot, result, tick)
        began = False
        # In gang-key (trace) order: a set of strings iterates in an order that changes with the
        # process's hash seed, and the order jobs start in is the order the next snapshot lists
        # them (the backfill plan breaks ties between equal end times by that order).
        for key in sorted(touched):
            job = self.by_gang.get(key)
            if job is None:
                continue
            first, last, position = offsets[job.index]
            self._account(job, -1)
            if job.view is not None:
                bound = [pod for pod in job.pods if pod.node is not None]
                self._set_pods(job, bound + list(after.pods[first + job.merged : last]))
            else:
                self._set_pods(job, list(after.pods[first:last]))
            job.gang = after.gangs[position]
            if job.start is None and job.bound >= job.min_workers:
                began = True
                self._begin(job, tick)
            elif job.start is not None and job.bound < job.min_workers:
                self._stop(job)
            if job.start is not None and job.bound < len(job.pods):
                self.incomplete.add(job.index)
            else:
                self.incomplete.discard(job.index)
            if job.start is not None and self.merge:
                self._merge(job)
            else:
                job.view, job.merged = None, 0
            if job.start is None and job.held:
                self.holding.add(job.index)
            else:
                self.holding.discard(job.index)
            if self.permit_timeout is not None:
                self._watch_permit(job, tick)
            self._account(job, +1)
        return began

    def _watch_permit(self, job: _Job, tick: float) -> None:
        """Start the permit clock of a gang that began holding pods at Permit; stop it otherwise."""
        if job.start is None and job.held > job.bound:
            if job.hold_since is None:
                job.hold_since = tick
                heapq.heappush(self.deadlines, (tick + self.permit_timeout, job.index, tick))
        else:
            job.hold_since = None

    def _merge(self, job: _Job) -> None:
        """The engine's view of a running job: its bound pods as one pod per (node, start).

        Exact for the engine when no running pod can be evicted (no preemption, or a single
        priority): bound pods only add to their node's usage and, for backfilling, end at
        start + duration, both of which a merged pod with the summed request keeps. It turns
        thousands of running pods into a few hundred, and a cycle's cost is linear in pods.
        """
        groups: dict[tuple[str, float | None], int] = {}
        pending = []
        for pod in job.pods:
            if pod.node is None:
                pending.append(pod)
            else:
                key = (pod.node, pod.started)
                groups[key] = groups.get(key, 0) + 1
        base = job.pods[0]
        merged = [
            Pod(
                NAMESPACE,
                f"{job.gang.name}-bound-{n}",
                self._requests(base.requests, count),
                priority=base.priority,
                created=base.created,
                gang=job.gang.key,
                node=node,
                started=started,
                duration=base.duration,
            )
            for n, ((node, started), count) in enumerate(groups.items())
        ]
        job.view, job.merged = merged + pending, len(merged)

    def _requests(self, requests: dict[str, int], count: int) -> dict[str, int]:
        """One mapping per (request, count), shared, so the engine's identity cache hits."""
        key = (tuple(sorted(requests.items())), count)
        found = self._merged_requests.get(key)
        if found is None:
            found = self._merged_requests[key] = {r: a * count for r, a in requests.items()}
        return found

    def _begin(self, job: _Job, tick: float) -> None:
        job.start = tick
        self.start[job.index] = tick
        self.pending.pop(bisect.bisect_left(self.pending, job.order))
        self.running[job.index] = job
        heapq.heappush(self.ends, (tick + job.duration, job.index, job.epoch))

    def _stop(self, job: _Job) -> None:
        """Preempted below min_workers: the job starts over when its gang is placed again."""
        job.start = None
        job.epoch += 1
        self.start[job.index] = np.nan
        self.preemptions += 1
        del self.running[job.index]
        bisect.insort(self.pending, job.order)

    def _record(self, tick: float) -> None:
        timeline = self.timeline
        timeline.times.append(tick)
        timeline.queued.append(len(self.pending))
        timeline.running.append(len(self.running))
        timeline.useful.append(self.useful.copy())
        timeline.held.append(self.held.copy())


class _Bounds:
    """Which jobs of the window a cycle is certain to fail, without running it.

    Jobs of one *class* (the same pod request and the same ``min_workers``, Strict gangs or single
    pods) compete for the same copies of that pod on the free capacity. Capacity only shrinks
    within a cycle (no preemption, no deadlock breaking in exact mode), so with ``copies`` copies
    free at its start:

    * Strict gangs: at most ``copies // min_workers`` jobs of the class can start, each taking at
      least ``min_workers`` copies, and once one of them fails every later one fails too (it
      sees less). So if ``K = copies // min_workers`` earlier jobs of the class were in the
      window, either all K started and fewer than ``min_workers`` copies are left, or one failed:
      the next one fails either way. With ``permit_hold`` a failing gang may keep what it placed
      if that is at least its quorum ``q`` (``permit_quorum``); it places every copy left when it
      fails, so each earlier job either took ``q`` copies or more (started, or kept them) or
      found fewer than ``q``, and after ``copies // q`` of them the next one places fewer than
      ``q`` and keeps nothing: it fails as if it had not been tried. Behind a RESERVE head a
      job's room also depends on its duration (ending before the head's shadow time lifts the
      limit), so there only earlier jobs no longer than it count: any of them that failed had at
      least as much room.
    * Pods placed one by one (``pod``), and NonStrict gangs (``nonstrict``): every pod of an
      earlier job of the class either took a copy (bound, or kept as a reservation) or found
      none, so once the earlier jobs' pods number ``copies``, none is left and the job places
      nothing, so it reserves nothing either. A NonStrict gang that cannot run even on the
      empty cluster drops what it placed, so it takes nothing and does not count.

    A job left out would have placed nothing and failed; the first of them is still shown,
    since under RESERVE and BLOCK the first failure of a cycle becomes the head.
    """

    def __init__(self, config, enabled: bool) -> None:
        self.forced = config.force_mode
        self.pods = not config.gangs or config.force_mode == GangMode.NON_STRICT
        # Pods and NonStrict gangs keep what they placed only when every failing unit does (NONE;
        # behind a RESERVE or BLOCK head a NonStrict gang keeps nothing): otherwise no bound.
        self.enabled = enabled and (not self.pods or config.head_of_line == HeadOfLine.NONE)
        self.hold = config.permit_hold
        self.by_duration = config.head_of_line == HeadOfLine.RESERVE
        self.seen: dict[tuple, list[float]] = {}  # class -> earlier durations (RESERVE: sorted)
        self.pods_seen: dict[bytes, int] = {}

    def certain_to_fail(self, job: _Job, shape: bytes, copies: int, empty: int) -> bool:
        if not self.enabled:
            return False
        if self.pods:
            earlier = self.pods_seen.get(shape, 0)
            if empty >= job.min_workers:
                self.pods_seen[shape] = earlier + len(job.pods)
            return earlier >= copies
        if (self.forced or job.gang.mode) != GangMode.STRICT:
            return False
        durations = self.seen.setdefault((shape, job.min_workers), [])
        if self.by_duration:
            earlier = bisect.bisect_right(durations, job.duration)
            bisect.insort(durations, job.duration)
        else:
            earlier = len(durations)
            durations.append(job.duration)
        quorum = permit_quorum(job.min_workers, self.hold) if self.hold > 0 else job.min_workers
        return earlier >= copies // quorum


def main_resource(resources: tuple[str, ...]) -> str:
    """What a cluster is judged by: GPUs if it has any, else CPUs."""
    gpus = [r for r in resources if r.endswith("gpu")]
    return gpus[0] if gpus else ("cpu" if "cpu" in resources else resources[0])


def replay(trace: Trace, cluster: Cluster, policy: Policy, options: ReplayOptions | None = None) -> Replay:
    began = time.perf_counter()
    result = _Loop(trace, cluster, policy, options or ReplayOptions()).run()
    result.wall_seconds = time.perf_counter() - began
    return result
