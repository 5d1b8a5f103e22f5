"""What a replay returns: every job's times, the integrals of used and held capacity, the
timeline for the plots; ``metrics.py`` summarises it, ``plots.py`` draws it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Timeline:
    """State after each tick that ran a cycle or handled an event, for the plots."""

    times: list[float] = field(default_factory=list)
    queued: list[int] = field(default_factory=list)  # submitted jobs not running yet
    running: list[int] = field(default_factory=list)
    useful: list[np.ndarray] = field(default_factory=list)  # per resource, of running jobs
    held: list[np.ndarray] = field(default_factory=list)  # per resource, of jobs not running

    def record(self, tick: float, queued: int, running: int, useful: np.ndarray, held: np.ndarray) -> None:
        self.times.append(tick)
        self.queued.append(queued)
        self.running.append(running)
        self.useful.append(useful.copy())
        self.held.append(held.copy())


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
    left_out: int = 0  # jobs left out of cycles that were certain to fail them (Bounds)
    overtake_limit_s: float = 0.0  # the queue order's limit (0: FIFO), from the policy's config
    # With a queue tree: ``QueueBook.summary()`` and each job's queue (``job_queues``); else None.
    queues: dict | None = None
    # ``TopologyBook.summary()``: where gangs landed, by rack and block.
    topology: dict | None = None
    # ``RuntimeView.summary()`` (the --runtimes mode, sources and accuracy of the estimates) and
    # ``HeadBook.summary()`` (the head's guarantee; None where it is not measured).
    runtimes: dict | None = None
    heads: dict | None = None
    forecasts: dict | None = None  # ``ForecastBook.summary()`` with --forecasts, else None


def main_resource(resources: tuple[str, ...]) -> str:
    """What a cluster is judged by: GPUs if it has any, else CPUs."""
    gpus = [r for r in resources if r.endswith("gpu")]
    return gpus[0] if gpus else ("cpu" if "cpu" in resources else resources[0])


def job_demand(jobs, resources: tuple[str, ...]) -> np.ndarray:
    """Per trace job: what all its workers ask of ``main_resource`` (cpu in cores)."""
    main = main_resource(resources)
    unit = 1000.0 if main == "cpu" else 1.0
    return np.array([job.workers * job.requests.get(main, 0) / unit for job in jobs])
