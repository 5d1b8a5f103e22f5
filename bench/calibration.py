"""The machine's speed as a fixed piece of work, so that figures from two machines can be compared.

Absolute times do not travel between machines: the same engine ran a cycle in 0.64 s on one
machine of this project's kind and 1.31 s on another. ``calibration_us`` times one fixed loop
that never changes with the code under test (unlike the engine's own µs per pod, which is what the
benchmarks measure): plain Python (integer arithmetic, a dict, a list sort: what the engine's
Python paths do) and numpy (small-array arithmetic and reductions: what its vector paths do). It
runs the loop ``repeats`` times and reports the fastest, which is the least disturbed by whatever
else the machine runs; a machine twice as fast prints about half the figure.
"""

from __future__ import annotations

import time

import numpy as np

PY_STEPS = 200_000
NP_STEPS = 2_000


def _work() -> int:
    total, table = 0, {}
    for i in range(PY_STEPS):
        total = (total + i * i) % 1_000_003
        table[i & 1023] = total
    ordered = sorted(table.values())
    vector = np.arange(64, dtype=np.int64)
    acc = np.zeros(64, dtype=np.int64)
    for i in range(NP_STEPS):
        acc += vector * (i & 7)
        if np.any(acc > 1 << 40):
            acc //= 2
    return total + ordered[0] + int(acc.sum())


def calibration_us(repeats: int = 7) -> dict:
    """The fastest of ``repeats`` runs of the fixed loop, in µs, with every run."""
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        _work()
        runs.append((time.perf_counter() - started) * 1e6)
    return {"calibration_us": round(min(runs)), "runs_us": [round(run) for run in runs]}
