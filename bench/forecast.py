"""One start-time forecast of 1,000 pending gangs on a busy 5,000-node cluster: its CPU and wall time.

The state (``backlog``) starts from the engine benchmark's (``engine_workload.py``):
``busy_cluster``, 85% full of running gangs with known durations; 2,000 more gangs
(``latency_snapshot``, up to 256 pods each) are given one cycle 10 s before ``now`` and those it
starts run from then; then 1,000 fresh pending gangs arrive, most of which cannot start at once.
Each gang's runtime source is drawn with a fixed seed (running: mostly learned; pending:
declared, learned, limit, default). It prints the CPU seconds of the forecast
(``time.process_time``) and its wall time, how each run ended, and what the gangs were told, and
writes the JSON (``--out``).

    .venv/bin/python bench/forecast.py                 # 5,000 nodes, 1,000 gangs
    .venv/bin/python bench/forecast.py --profile       # also cProfile's top functions
    .venv/bin/python bench/forecast.py --steps         # also the CPU of each step before the runs
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gc
import json
import pstats
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from calibration import calibration_us
from engine_workload import busy_cluster, latency_snapshot

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scheduler_core.engine import EngineConfig, Snapshot, apply_result, run_cycle  # noqa: E402
from scheduler_core.forecast import forecast  # noqa: E402
from scheduler_core.forecast.future import Future  # noqa: E402
from scheduler_core.forecast.make import HORIZON_S, MAX_CYCLES, RESOLUTION, _truth  # noqa: E402
from scheduler_core.forecast.positions import positions  # noqa: E402
from scheduler_core.forecast.room import Room  # noqa: E402
from scheduler_core.forecast.spreads import DEFAULT_SPREADS  # noqa: E402
from scheduler_core.forecast.window import Window  # noqa: E402

NOW = 5000.0
RUNNING_SOURCES = ("learned", "learned", "learned", "declared", "limit", "default")
PENDING_SOURCES = ("declared", "learned", "learned", "limit", "default")


def backlog(nodes: int, gangs: int, cap: int, fill: float) -> Snapshot:
    base = busy_cluster(nodes, seed=7, fill=fill, now=NOW)
    earlier = latency_snapshot(base, 2 * gangs, seed=99, cap=cap)
    earlier = apply_result(earlier, run_cycle(earlier, NOW - 10, EngineConfig()), NOW - 10)
    started = {pod.gang for pod in earlier.pods if pod.node is not None}
    fresh = latency_snapshot((list(earlier.nodes), [], []), gangs, seed=100, cap=cap)
    return dataclasses.replace(
        earlier,
        pods=tuple(pod for pod in earlier.pods if pod.node is not None) + fresh.pods,
        gangs=tuple(gang for gang in earlier.gangs if gang.key in started) + fresh.gangs,
    )


def build(nodes: int, gangs: int, cap: int, fill: float):
    snapshot = backlog(nodes, gangs, cap, fill)
    rng = np.random.default_rng(11)
    sources = {
        gang.key: str(rng.choice(RUNNING_SOURCES if gang.satisfied else PENDING_SOURCES))
        for gang in snapshot.gangs
    }
    return snapshot, sources


def steps(snapshot: Snapshot, sources: dict[str, str]) -> dict[str, float]:
    """The CPU seconds of what a forecast does before its first forward cycle, step by step, as
    ``forecast`` does it (a forecast sets up one run per quantile: the first from the snapshot,
    the others as copies of it)."""
    config = EngineConfig()
    spent: dict[str, float] = {}

    def timed(name, call):
        began = time.process_time()
        value = call()
        spent[name] = time.process_time() - began
        return value

    where = timed("positions", lambda: positions(snapshot, config, None))
    timed("cycle at now (with explanations)", lambda: run_cycle(snapshot, NOW, config))
    window = timed("window", lambda: Window(snapshot, config))
    room = timed("free room of the nodes", lambda: Room(snapshot.nodes, snapshot.pods))
    watched = {key: gang.min_member for gang in snapshot.gangs if (key := gang.key) in where}
    truth = _truth(sources, DEFAULT_SPREADS, 0.5)
    first = timed(
        "the first run's setup",
        lambda: Future(
            snapshot, NOW, config, truth, watched, quantile=0.5, horizon=NOW + HORIZON_S,
            max_cycles=MAX_CYCLES, tick=1.0, resolution=RESOLUTION, window=window, room=room,
        ),
    )  # fmt: skip
    other = _truth(sources, DEFAULT_SPREADS, 0.9)
    timed("each other run's setup (a copy of the first's)", lambda: first.fork(other, 0.9))
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--gangs", type=int, default=1000)
    parser.add_argument("--cap", type=int, default=256)
    parser.add_argument("--fill", type=float, default=0.85)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--steps", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "forecast.json"))
    args = parser.parse_args()
    speed = calibration_us()
    print(f"machine speed: {speed['calibration_us']} µs (bench/calibration.py; lower is faster)")
    snapshot, sources = build(args.nodes, args.gangs, args.cap, args.fill)
    pending = sum(1 for gang in snapshot.gangs if not gang.satisfied)
    running = sum(1 for pod in snapshot.pods if pod.node is not None)
    print(f"{args.nodes} nodes, {running} running pods, {pending} pending gangs, {len(snapshot.pods)} pods")
    before = steps(snapshot, sources) if args.steps else None
    if before is not None:
        print("before the first forward cycle (CPU s):")
        for name, seconds in before.items():
            print(f"  {name}: {seconds:.3f}")
    gc.collect()
    profile = cProfile.Profile() if args.profile else None
    cpu, wall = time.process_time(), time.perf_counter()
    if profile is not None:
        profile.enable()
    out = forecast(snapshot, NOW, EngineConfig(), sources=sources)
    if profile is not None:
        profile.disable()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    statuses = Counter(f.status for f in out.gangs.values())
    reasons = Counter(f.waiting_for.reason for f in out.gangs.values() if f.waiting_for is not None)
    leads = [f.start_p50 - NOW for f in out.gangs.values() if f.start_p50 is not None]
    print(f"forecast: {cpu:.3f} s CPU, {wall:.3f} s wall")
    for run in out.runs:
        print(
            f"  run at q={run.quantile}: {run.cycles} cycles, "
            f"stopped by {run.stopped_by} at +{run.end - NOW:.0f} s"
        )
    print(f"  gangs: {dict(statuses)}; waiting for: {dict(reasons.most_common(5))}")
    if leads:
        print(f"  p50 start after now: median {np.median(leads):.0f} s, max {max(leads):.0f} s")
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
    record = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "machine_speed": speed,
        "load_average": list(__import__("os").getloadavg()),
        "nodes": args.nodes,
        "pending_gangs": pending,
        "running_pods": running,
        "pods": len(snapshot.pods),
        "cpu_seconds": cpu,
        "wall_seconds": wall,
        "runs": [
            {
                "quantile": r.quantile,
                "cycles": r.cycles,
                "stopped_by": r.stopped_by,
                "end_after_now": r.end - NOW,
            }
            for r in out.runs
        ],
        "steps_cpu_seconds": before,
        "statuses": dict(statuses),
        "waiting_for": dict(reasons),
        "p50_lead_median_s": float(np.median(leads)) if leads else None,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
