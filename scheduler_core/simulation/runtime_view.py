"""What the engine is told about runtimes during a replay: the truth, a user's limit, or history.

A trace gives every job's exact runtime, and least-work-first ordering and backfilling read
runtimes. A real cluster knows none, so ``--runtimes`` picks what the engine sees as the
``duration`` of a job's pods (the replay's truth always decides when the job ends):

* ``oracle``: the true runtime (a replay's behaviour before this option existed, unchanged);
* ``limit``: the user's limit, the runtime times a factor drawn from U[1, ``LIMIT_FACTOR``]
  (Mu'alem and Feitelson's *f-model*: "Utilization, predictability, workloads, and user runtime
  estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001), rounded up to
  the second; seeded (``LIMIT_SEED``), one draw per job in trace order, so every policy and
  every process sees the same limits. A limit is never below the runtime, so no job is ever
  killed at its limit (a real one would be);
* ``learned``: ``engine/runtimes.py``'s estimate, as the service computes it: EASY++'s mean of
  the last two finished runtimes of the same key (``shape_key``: submitter, queue, name stem,
  size, requests), capped at the limit, else the limit. A waiting job's estimate is computed
  again whenever a job of its key ends; a running job that outlives its estimate gets
  ``overrun``'s, each cycle, as the service's snapshot gives it. The true runtime is read only
  when the job has ended (``finished``: the replay's measured end less start).

The submitter (``submitter``): the trace's ``user`` (a Tiresias trace's ``model_name`` when it
has no ``user``); with none, the job's own id, so nothing is learned across jobs and the limit is
all the engine knows. The name stem: the job id's (``name_stem``), or the Tiresias model name;
an id without a letter (``17``, ``3-17``: a number, not a name) gives no name.
"""

from __future__ import annotations

import math

import numpy as np

from scheduler_core.engine.runtimes import (
    LEARNED,
    LIMIT,
    Estimate,
    RuntimeHistory,
    estimate,
    name_stem,
    overrun,
    shape_key,
)

from .traces import Job, Trace

MODES = ("oracle", "limit", "learned")
ORACLE = "oracle"
#: The f-model's f: a user asks for up to ten times what the job needs.
LIMIT_FACTOR = 10.0
LIMIT_SEED = 2001


class RuntimeModeError(ValueError):
    pass


def check_runtimes(mode: str) -> str:
    if mode not in MODES:
        raise RuntimeModeError(f"unknown runtimes {mode!r}: choose among {', '.join(MODES)}")
    return mode


def limits(trace: Trace) -> np.ndarray:
    """Every job's limit under the f-model: ceil(runtime x U[1, f]), so never below the runtime."""
    rng = np.random.default_rng(LIMIT_SEED)
    factors = rng.uniform(1.0, LIMIT_FACTOR, size=len(trace.jobs))
    pairs = zip(trace.jobs, factors, strict=True)
    return np.array([max(math.ceil(job.duration * float(f)), job.duration) for job, f in pairs])


def submitter(job: Job) -> str:
    return job.user if job.user is not None else f"job:{job.id}"


def learning_name(job: Job) -> str:
    if job.kind is not None:
        return job.kind
    stem = name_stem(job.id)
    return stem if any(char.isalpha() for char in stem) else ""


def learning_key(job: Job) -> str:
    return shape_key(submitter(job), job.queue, learning_name(job), job.min_workers, [job.requests])


class RuntimeView:
    """The replay's runtime figures in one mode: what a waiting job and a running one look like."""

    def __init__(self, mode: str, trace: Trace) -> None:
        self.mode = check_runtimes(mode)
        self.oracle = mode == ORACLE
        self._truth = [job.duration for job in trace.jobs] if self.oracle else None
        self.limits = limits(trace) if not self.oracle else None
        self.keys = [learning_key(job) for job in trace.jobs] if mode == LEARNED else None
        self.history = RuntimeHistory()
        # At each start: the estimate's source and estimate / runtime once the job ended.
        self.sources: dict[str, int] = {}
        self.ratios: list[float] = []

    def pending(self, index: int) -> Estimate:
        """What a job that has not started is expected to run."""
        if self._truth is not None:
            return Estimate(self._truth[index], "declared")
        limit = float(self.limits[index])
        if self.keys is None:
            return Estimate(limit, LIMIT)
        return estimate(learned=self.history.learned(self.keys[index]), limit=limit)

    def running(self, index: int, at_start: Estimate, elapsed: float) -> Estimate:
        """What a job ``elapsed`` seconds into its run is expected to run in all (learned only
        changes: the limit is never outlived, the truth never wrong)."""
        if self.keys is None:
            return at_start
        return overrun(at_start, elapsed, float(self.limits[index]))

    def started(self, seen: Estimate) -> None:
        self.sources[seen.source] = self.sources.get(seen.source, 0) + 1

    def finished(self, index: int, runtime: float, at_start: Estimate) -> str | None:
        """A job ended after ``runtime`` seconds: learn it; the key whose waiting jobs to revise."""
        if runtime > 0:
            self.ratios.append(at_start.seconds / runtime)
        if self.keys is None:
            return None
        self.history.record(self.keys[index], runtime)
        return self.keys[index]

    def summary(self) -> dict:
        ratios = np.array(self.ratios) if self.ratios else np.ones(1)
        return {
            "mode": self.mode,
            "starts_by_source": dict(sorted(self.sources.items())),
            "estimate_over_runtime_median": round(float(np.median(ratios)), 3),
            "estimate_over_runtime_p5": round(float(np.percentile(ratios, 5)), 3),
            "estimate_over_runtime_p95": round(float(np.percentile(ratios, 95)), 3),
            "underestimated_share": round(float((ratios < 1).mean()), 4),
        }


__all__ = ["LEARNED", "MODES", "RuntimeModeError", "RuntimeView", "check_runtimes", "limits"]
