"""Benchmark of the scheduling engine: placement throughput and cycle latency at cluster scale.

    python bench/engine.py [--nodes 5000] [--pods 50000] [--out bench/results/engine.json] [--quick]
                           [--queues N]
    python bench/engine.py --sweep 1000,5000,20000,65000 [--pods 50000]   (engine_sweep.py)

Three measurements, all in one run, with fixed seeds:

* Throughput: ``--pods`` pending pods in gangs of 1 to 1,024 members (heavy-tailed) on ``--nodes``
  nodes. ``run_cycle`` runs again and again (``apply_result`` in between, ``now`` advancing) until a
  cycle binds nothing; pods placed per second = all binds / time spent inside ``run_cycle``.
* Naive baseline: a pod-at-a-time loop in plain Python (each pending pod in priority order scans
  every node, checks filters and every resource with dicts, takes the most allocated node that
  fits), for a fixed time budget; pods placed per second of what it managed.
* Cycle latency: a fresh, partly full cluster (running gangs with known durations, so backfilling
  has shadow times to compute) and 1,000 pending gangs; one cycle, repeated with other seeds;
  p50 and p99 of the wall time of ``run_cycle``, and the p50 of each action's share.

``--sweep`` runs the throughput and the cycle latency (5 runs, no naive baseline) at each node
count and prints one row per size with the cost per pod (µs of ``run_cycle`` per pod placed):
whether the engine's cost grows with the cluster or only with the pods.

With ``--queues N`` every snapshot gets a 3-level queue tree of N leaves whose guarantees add
up to the cluster, and the gangs are assigned to the leaves round-robin: the same
measurements then include fair share, admission, the order across queues and reclaim.

Nothing here asserts anything: the script prints a table and writes JSON for the record.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import platform
import pstats
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from calibration import calibration_us  # noqa: E402
from engine_measure import LatencyRuns, measure_latency, measure_throughput  # noqa: E402
from engine_workload import (  # noqa: E402
    throughput_snapshot,
    with_queue_tree,
    with_topology,
)
from naive_scheduler import naive_baseline  # noqa: E402

from scheduler_core.engine import (  # noqa: E402
    EngineConfig,
    run_cycle,
)

# Context: published pod-at-a-time throughputs at 5,000 nodes.
ANCHORS = {
    "kube-scheduler CI threshold (5,000 nodes)": 680.0,
    "YuniKorn": 833.0,
}
TARGET_PODS_PER_SECOND = 20_000.0
TARGET_CYCLE_P99_S = 1.0
DEFAULT_OUT = str(ROOT / "bench" / "results" / "engine.json")


def engine_revision() -> dict:
    """The commit the engine was measured at, and whether its files differed from it."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "scheduler_core/engine"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return {"commit": commit, "engine_modified": bool(dirty)}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "engine_modified": None}


def profile(label: str, call, top: int = 18) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    call()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    out.write(f"--- profile: {label} (total {stats.total_tt:.2f}s) ---\n")
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


# ------------------------------------------------------------------------------------------------
# Main
# ------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=None, help="nodes (default 5000, --quick 1000)")
    parser.add_argument("--pods", type=int, default=None, help="pending pods (default 50000, --quick 10000)")
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--quick", action="store_true", help="a smaller, faster run")
    parser.add_argument(
        "--queues", type=int, default=0, help="leaf queues of a 3-level tree (default 0: no queues)"
    )
    parser.add_argument(
        "--topology-levels",
        type=int,
        default=0,
        choices=range(4),
        help="topology levels on the nodes, constraints on multi-node gangs (default 0: none)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="print cProfile of a throughput and a latency cycle"
    )
    parser.add_argument(
        "--no-carry",
        action="store_true",
        help="build the cluster state afresh every cycle (no Carry): the cold build, to compare",
    )
    parser.add_argument(
        "--sweep", default="", help="node counts, comma-separated: one row per size (engine_sweep.py)"
    )
    args = parser.parse_args(argv)
    speed = calibration_us()
    print(
        f"machine speed: calibration loop {speed['calibration_us']:,} µs (fastest of "
        f"{len(speed['runs_us'])}; bench/calibration.py: lower is faster)",
        flush=True,
    )
    if args.sweep:
        from engine_sweep import sweep

        sizes = [int(size) for size in args.sweep.split(",")]
        out = Path(args.out if args.out != DEFAULT_OUT else ROOT / "bench" / "results" / "engine-sweep.json")
        return sweep(sizes, args, measure_throughput, LatencyRuns, engine_revision() | {"speed": speed}, out)

    nodes = args.nodes or (1000 if args.quick else 5000)
    pods = args.pods or (10_000 if args.quick else 50_000)
    gangs_in_cycle = 200 if args.quick else 1000
    latency_runs = 5 if args.quick else 15
    naive_budget = 5.0 if args.quick else 20.0
    began = time.perf_counter()

    print(f"building {pods:,} pending pods on {nodes:,} nodes ...", flush=True)
    snapshot = with_queue_tree(throughput_snapshot(nodes, pods, seed=42), args.queues)
    snapshot = with_topology(snapshot, args.topology_levels)
    gangs_total = len(snapshot.gangs)
    sizes = sorted(g.total_number for g in snapshot.gangs)

    print("throughput: run_cycle until no progress ...", flush=True)
    throughput = measure_throughput(snapshot, carry=not args.no_carry)
    print(f"naive pod-at-a-time baseline ({naive_budget:g}s budget) ...", flush=True)
    naive = naive_baseline(snapshot, naive_budget)
    print(
        f"cycle latency: {gangs_in_cycle} pending gangs on {nodes:,} nodes, {latency_runs} runs ...",
        flush=True,
    )
    latency = measure_latency(
        nodes,
        gangs_in_cycle,
        latency_runs,
        cap=256,
        fill=0.85,
        queues=args.queues,
        topology=args.topology_levels,
        carry=not args.no_carry,
    )

    profiles = ""
    if args.profile:
        profiles += profile("throughput: first cycle", lambda: run_cycle(snapshot, 1000.0, EngineConfig()))
        _, slow_snapshot, slow_now = latency["slowest"]
        profiles += profile(
            "latency: the slowest cycle", lambda: run_cycle(slow_snapshot, slow_now, EngineConfig())
        )
    latency.pop("slowest")
    throughput.pop("final_snapshot")

    report = {
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "queues": args.queues,
        "topology_levels": args.topology_levels,
        "carry": not args.no_carry,
        "nodes": nodes,
        "pods": pods,
        "gangs": gangs_total,
        "gang_size": {"min": sizes[0], "p50": sizes[len(sizes) // 2], "max": sizes[-1]},
        "pods_per_second": throughput["pods_per_second"],
        "placed": throughput["total_binds"],
        "engine_seconds": throughput["engine_seconds"],
        "throughput_cycles": [
            {k: v for k, v in c.items() if k != "timings"} | {"allocate_s": c["timings"].get("allocate", 0.0)}
            for c in throughput["cycles"]
        ],
        "naive_pods_per_second": naive["pods_per_second"],
        "naive": naive,
        "speedup_over_naive": (
            throughput["pods_per_second"] / naive["pods_per_second"] if naive["pods_per_second"] else None
        ),
        "gangs_in_cycle": gangs_in_cycle,
        "cycle_runs": latency_runs,
        "cycle_p50_s": latency["p50"],
        "cycle_p99_s": latency["p99"],
        "cycle_walls_s": latency["walls"],
        "cycle_timings_p50": latency["timings_p50"],
        "cycle_running_pods": latency["running_pods"],
        "cycle_pods_considered_p50": latency["pods_considered_p50"],
        "steady_cycle_p50_s": latency["steady_p50"],
        "steady_cycle_p99_s": latency["steady_p99"],
        "steady_parked_p50": latency["steady_parked_p50"],
        "cycle_outcomes": latency["outcomes"],
        "anchors_pods_per_second": ANCHORS,
        "targets": {
            "pods_per_second": TARGET_PODS_PER_SECOND,
            "cycle_p99_s": TARGET_CYCLE_P99_S,
            "pods_per_second_met": throughput["pods_per_second"] >= TARGET_PODS_PER_SECOND,
            "cycle_p99_met": latency["p99"] < TARGET_CYCLE_P99_S,
        },
        "engine_revision": engine_revision(),
        "machine_speed": speed,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpu_count": os.cpu_count(),
        "bench_seconds": time.perf_counter() - began,
    }

    print()
    print(
        f"engine benchmark: {nodes:,} nodes, {pods:,} pods in {gangs_total:,} gangs "
        f"(sizes {sizes[0]}..{sizes[-1]}, median {sizes[len(sizes) // 2]})"
        + (f", {args.queues} leaf queues in a 3-level tree" if args.queues else "")
        + (f", {args.topology_levels} topology levels" if args.topology_levels else "")
    )
    rows = [
        (
            "engine throughput",
            f"{report['pods_per_second']:,.0f} pods/s",
            f"{report['placed']:,} placed in {report['engine_seconds']:.2f}s "
            f"over {len(report['throughput_cycles'])} cycles",
        ),
        (
            "naive pod-at-a-time",
            f"{report['naive_pods_per_second']:,.0f} pods/s",
            f"{naive['placed']:,} placed of {naive['attempted']:,} tried in {naive['seconds']:.1f}s",
        ),
    ]
    for name, value in ANCHORS.items():
        rows.append((name, f"{value:,.0f} pods/s", "anchor, for context"))
    rows += [
        (
            f"cycle p50 ({gangs_in_cycle} gangs)",
            f"{report['cycle_p50_s']:.3f} s",
            f"{latency_runs} runs, {latency['running_pods']:,} running pods",
        ),
        (
            f"cycle p99 ({gangs_in_cycle} gangs)",
            f"{report['cycle_p99_s']:.3f} s",
            f"~ the slowest of {latency_runs} runs" if latency_runs < 100 else "",
        ),
    ]
    if report["steady_cycle_p99_s"] is not None:
        rows.append(
            (
                "same backlog, 5 s later, p99",
                f"{report['steady_cycle_p99_s']:.3f} s",
                f"nothing changed meanwhile: {report['steady_parked_p50']:.0f} units parked (median)",
            )
        )
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:>16}  {note}")
    print(
        "  per-action p50: " + ", ".join(f"{k} {v * 1000:.1f}ms" for k, v in latency["timings_p50"].items())
    )
    slow = max(latency["outcomes"], key=lambda o: o["seconds"])
    print(
        f"  slowest cycle: seed {slow['seed']}, {slow['seconds']:.3f}s, {slow['binds']:,} binds, "
        f"{slow['unplaced_gangs']} gangs unplaced ({slow['preempting_gangs']} preempting, "
        f"{slow['evictions']} evictions, {slow['reservations']} reservations)"
    )
    met = report["targets"]
    print(
        f"  targets: >= {TARGET_PODS_PER_SECOND:,.0f} pods/s: "
        f"{'met' if met['pods_per_second_met'] else 'MISSED'}; "
        f"p99 < {TARGET_CYCLE_P99_S:g}s: {'met' if met['cycle_p99_met'] else 'MISSED'}"
    )
    print(
        f"  ({report['bench_seconds']:.0f}s in all; {report['platform']}, {report['cpu_count']} CPUs; "
        f"calibration loop {speed['calibration_us']:,} µs)"
    )
    if profiles:
        print(profiles)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
