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
its own queue order (priority, rank, submission, trace order), not the whole backlog, as Slurm's
``bf_max_job_test`` bounds its queue. When a cycle started jobs while jobs were left out, the
next tick runs a cycle too, so the backlog moves up without waiting for an event.

This module is the loop and its events; ``engine_view.py`` builds each cycle's snapshot and
carries its result back into the jobs (``jobs.py``), ``bounds.py`` proves which jobs of the window
a cycle cannot start, and ``outcome.py`` is what a replay returns.
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
import math
import time

import numpy as np

from scheduler_core.engine import run_cycle
from scheduler_core.engine.decisions import TransitionKind
from scheduler_core.engine.model import Gang, Pod
from scheduler_core.engine.queue import rank

from .clusters import Cluster
from .engine_view import EngineView
from .forecast_book import ForecastBook
from .jobs import NAMESPACE, Job
from .outcome import Replay, Timeline, job_demand
from .policies import Policy
from .queue_book import QueueBook
from .reclaim_due import ReclaimDue
from .replay_options import ReplayOptions
from .runtime_updates import RuntimeUpdates
from .tenants import DEFAULT_QUEUES, assign, parse_queues
from .topology_book import TopologyBook
from .topology_rule import TopologyRule
from .traces import Trace

_RERUN = {TransitionKind.DEADLOCK_BROKEN, TransitionKind.PREEMPTED}


class _Loop(EngineView, RuntimeUpdates):
    def __init__(self, trace: Trace, cluster: Cluster, policy: Policy, options: ReplayOptions) -> None:
        tree = options.queues or (parse_queues(DEFAULT_QUEUES) if policy.queues else None)
        self.trace = trace = assign(trace, tree) if tree is not None else trace
        self.policy = policy
        # One priority: preemption can never find a victim (it needs strictly lower priority),
        # so switching it off changes no decision and saves building the victims every cycle.
        # Reclaim (with queues) needs it on: it takes from other queues whatever their priority.
        single = len({job.priority for job in trace.jobs}) <= 1 and not policy.queues
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
        self.rule = TopologyRule(self.nodes, self.alloc, options.topology)
        self.topologies = (self.rule.topology,) if policy.topology else ()  # Snapshot.topologies
        self.spans = TopologyBook(self.nodes)
        queues = tree.queues(capacity) if tree is not None else ()
        self.queues = queues if policy.queues else ()  # what the engine sees (Snapshot.queues)
        self.book = QueueBook(queues, tree.leaf_names, self.resources, self.capacity) if tree else None
        count = len(trace.jobs)
        self.submit = np.array([job.submit for job in trace.jobs], dtype=np.float64)
        self.start = np.full(count, np.nan)
        self.finish = np.full(count, np.nan)
        self.jobs: dict[int, Job] = {}
        self.by_gang: dict[str, Job] = {}
        self.pending: list[tuple] = []  # queue order of jobs not running
        self.running: dict[int, Job] = {}
        self.holding: set[int] = set()  # jobs not running whose pods hold resources
        self.arrivals = sorted(range(count), key=lambda i: (trace.jobs[i].submit, i))
        self.next_arrival = 0
        self.ends: list[tuple[float, int, int]] = []  # (time, job index, epoch)
        # Permit timeouts of gangs holding pods at Permit: (deadline, job index, hold_since).
        self.permit_timeout = policy.permit_timeout_s
        self.deadlines: list[tuple[float, int, float]] = []
        self.wake: float | None = None
        delays = {queue.name: queue.reclaim_delay_s for queue in self.queues}
        beyond = self.queues and policy.config.reclaim == "fair-share"  # 0: reclaim never waits
        self.reclaim_due = ReclaimDue(policy.config.reclaim_delay_s, delays) if beyond else ReclaimDue(0.0)
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
        self._runtimes_open(options.runtimes)
        wanted = options.forecasts and policy.name == "gangsched"
        self.forecasts = ForecastBook(self) if wanted else None

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
            if self.forecasts is not None:  # forecasts due before it, on the state as it is
                self.forecasts.until(min(tick, cap))
            if tick > cap:
                stopped_by = "virtual time cap"
                break
            changed = self._handle_events(tick)
            self._advance(tick)
            if changed:
                self._schedule(tick)
            if self.forecasts is not None:
                self.forecasts.after(tick)
            self._record(tick)
        end = self.clock
        if stopped_by == "virtual time cap":
            self._advance(cap)
            end = cap
        deadlocked = np.zeros(len(self.submit), dtype=bool)
        for job in self.jobs.values():
            if job.start is None and job.held > 0:
                deadlocked[job.index] = True
        runtimes, heads = self._runtimes_summary()
        return Replay(
            policy=self.policy.name,
            resources=self.resources,
            capacity=self.capacity,
            submit=self.submit,
            start=self.start,
            finish=self.finish,
            deadlocked=deadlocked,
            demand=job_demand(self.trace.jobs, self.resources),
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
            queues=self.book.summary(end, trace=self.trace) if self.book is not None else None,
            overtake_limit_s=self.config.overtake_limit_s,
            topology=self.spans.summary(),
            runtimes=runtimes,
            heads=heads,
            forecasts=self.forecasts.summary(self.start) if self.forecasts is not None else None,
        )

    def _next_event_time(self) -> float | None:
        times = [self._next_deadline(), self.reclaim_due.next_time(self._waiting)]
        if self.next_arrival < len(self.arrivals):
            times.append(self.submit[self.arrivals[self.next_arrival]])
        if self.ends:
            times.append(self.ends[0][0])
        if self.wake is not None:
            times.append(self.wake)
        soonest = float(min(times))
        return soonest if soonest < math.inf else None

    def _handle_events(self, tick: float) -> bool:
        """Ends and submissions up to ``tick``, in time order; True if a cycle may place something."""
        changed = self.wake is not None and self.wake <= tick
        if changed:
            self.wake = None
        changed = self.reclaim_due.reached(tick, self._waiting) or changed
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
                self.reclaim_due.arrived(index, float(arrival), self.trace.jobs[index].queue)
                changed = changed or self._could_place(job)

    def _waiting(self, index: int) -> bool:  # submitted, not running, not finished
        return index not in self.running and math.isnan(self.finish[index])

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

    def _arrive(self, index: int) -> Job:
        spec = self.trace.jobs[index]
        name = f"job-{index:0{self.width}d}"
        request = np.array([spec.requests.get(r, 0) for r in self.resources], dtype=np.float64)
        gang = Gang(
            NAMESPACE,
            name,
            min_member=spec.min_workers,
            total_number=spec.workers,
            created=spec.submit,
            priority=spec.priority,
            queue=spec.queue,
            topology=self.rule.constraint(request, spec.workers) if self.policy.topology else None,
        )
        requests = dict(spec.requests)  # one mapping shared by the gang's pods (engine caches by it)
        seen = self.runtimes.pending(index)  # what the engine is told (oracle: spec.duration)
        digits = len(str(spec.workers - 1))
        pods = [
            Pod(
                NAMESPACE,
                f"{name}-{i:0{digits}d}",
                requests,
                priority=spec.priority,
                created=spec.submit,
                gang=gang.key,
                duration=seen.seconds,
            )
            for i in range(spec.workers)
        ]
        job = Job(
            index,
            gang,
            pods,
            request,
            spec.min_workers,
            spec.duration,
            spec.priority,
            self._order(spec.priority, spec.submit, pods, index),
            seen=seen,
        )
        if self.book is not None:
            job.queue = self.book.index(spec.queue)
            self.book.ask(job.queue, request * spec.workers)
        self.jobs[index] = job
        self.by_gang[gang.key] = job
        bisect.insort(self.pending, job.order)
        self._waits(job)
        return job

    def _order(self, priority: int, created: float, pods: list[Pod], index: int) -> tuple:
        """The engine's queue order (``Unit.sort_key``; job names sort as indices)."""
        return (-priority, rank(created, pods, self.config.overtake_limit_s), created, index)

    def _could_place(self, job: Job) -> bool:
        """Could a cycle place anything of this new job? If not, the cycle can be skipped."""
        if self.config.preemption and any(other.priority < job.priority for other in self.running.values()):
            return True
        if self.queues and self.running:
            return True  # it may reclaim
        wanted = job.request > 0
        free = self.alloc[:, wanted] - self.used[:, wanted]
        return bool(np.any(np.all(free >= job.request[wanted], axis=1)))

    def _end(self, job: Job, when: float) -> None:
        self._account(job, -1)
        if self.book is not None:
            self.book.ask(job.queue, -job.request * len(job.pods))
        self.finish[job.index] = when
        del self.running[job.index]
        self.incomplete.discard(job.index)
        del self.jobs[job.index]
        del self.by_gang[job.gang.key]
        self.finished += 1
        self._learn(job, when)
        if self.options.progress is not None and self.finished % 100 == 0:
            self.options.progress(self.finished / len(self.submit))

    def _account(self, job: Job, sign: int) -> None:
        """Take away (-1) or add back (+1) what a job's pods use and hold, around a change to them."""
        useful, held = job.contribution()
        self.useful += sign * useful
        self.held += sign * held
        self._move(job.pods, sign, job.request)
        if self.book is not None:
            self.book.charge(job.queue, sign * (useful + held))

    def _move(self, pods: list[Pod], sign: int, request: np.ndarray) -> None:
        where = [self.node_index[p.node or p.reserved_node] for p in pods if p.node or p.reserved_node]
        if where:
            np.add.at(self.used, np.array(where), sign * request.astype(np.int64))

    # -- cycles ------------------------------------------------------------------------------

    def _schedule(self, tick: float) -> None:
        for _ in range(self.options.max_cycles_per_tick):
            if not self.pending and not self.incomplete:
                return  # nothing waits: a cycle would place nothing
            self._overrun_due(tick)
            snapshot, offsets, truncated = self._view()
            self.began_now = []
            started = time.perf_counter()
            result = run_cycle(snapshot, tick, self.config)
            self.cycle_seconds.append(time.perf_counter() - started)
            self.cycles += 1
            began = self._apply(snapshot, result, offsets, tick)
            if self.heads is not None:
                self.heads.cycle(tick, self.window, self.began_now)
            if truncated and began:
                self.wake = tick + self.options.tick
            rerun = result.evictions or result.releases or any(t.kind in _RERUN for t in result.transitions)
            if not rerun:
                return

    def _begin(self, job: Job, tick: float) -> None:
        job.start = tick
        self.start[job.index] = tick
        self.pending.pop(bisect.bisect_left(self.pending, job.order))
        self.running[job.index] = job
        heapq.heappush(self.ends, (tick + job.duration, job.index, job.epoch))  # the truth
        self._runs(job, tick)
        where = [self.node_index[pod.node] for pod in job.pods if pod.node is not None]
        self.spans.start(job.index, where, self.rule.eligible(job.request, len(job.pods)))

    def _stop(self, job: Job) -> None:
        """Preempted below min_workers: the job starts over when its gang is placed again."""
        job.start = None
        job.epoch += 1
        self.start[job.index] = np.nan
        self.preemptions += 1
        del self.running[job.index]
        self._rewaits(job)
        bisect.insort(self.pending, job.order)

    def _record(self, tick: float) -> None:
        self.timeline.record(tick, len(self.pending), len(self.running), self.useful, self.held)
        if self.book is not None:
            self.book.record(tick)


def replay(trace: Trace, cluster: Cluster, policy: Policy, options: ReplayOptions | None = None) -> Replay:
    began = time.perf_counter()
    result = _Loop(trace, cluster, policy, options or ReplayOptions()).run()
    result.wall_seconds = time.perf_counter() - began
    return result
