"""The replay loop's side of ``--runtimes``: keeping the durations the engine sees up to date.

A job's pods carry the duration the engine is told (``Job.seen``, from ``runtime_view.py``), not
the trace's. In ``learned`` mode it changes twice over: a waiting job's estimate is revised when
a job of its key ends (and its place in the least-work-first queue with it, as the service
refreshes a waiting gang's estimate when a gang of its key finishes), and a running job that
outlives its estimate is given ``overrun``'s before the next cycle. ``oracle`` and ``limit``
never change a figure, so they take none of these paths.

``RuntimeUpdates`` is a base of the replay loop (``replay._Loop``), like ``EngineView``.
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq

from .head_book import HeadBook
from .jobs import Job
from .runtime_view import RuntimeView


class RuntimeUpdates:
    def _runtimes_open(self, mode: str) -> None:
        self.runtimes = RuntimeView(mode, self.trace)
        self.learning = self.runtimes.keys is not None
        self.waiting_by_key: dict[str, set[int]] = {}
        self.overruns: list[tuple[float, int, int]] = []  # (when it is outlived, job, epoch)
        self.began_now: list[Job] = []
        plain = not (self.policy.queues or self.config.topology or self.config.preemption)
        reserve = self.config.head_of_line.value == "reserve"
        self.heads = HeadBook(self) if plain and reserve else None

    def _waits(self, job: Job) -> None:
        """A job joins the queue (submitted, or preempted below its minimum)."""
        if self.learning:
            self.waiting_by_key.setdefault(self.runtimes.keys[job.index], set()).add(job.index)

    def _runs(self, job: Job, tick: float) -> None:
        job.at_start = job.seen
        self.runtimes.started(job.seen)
        self.began_now.append(job)
        if self.learning:
            self.waiting_by_key[self.runtimes.keys[job.index]].discard(job.index)
            heapq.heappush(self.overruns, (tick + job.seen.seconds, job.index, job.epoch))

    def _learn(self, job: Job, when: float) -> None:
        """A job ended: learn its runtime, revise the waiting jobs of its key."""
        key = self.runtimes.finished(job.index, when - job.start, job.at_start)
        for index in sorted(self.waiting_by_key.get(key, ())) if key is not None else ():
            self._requeue(self.jobs[index])

    def _requeue(self, job: Job) -> None:
        """A waiting job's estimate from what is known now, and its place in the queue by it."""
        seen = self.runtimes.pending(job.index)
        if seen.seconds == job.seen.seconds:
            job.seen = seen
            return
        self.pending.pop(bisect.bisect_left(self.pending, job.order))
        self._set_seen(job, seen)
        job.order = self._order(job.priority, job.order[2], job.pods, job.index)
        bisect.insort(self.pending, job.order)

    def _overrun_due(self, tick: float) -> None:
        """Before a cycle: the running jobs that outlived their estimate get the larger one."""
        while self.overruns and self.overruns[0][0] < tick:
            _when, index, epoch = heapq.heappop(self.overruns)
            job = self.jobs.get(index)
            if job is None or job.epoch != epoch or job.start is None:
                continue
            seen = self.runtimes.running(index, job.at_start, tick - job.start)
            self._set_seen(job, seen)
            heapq.heappush(self.overruns, (job.start + seen.seconds, index, epoch))

    def _set_seen(self, job: Job, seen) -> None:
        job.seen = seen
        job.pods = [dataclasses.replace(pod, duration=seen.seconds) for pod in job.pods]
        if job.view is not None:
            self._merge(job)

    def _runtimes_summary(self) -> tuple[dict, dict | None]:
        return self.runtimes.summary(), self.heads.summary() if self.heads is not None else None

    def _rewaits(self, job: Job) -> None:
        """A job preempted below its minimum waits again, with a waiting job's estimate."""
        if self.learning:
            job.seen = self.runtimes.pending(job.index)
            job.pods = [dataclasses.replace(pod, duration=job.seen.seconds) for pod in job.pods]
            job.order = self._order(job.priority, job.order[2], job.pods, job.index)
        self._waits(job)
