"""Small hand-made traces and a one-call replay for the simulation tests."""

from __future__ import annotations

import importlib.util
import io
import math
from pathlib import Path

from scheduler_core.simulation import ReplayOptions, get_policies, load_cluster, parse_trace, replay
from scheduler_core.simulation.traces import GANGSCHED_COLUMNS, write_gangsched_csv

ROOT = Path(__file__).resolve().parents[2]

HEADER = ",".join(GANGSCHED_COLUMNS)


def trace_text(*rows: str) -> str:
    """Rows as ``job_id,submit_s,workers,min_workers,duration_s,cpu,memory,gpu,priority,queue``."""
    return "\n".join((HEADER, *rows)) + "\n"


def bench_module(name: str):
    """A script of bench/ (not a package) loaded as a module, e.g. ``bench_module("make_trace")``."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def csv_text(jobs) -> str:
    """Jobs as the gangsched CSV a generator writes."""
    out = io.StringIO()
    write_gangsched_csv(jobs, out)
    return out.getvalue()


def run(text: str, cluster: str, policy: str):
    return replay(
        parse_trace(text, "hand"), load_cluster(cluster), get_policies([policy])[0], ReplayOptions()
    )


def times(result, trace_text_: str) -> dict[str, tuple[float | None, float | None]]:
    """job id -> (start, finish), None where it never happened."""
    ids = [job.id for job in parse_trace(trace_text_, "hand").jobs]
    return {job_id: (_value(result.start[i]), _value(result.finish[i])) for i, job_id in enumerate(ids)}


def _value(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


# The JobA/JobB deadlock (the coscheduling article's picture), built so that pod-at-a-time
# scheduling walks into it: three nodes of 4 GPUs. P holds n0 until t=20; R (long, CPU-heavy)
# takes one GPU on n1 and n2 for 1,000 s; Q takes the other three on n1 and n2 until t=102.
# A needs two whole nodes, B three nodes x 3 GPUs. When P ends, A's first pod takes n0; when Q
# ends, B's first two pods take 3 GPUs on n1 and n2. Then neither can ever complete.
THREE_NODES = "3x{cpu=10,memory=64Gi,nvidia.com/gpu=4}"
JOB_A_JOB_B = trace_text(
    "P,0,1,1,20,1,1Gi,4,0,",
    "R,1,2,2,1000,6,1Gi,1,0,",
    "Q,2,2,2,100,1,1Gi,3,0,",
    "A,3,2,2,10,1,1Gi,4,0,",
    "B,4,3,3,10,1,1Gi,3,0,",
)

# Starvation and backfill on one 4-GPU node: S1 runs 0-100 on 2 GPUs; BIG needs all 4; S2 (200 s)
# and S3 (50 s) need 2 each. Greedy scheduling lets S2 take the free half, delaying BIG; EASY
# backfilling lets only S3 in, which ends (t=53) before BIG can start (t=100).
ONE_NODE = "1x{cpu=10,memory=64Gi,nvidia.com/gpu=4}"
STARVATION = trace_text(
    "S1,0,1,1,100,1,1Gi,2,0,",
    "BIG,1,2,2,50,1,1Gi,2,0,",
    "S2,2,1,1,200,1,1Gi,2,0,",
    "S3,3,1,1,50,1,1Gi,2,0,",
)

# Coscheduling's Permit hold on two 8-GPU nodes: X runs 7 GPUs until t=100. A (10 x 1 GPU) finds
# 9 free: missing 1 of 10 (10%, within PodGroupRejectPercentage), so its 9 pods wait at Permit,
# holding their GPUs, and C (1 GPU, 10 s) finds nothing free. At t=61 the permit timeout (60 s)
# rejects A's pods and sorts A by that failure, behind C: C runs 61-71 while A, now missing 2
# of 10, rolls back. When C ends A holds 9 again (from t=71), and completes when X ends (t=100).
# ``PERMIT_FAR`` is the same with an 11-pod A: 2 of 11 missing (18%), so it never holds.
TWO_NODES = "2x{cpu=32,memory=64Gi,nvidia.com/gpu=8}"
PERMIT_NEAR = trace_text(
    "X,0,7,7,100,1,1Gi,1,0,",
    "A,1,10,10,10,1,1Gi,1,0,",
    "C,2,1,1,10,1,1Gi,1,0,",
)
PERMIT_FAR = trace_text(
    "X,0,7,7,100,1,1Gi,1,0,",
    "A,1,11,11,10,1,1Gi,1,0,",
    "C,2,1,1,10,1,1Gi,1,0,",
)

# Least work first, bounded (engine/queue.py), on one 4-GPU node held by R until t=100: BIG (4
# GPUs x 1,000 s, submitted first) and SMALL (4 GPUs x 10 s). gangsched queues SMALL first (its
# 40 GPU-seconds against BIG's 4,000, capped at the one-hour limit), so SMALL waits 98 s instead
# of 1,098 and BIG 10 s more. The FIFO policies start BIG first.
LEAST_WORK = trace_text(
    "R,0,1,1,100,1,1Gi,4,0,",
    "BIG,1,1,1,1000,1,1Gi,4,0,",
    "SMALL,2,1,1,10,1,1Gi,4,0,",
)
# The bound: R holds the node until t=5000; EARLY (submitted 3,499 s after BIG) passes it, LATE
# (3,699 s after, beyond the hour) does not, however small.
OVERTAKE_BOUND = trace_text(
    "R,0,1,1,5000,1,1Gi,4,0,",
    "BIG,1,1,1,1000,1,1Gi,4,0,",
    "EARLY,3500,1,1,10,1,1Gi,4,0,",
    "LATE,3700,1,1,10,1,1Gi,4,0,",
)
