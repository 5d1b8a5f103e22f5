"""How fast this machine runs Python right now, in the engine benchmark's own unit (µs per pod).

A figure of bench/load.py (or any benchmark that shares the machine with its server) says little
on its own: the same command's figures differ several times over between two 2-core machines,
and on one machine with what else runs on it. ``engine_us_per_pod`` runs the
engine's throughput measurement (bench/engine_measure.py: 1,000 nodes, a 10,000-pod backlog,
the cycles until one binds nothing) again and again for a few seconds, in this process, just
before the load, and gives the median µs of ``run_cycle`` per pod placed (and the fastest run:
the machine's speed when nothing else took its core): the first row of
``bench/engine.py --sweep 1000,5000 --pods 10000``, which docs/benchmarks.md quotes beside
the figures measured on the same machine. Two
machines' figures compare through it; it moves with the machine's load average as they do.
Pure Python and numpy, no database.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:  # engine_measure imports engine_workload by its bare name
    sys.path.insert(0, str(BENCH))

from engine_measure import measure_throughput  # noqa: E402
from engine_workload import throughput_snapshot  # noqa: E402

NODES = 1000
PODS = 10_000


def engine_us_per_pod(seconds: float = 5.0, nodes: int = NODES, pods: int = PODS) -> dict:
    """The engine's µs per pod placed, the median of as many runs as fit in ``seconds`` (one at
    least), with every run's figure and the time it all took."""
    started = time.perf_counter()
    snapshot = throughput_snapshot(nodes, pods, seed=42)
    runs = []
    while not runs or time.perf_counter() - started < seconds:
        result = measure_throughput(snapshot)
        runs.append(result["engine_seconds"] / result["total_binds"] * 1e6)
        del result
    del snapshot
    gc.collect()  # what the runs built is garbage before the load starts
    return {
        "engine_us_per_pod": round(statistics.median(runs), 1),
        "fastest_us_per_pod": round(min(runs), 1),
        "runs_us_per_pod": [round(run, 1) for run in runs],
        "nodes": nodes,
        "pods": pods,
        "seconds": round(time.perf_counter() - started, 1),
    }
