"""The head's guarantee, measured: did the gang with the reservation start when the plan said?

EASY backfilling promises the *head* (the first gang of the queue that cannot start now but could
on the empty cluster: the one the plan reserves capacity for) that nothing behind it delays it:
a gang behind it starts only if it is expected to end before the head's *shadow time* (the
earliest time the head fits, counting the expected ends of running gangs) or uses capacity the
head leaves. The promise holds only as far as the expected ends are right, so this book measures
it per *head run* (a gang's uninterrupted stretch of cycles as the head):

* its *promise*: the shadow time of the plan in the first cycle of the run, rounded up to the
  next tick (the first cycle that can start it), computed as the engine's plan does
  (``actions/backfill.py``): the running pods' expected ends (start + the duration the engine
  sees) and those of the gangs the same cycle started ahead of it, taken in time order until the
  head's gang fits on what they free;
* its outcome: *started* (the run ends with the head starting: *late* by start - promise if
  positive, *early* if negative), or *displaced* (another gang became the head first: a newer
  gang with less work passed it in the least-work-first order), or still the head at the end;
* why a late head was late: *backfill overran* (a gang that started behind it while it was the
  head, expected to end by the promise, was still running then: the estimate that let it
  backfill was too short), else *passed* (a gang ahead of it in the queue, submitted after it
  became the head, started meanwhile: the queue order, not backfilling), else *running gangs
  overran* (gangs running when the plan was made ended after their expected end).

Measured only where the plan is the plain one computed here: a RESERVE policy without queues,
topology or preemption in effect (``gangsched`` on a single-priority trace); else None.
"""

from __future__ import annotations

import math

import numpy as np

from .jobs import Job


class HeadBook:
    def __init__(self, loop) -> None:
        self.loop = loop
        self.head: Job | None = None
        self.promise = math.inf
        self.backfilled: list[tuple[int, float]] = []  # (job index, expected end)
        self.passed = False
        self.runs: list[dict] = []
        self._fits_empty: dict[bytes, int] = {}

    def cycle(self, tick: float, window: list[Job], began: list[Job]) -> None:
        """After a cycle: ``window`` its pending jobs in queue order, ``began`` those it started."""
        started = {job.index for job in began}
        head = next((job for job in window if job.index not in started and self._could_run(job)), None)
        current = self.head
        if current is not None:
            if current.index in started:
                self._close(tick, started=True)
            elif head is not current:
                self._close(tick, started=False)
            else:
                self._note(current, began)
        if head is not None and head is not self.head:
            self.head = head
            self.promise = self._promise(tick, head, began)
            self.backfilled, self.passed = [], False
            self._note(head, began, first=True)

    def _note(self, head: Job, began: list[Job], first: bool = False) -> None:
        for job in began:
            if job.order > head.order:
                self.backfilled.append((job.index, job.start + job.seen.seconds))
            elif not first:
                self.passed = True

    def _close(self, tick: float, started: bool) -> None:
        run = {"promise": self.promise, "start": tick if started else None}
        if started and tick > self.promise:
            finish = self.loop.finish
            run["cause"] = (
                "backfill_overran"
                if any(
                    end <= self.promise and not (finish[index] <= self.promise)
                    for index, end in self.backfilled
                )
                else "passed"
                if self.passed
                else "running_overran"
            )
        self.runs.append(run)
        self.head = None

    def _could_run(self, job: Job) -> bool:
        shape = job.request.tobytes()
        if shape not in self._fits_empty:
            self._fits_empty[shape] = self.loop._copies(self.loop.alloc, job.request)
        return self._fits_empty[shape] >= job.min_workers

    def _promise(self, tick: float, head: Job, began: list[Job]) -> float:
        """The plan's shadow time for ``head`` as the cycle that made it the head computed it."""
        loop = self.loop
        behind = {job.index for job in began if job.order > head.order}
        used = loop.used.copy()
        nodes, rows, ends = [], [], []
        for job in loop.running.values():
            bound = [pod for pod in job.pods if pod.node is not None]
            where = [loop.node_index[pod.node] for pod in bound]
            if job.index in behind:
                np.add.at(used, np.array(where), -job.request.astype(np.int64))
                continue
            for pod, node in zip(bound, where, strict=True):
                nodes.append(node)
                rows.append(job.request)
                ends.append(pod.started + pod.duration)
        free = loop.alloc - used
        if loop._copies(free, head.request) >= head.min_workers:
            return tick
        if not ends:
            return math.inf
        order = np.argsort(np.array(ends), kind="stable")
        nodes_a = np.array(nodes, dtype=np.int64)[order]
        rows_a = np.array(rows, dtype=np.int64)[order]
        ends_a = np.array(ends, dtype=float)[order]

        def fits(count: int) -> bool:
            released = np.zeros_like(free)
            np.add.at(released, nodes_a[:count], rows_a[:count])
            return loop._copies(free + released, head.request) >= head.min_workers

        if not fits(len(ends_a)):
            return math.inf
        low, high = 1, len(ends_a)
        while low < high:
            mid = (low + high) // 2
            if fits(mid):
                high = mid
            else:
                low = mid + 1
        step = loop.options.tick
        return math.ceil(float(ends_a[low - 1]) / step - 1e-9) * step

    def summary(self) -> dict:
        if self.head is not None:
            self.runs.append({"promise": self.promise, "start": None, "open": True})
        started = [run for run in self.runs if run["start"] is not None]
        late = np.array([run["start"] - run["promise"] for run in started if run["start"] > run["promise"]])
        causes: dict[str, int] = {"backfill_overran": 0, "passed": 0, "running_overran": 0}
        for run in started:
            if "cause" in run:
                causes[run["cause"]] += 1
        overran = np.array(
            [run["start"] - run["promise"] for run in started if run.get("cause") == "backfill_overran"]
        )
        return {
            "head_runs": len(self.runs),
            "started_as_head": len(started),
            "displaced": sum(1 for run in self.runs if run["start"] is None and not run.get("open")),
            "on_time": sum(1 for run in started if run["start"] == run["promise"]),
            "early": sum(1 for run in started if run["start"] < run["promise"]),
            "late": int(late.size),
            "late_share": round(late.size / len(started), 4) if started else None,
            "late_avg_s": round(float(late.mean()), 3) if late.size else None,
            "late_p95_s": round(float(np.percentile(late, 95)), 3) if late.size else None,
            "late_max_s": round(float(late.max()), 3) if late.size else None,
            "late_by_cause": causes,
            "backfill_overran_avg_s": round(float(overran.mean()), 3) if overran.size else None,
            "backfill_overran_max_s": round(float(overran.max()), 3) if overran.size else None,
        }
