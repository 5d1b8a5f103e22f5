"""The numbers a replay is judged by, one dict per policy (the ``policies`` entries of results.json).

Definitions (docs/trace-replay.md repeats them):

* queueing delay (wait) = the gang's start (``min_workers`` bound together) - submission; JCT =
  end - submission. Averages and percentiles of JCT are over the jobs that finished; of the wait,
  over the jobs that started (a preempted job counts from its last start). Jobs that never started
  or never finished are *excluded* from those figures and counted apart (``jobs_never_started``,
  ``jobs_finished`` < ``jobs_total``), so a policy that leaves jobs behind cannot look faster by
  it: read the counts first.
* makespan = last end - first submission, over finished jobs.
* utilisation = resources held by running jobs, integrated over time, / (capacity x the span from
  the first submission to the end of the replay).
* waste = resource-hours held (bound or reserved) by members of gangs that were not running;
  cpu in core-hours, memory in GiB-hours, anything else (GPUs) in unit-hours.
* wait_by_size = the same wait figures per job size (what all its workers ask of the main
  resource, GPUs if the cluster has any, else cores: 1, 2-8, 9-64, 65 and more), with how many
  jobs of that size there were and how many started: an average over all jobs is mostly the
  1-GPU jobs, and a policy that lets small gangs pass and starves the big ones shows it here.
* deadlocked_jobs = jobs not running at the end whose members still hold resources.
* scheduler_seconds = wall time spent inside ``run_cycle`` over the whole replay; the per-cycle
  mean and p95 are given beside it.
* with a queue tree (``--queues``, or a queue policy): ``queues`` per leaf queue, its jobs' wait
  figures as above and ``queue_book.py``'s (time below guarantee with demand, reclaim evictions
  and the GPU-hours they threw away), and over all queues ``jain_index`` (time-weighted Jain's
  index of usage over fair share), ``reclaim_evictions``, ``reclaim_lost_gpu_hours``,
  ``reclaim_evicted_again``.
* ``topology`` (``topology_book.py``): for multi-node gangs (members on more than one
  node) and for eligible gangs (those ``gangsched-topology`` constrains), how many started, per
  level (block, rack) the share inside one domain and the average number of domains spanned, and
  their avg and p95 wait; for eligible gangs the same per size (``by_size``, the sizes above).
* ``runtimes`` (``runtime_view.py``): the ``--runtimes`` mode, how many starts each estimate
  source gave, and estimate / runtime over the jobs that ended; ``head_guarantee``
  (``head_book.py``): whether the head started when the plan promised, for a RESERVE policy.
* ``forecasts`` (``--forecasts``, ``forecast_book.py``, ``forecast_accuracy.py``): how far
  gangsched's start-time forecasts, and the baseline's, were from the starts.
"""

from __future__ import annotations

import numpy as np

from .outcome import Replay
from .topology_book import shares

_UNIT = {"cpu": 1000.0, "memory": float(2**30)}
SIZES = (("1", 0.0, 1.0), ("2-8", 1.0, 8.0), ("9-64", 8.0, 64.0), ("65+", 64.0, np.inf))  # (label, >, <=)


def summarise(replay: Replay) -> dict:
    finished = ~np.isnan(replay.finish)
    started = ~np.isnan(replay.start)
    jct = replay.finish[finished] - replay.submit[finished]
    wait = replay.start[started] - replay.submit[started]
    first = float(replay.submit.min()) if len(replay.submit) else 0.0
    span = max(replay.end_time - first, 0.0)
    cycles = np.array(replay.cycle_seconds) if replay.cycle_seconds else np.zeros(1)
    summary = {
        "jobs_total": int(len(replay.submit)),
        "jobs_finished": int(finished.sum()),
        "jobs_never_started": int((~started & ~finished).sum()),
        "avg_jct_s": _mean(jct),
        "p50_jct_s": _percentile(jct, 50),
        "p95_jct_s": _percentile(jct, 95),
        "avg_wait_s": _mean(wait),
        "p50_wait_s": _percentile(wait, 50),
        "p95_wait_s": _percentile(wait, 95),
        "makespan_s": round(float(replay.finish[finished].max()) - first, 3) if finished.any() else None,
        "utilization": {
            resource: round(float(replay.useful_seconds[i] / (replay.capacity[i] * span)), 4)
            if span and replay.capacity[i]
            else 0.0
            for i, resource in enumerate(replay.resources)
        },
        "waste_resource_hours": {
            resource: round(float(replay.held_seconds[i]) / _UNIT.get(resource, 1.0) / 3600.0, 3)
            for i, resource in enumerate(replay.resources)
        },
        "wait_by_size": _wait_by_size(replay, started),
        "deadlocked_jobs": int(replay.deadlocked.sum()),
        "preemptions": replay.preemptions,
        "permit_timeouts": replay.permit_timeouts,
        "overtake_limit_s": replay.overtake_limit_s,
        "scheduler_seconds": round(float(sum(replay.cycle_seconds)), 3),
        "cycles": replay.cycles,
        "scheduler_seconds_per_cycle_avg": round(float(cycles.mean()), 6),
        "scheduler_seconds_per_cycle_p95": round(float(np.percentile(cycles, 95)), 6),
        "replay_wall_seconds": round(replay.wall_seconds, 3),
        "virtual_end_s": round(replay.end_time, 3),
        "virtual_time_cap_s": round(replay.time_cap, 3),
        "stopped_by": replay.stopped_by,
    }
    if replay.queues is not None:
        summary.update(_by_queue(replay, started))
    if replay.topology is not None:
        summary["topology"] = _by_topology(replay)
    if replay.runtimes is not None:
        summary["runtimes"] = replay.runtimes
    if replay.heads is not None:
        summary["head_guarantee"] = replay.heads
    if replay.forecasts is not None:
        summary["forecasts"] = replay.forecasts
    return summary


def _by_topology(replay: Replay) -> dict:
    book = replay.topology
    jobs = book["jobs"]
    multi, eligible = book["nodes"] > 1, book["eligible"]
    figures = {"multi_node": _spread(replay, book, multi), "eligible": _spread(replay, book, eligible)}
    demand = replay.demand[jobs]
    figures["eligible"]["by_size"] = {
        label: _spread(replay, book, eligible & (demand > above) & (demand <= upto))
        for label, above, upto in SIZES
        if (eligible & (demand > above) & (demand <= upto)).any()
    }
    return figures


def _spread(replay: Replay, book: dict, chosen: np.ndarray) -> dict:
    """``topology_book.shares`` of the chosen started jobs, and their avg and p95 wait."""
    jobs = book["jobs"][chosen]
    wait = replay.start[jobs] - replay.submit[jobs]
    wait = wait[~np.isnan(wait)]  # started, then preempted and not started again
    figures = shares({name: counts[chosen] for name, counts in book["domains"].items()})
    return {**figures, "avg_wait_s": _mean(wait), "p95_wait_s": _percentile(wait, 95)}


def _by_queue(replay: Replay, started: np.ndarray) -> dict:
    book = replay.queues
    names = np.array(book["job_queues"], dtype=object)
    queues = {}
    for name, figures in book["queues"].items():
        mine = names == name
        wait = replay.start[mine & started] - replay.submit[mine & started]
        queues[name] = {
            "jobs": int(mine.sum()),
            "started": int((mine & started).sum()),
            "avg_wait_s": _mean(wait),
            "p95_wait_s": _percentile(wait, 95),
            **figures,
        }
    return {
        "jain_index": book["jain_index"],
        "reclaim_evictions": book["reclaim_evictions"],
        "reclaim_lost_gpu_hours": book["reclaim_lost_gpu_hours"],
        "reclaim_evicted_again": book["reclaim_evicted_again"],
        "queues": queues,
    }


def _wait_by_size(replay: Replay, started: np.ndarray) -> dict[str, dict]:
    sizes = {}
    for label, above, upto in SIZES:
        chosen = (replay.demand > above) & (replay.demand <= upto)
        if label == SIZES[0][0]:
            chosen = replay.demand <= upto  # fractions of a GPU or core count as the smallest
        if not chosen.any():
            continue
        wait = replay.start[chosen & started] - replay.submit[chosen & started]
        sizes[label] = {
            "jobs": int(chosen.sum()),
            "started": int((chosen & started).sum()),
            "avg_wait_s": _mean(wait),
            "p95_wait_s": _percentile(wait, 95),
        }
    return sizes


def _mean(values: np.ndarray) -> float | None:
    return round(float(values.mean()), 3) if values.size else None


def _percentile(values: np.ndarray, q: float) -> float | None:
    return round(float(np.percentile(values, q)), 3) if values.size else None
