"""``--forecasts``: the replay forecasts its own waiting jobs, and later judges the forecasts.

For the ``gangsched`` policy, after each tick the replay handles (``replay._Loop.run``), the
book asks ``scheduler_core.forecast.forecast`` when every job that is *due* will start: a job
is due at its submission (its first forecast) and then every ``forecast_every_s`` (an hour)
while it waits. A job that started in the cycle of the tick it was submitted in is not forecast
(it waited less than a tick). One forecast call answers for every job that waits, so the due
jobs of a tick share one call.

**Sampling.** A call is made at most once every ``forecast_gap_s`` of virtual time: a job
submitted meanwhile gets its first forecast at the next call (``lag`` in the results says how
late first forecasts were, from the submission); and the replay handles ticks only when
something happens (a submission, an end): a forecast due between two of those is made at its
time on the state as the first left it (nothing changes in between: ``until``). A job that
waited less than the gap may have no forecast at all: it is not judged (only waits over 5
minutes are, ``forecast_accuracy.py``).

What a call sees is the replay's engine state at that tick: every node, every running job (its
bound pods as the cycle sees them, merged per node), every waiting job (all of them, not the
cycle's window: the window is the replay's bound on a cycle's cost, the service forecasts the
whole queue), with the durations the ``--runtimes`` mode gives (each gang's source as the
runtime source: a running job past its estimate has ``overrun``'s), the policy's engine config,
and the arrival model (``forecast/arrivals.py``) fed with the replay's own submissions of the
last ``arrival_window_s`` (0: none, the forecast assumes nothing more is submitted).

**The baseline** is what Slurm's ``squeue --start`` prints: the backfill plan with users' limits
and no other knowledge. The same call's state with every pod's duration set to its job's limit
(the ``limit`` mode's f-model, ``runtime_view.limits``), one run in which every job runs exactly
to its limit, and no arrivals: a point forecast (p10 = p50 = p90). The plan uses the scheduler's
own order (least work first, by the limits) and backfilling, as Slurm's plan uses its own.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import time
from collections import deque

from scheduler_core.engine.config import EngineConfig
from scheduler_core.engine.model import Pod, Snapshot
from scheduler_core.forecast import Arrivals, Forecasts, Spread, Submission, forecast

from .forecast_accuracy import Record, accuracy
from .outcome import job_demand
from .runtime_view import limits

#: The source every pod has in the baseline's plan: its limit, exactly.
PLAN = "plan"
_EXACT = {PLAN: Spread(median=1.0, sigma=0.0)}


def limits_plan(snapshot: Snapshot, now: float, config: EngineConfig) -> Forecasts:
    """The baseline: one run in which every pod runs exactly its duration (the limit, in
    ``snapshot``), nothing is submitted, and the start of each waiting gang is read off it."""
    sources = {gang.key: PLAN for gang in snapshot.gangs}
    return forecast(snapshot, now, config, sources=sources, spreads=_EXACT, quantiles=(0.5,))


class ForecastBook:
    def __init__(self, loop) -> None:
        self.loop = loop
        options = loop.options
        self.every = options.forecast_every_s
        self.gap = options.forecast_gap_s
        self.window = options.arrival_window_s
        self.limits = loop.runtimes.limits if loop.runtimes.limits is not None else limits(loop.trace)
        self.due: list[tuple[float, int, bool]] = []  # (when, job index, first?)
        self.seen = 0  # submissions looked at (``loop.arrivals[:seen]``)
        self.recent: deque[Submission] = deque()
        self.records: list[Record] = []
        self.baseline: list[Record] = []
        self.lags: list[float] = []
        self.last = -math.inf
        self.calls = 0
        self.seconds = 0.0

    def after(self, tick: float) -> None:
        """The replay handled ``tick``: forecast the jobs due, if any."""
        loop = self.loop
        while self.seen < loop.next_arrival:
            index = loop.arrivals[self.seen]
            self.seen += 1
            heapq.heappush(self.due, (float(loop.submit[index]), index, True))
            if self.window > 0:
                self.recent.append(self._submission(index))
        while self.recent and self.recent[0].at <= tick - self.window:
            self.recent.popleft()
        if not self.due or self.due[0][0] > tick or tick - self.last < self.gap:
            return
        chosen = []
        while self.due and self.due[0][0] <= tick:
            _when, index, first = heapq.heappop(self.due)
            if index in loop.jobs and index not in loop.running:
                chosen.append((index, first))
        if not chosen:
            return
        self.last = tick
        began = time.process_time()
        snapshot, sources, owners = self._snapshot()
        recent = tuple(self.recent)
        repeats = loop.options.arrival_repeats
        arrivals = Arrivals(recent, self.window, repeats) if self.window > 0 and recent else None
        ours = forecast(snapshot, tick, loop.config, sources=sources, arrivals=arrivals)
        plan = limits_plan(self._planned(snapshot, owners), tick, loop.config)
        for index, first in chosen:
            key = loop.jobs[index].gang.key
            mine, theirs = ours.gangs.get(key), plan.gangs.get(key)
            if mine is not None:
                p10, p50, p90 = mine.start_p10, mine.start_p50, mine.start_p90
                self.records.append(Record(index, tick, p10, p50, p90, first))
            if theirs is not None:
                p50 = theirs.start_p50
                self.baseline.append(Record(index, tick, p50, p50, p50, first))
            if first:
                self.lags.append(tick - float(loop.submit[index]))
            heapq.heappush(self.due, (tick + self.every, index, False))
        self.calls += 1
        self.seconds += time.process_time() - began

    def until(self, tick: float) -> None:
        """The forecasts due before ``tick``, the replay's next tick: nothing changes until then,
        so they are made on the state as it is, at their time (a waiting job's hourly forecast)."""
        step = self.loop.options.tick
        while self.due:
            at = math.ceil(max(self.due[0][0], self.last + self.gap) / step - 1e-9) * step
            if at >= tick:
                return
            self.after(at)

    def _submission(self, index: int) -> Submission:
        spec = self.loop.trace.jobs[index]
        job = self.loop.jobs.get(index)
        seen = job.seen if job is not None else self.loop.runtimes.pending(index)
        return Submission(
            at=spec.submit,
            min_member=spec.min_workers,
            requests=spec.requests,
            pods=spec.workers,
            duration=seen.seconds,
            source=seen.source,
            priority=spec.priority,
            queue=job.gang.queue if job is not None else spec.queue or "default",
        )

    def _snapshot(self) -> tuple[Snapshot, dict[str, str], list[tuple[int, int]]]:
        """The engine's state now, every waiting job in it; each gang's runtime source; and, per
        job, the range of its pods in the snapshot."""
        loop = self.loop
        jobs = [*loop.running.values(), *(loop.jobs[order[-1]] for order in loop.pending)]
        pods: list[Pod] = []
        owners = []
        for job in jobs:
            seen = job.view if job.view is not None else job.pods
            owners.append((job.index, len(pods), len(pods) + len(seen)))
            pods.extend(seen)
        snapshot = Snapshot(
            loop.nodes,
            tuple(pods),
            tuple(job.gang for job in jobs),
            queues=loop.queues,
            topologies=loop.topologies,
        )
        sources = {job.gang.key: job.seen.source for job in jobs if job.seen is not None}
        return snapshot, sources, owners

    def _planned(self, snapshot: Snapshot, owners) -> Snapshot:
        """``snapshot`` with every pod's duration its job's limit."""
        pods = list(snapshot.pods)
        for index, first, last in owners:
            limit = float(self.limits[index])
            for i in range(first, last):
                pods[i] = dataclasses.replace(pods[i], duration=limit)
        return dataclasses.replace(snapshot, pods=tuple(pods))

    def summary(self, start) -> dict:
        loop = self.loop
        demand = job_demand(loop.trace.jobs, loop.resources)
        lags = sorted(self.lags)
        return {
            "every_s": self.every,
            "gap_s": self.gap,
            "arrival_window_s": self.window,
            "calls": self.calls,
            "cpu_seconds": round(self.seconds, 1),
            "forecasts": len(self.records),
            "first_forecast_lag_s": {
                "median": lags[len(lags) // 2] if lags else None,
                "max": lags[-1] if lags else None,
            },
            "gangsched": accuracy(self.records, loop.submit, start, demand),
            "baseline": accuracy(self.baseline, loop.submit, start, demand),
        }
