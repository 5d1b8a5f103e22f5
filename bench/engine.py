"""Benchmark of the scheduling engine: placement throughput and cycle latency at cluster scale.

    python bench/engine.py [--nodes 5000] [--pods 50000] [--out bench/results/engine.json] [--quick]

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

Nothing here asserts anything: the script prints a table and writes JSON for the record.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import datetime as dt
import gc
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

from scheduler_core.engine import (  # noqa: E402
    EngineConfig,
    Gang,
    GangMode,
    GangPhase,
    Node,
    Pod,
    Snapshot,
    Taint,
    Toleration,
    apply_result,
    run_cycle,
)

GI = 2**30
GPU = "nvidia.com/gpu"
GPU_TAINT = Taint(GPU, "present", "NoSchedule")
GPU_TOLERATION = (Toleration(GPU, "Exists", "", "NoSchedule"),)
ZONES = ("zone-a", "zone-b", "zone-c", "zone-d")

# Context: published pod-at-a-time throughputs at 5,000 nodes.
ANCHORS = {
    "kube-scheduler CI threshold (5,000 nodes)": 680.0,
    "YuniKorn": 833.0,
}
TARGET_PODS_PER_SECOND = 20_000.0
TARGET_CYCLE_P99_S = 1.0


# ------------------------------------------------------------------------------------------------
# Workload
# ------------------------------------------------------------------------------------------------


def build_nodes(count: int, rng: np.random.Generator) -> list[Node]:
    """80% CPU nodes {64 cpu, 256Gi, 110 pods}, 20% tainted GPU nodes {96 cpu, 768Gi, 8 GPUs}."""
    nodes = []
    gpu_nodes = max(1, count // 5)
    cpu_alloc = {"cpu": 64_000, "memory": 256 * GI, "pods": 110}
    gpu_alloc = {"cpu": 96_000, "memory": 768 * GI, GPU: 8, "pods": 110}
    for i in range(count):
        gpu = i % 5 == 4 and i // 5 < gpu_nodes
        zone = ZONES[int(rng.integers(len(ZONES)))]
        labels = {"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": f"node-{i:05d}"}
        if gpu:
            labels["nvidia.com/gpu.product"] = "A100-SXM4-80GB" if rng.random() < 0.5 else "H100-SXM5-80GB"
            nodes.append(Node(f"node-{i:05d}", gpu_alloc, labels, (GPU_TAINT,)))
        else:
            labels["node.kubernetes.io/instance-type"] = "m6i.16xlarge"
            nodes.append(Node(f"node-{i:05d}", cpu_alloc, labels))
    return nodes


_SIZE_CLASS_WEIGHTS = 0.5 ** np.arange(11) / (0.5 ** np.arange(11)).sum()


def gang_size(rng: np.random.Generator, cap: int = 1024) -> int:
    """Heavy-tailed: a size in [2^k, 2^(k+1)) with P(k) ~ 0.5^k, k in 0..10, at most ``cap``.

    Half the gangs are single pods, yet every size class holds about the same number of pods.
    """
    k = int(rng.choice(11, p=_SIZE_CLASS_WEIGHTS))
    return min(int(rng.integers(2**k, 2 ** (k + 1))), cap)


def gang_sizes(total: int, rng: np.random.Generator, cap: int = 1024) -> list[int]:
    """Gang sizes drawn until they add up to ``total`` pods (the last one is cut to fit)."""
    sizes = []
    left = total
    while left > 0:
        size = min(gang_size(rng, cap), left)
        sizes.append(size)
        left -= size
    return sizes


def make_gang_pods(
    index: int, size: int, rng: np.random.Generator, created: float, prefix: str = "job"
) -> tuple[Gang, list[Pod]]:
    """One pending gang and its members; GPU gangs (about 1 in 8) ask for one GPU per member."""
    namespace = f"team-{index % 8}"
    name = f"{prefix}-{index:05d}"
    gpu = rng.random() < 0.125
    requests = {"cpu": int(rng.integers(1, 9)) * 1000, "memory": int(rng.integers(1, 33)) * GI}
    if gpu:
        requests[GPU] = 1
    priority = int(rng.integers(0, 4))
    duration = float(rng.integers(60, 3600))
    mode = GangMode.NON_STRICT if rng.random() < 0.2 else GangMode.STRICT
    min_member = size if rng.random() < 0.8 else max(1, int(size * 0.75))
    gang = Gang(
        namespace=namespace,
        name=name,
        min_member=min_member,
        total_number=size,
        mode=mode,
        wait_seconds=600.0,
        created=created,
        priority=priority,
    )
    pods = [
        Pod(
            namespace=namespace,
            name=f"{name}-{j}",
            requests=requests,
            priority=priority,
            created=created,
            gang=gang.key,
            tolerations=GPU_TOLERATION if gpu else (),
            duration=duration,
        )
        for j in range(size)
    ]
    return gang, pods


def throughput_snapshot(nodes: int, pods: int, seed: int) -> Snapshot:
    rng = np.random.default_rng(seed)
    node_list = build_nodes(nodes, rng)
    gangs, all_pods = [], []
    for index, size in enumerate(gang_sizes(pods, rng)):
        gang, members = make_gang_pods(index, size, rng, created=float(index))
        gangs.append(gang)
        all_pods.extend(members)
    return Snapshot(nodes=tuple(node_list), pods=tuple(all_pods), gangs=tuple(gangs))


def busy_cluster(nodes: int, seed: int, fill: float, now: float) -> tuple[list[Node], list[Gang], list[Pod]]:
    """Nodes with running gangs (known durations) taking about ``fill`` of the CPU.

    Each member lands on a random node where it fits, so free capacity ends up scattered in
    holes of various sizes, as in a cluster that has been running for a while.
    """
    rng = np.random.default_rng(seed)
    node_list = build_nodes(nodes, rng)
    free = {n.name: dict(n.allocatable) for n in node_list}
    cpu_nodes = [n.name for n in node_list if GPU not in n.allocatable]
    gpu_nodes = [n.name for n in node_list if GPU in n.allocatable]
    target = fill * sum(n.allocatable["cpu"] for n in node_list)
    used = 0.0
    gangs, pods = [], []
    index = misses = 0
    while used < target and misses < 50:
        size = gang_size(rng, cap=64)
        gang, members = make_gang_pods(index, size, rng, created=-1.0 - index, prefix="running")
        requests = members[0].requests
        pool = gpu_nodes if GPU in requests else cpu_nodes
        placed: list[str] = []
        for _ in range(size):
            for name in (pool[i] for i in rng.integers(len(pool), size=8)):
                room = free[name]
                if room["pods"] >= 1 and all(room.get(r, 0) >= a for r, a in requests.items()):
                    for r, a in requests.items():
                        room[r] -= a
                    room["pods"] -= 1
                    placed.append(name)
                    break
        if len(placed) < size:  # give the room back and try another gang
            for name in placed:
                for r, a in requests.items():
                    free[name][r] += a
                free[name]["pods"] += 1
            misses += 1
            continue
        started = now - float(rng.integers(0, int(members[0].duration)))
        members = [
            dataclasses.replace(p, node=n, started=started) for p, n in zip(members, placed, strict=True)
        ]
        gangs.append(dataclasses.replace(gang, satisfied=True, phase=GangPhase.RUNNING))
        pods.extend(members)
        used += requests["cpu"] * size
        index += 1
    return node_list, gangs, pods


def latency_snapshot(
    base: tuple[list[Node], list[Gang], list[Pod]], gangs: int, seed: int, cap: int
) -> Snapshot:
    node_list, running_gangs, running_pods = base
    rng = np.random.default_rng(seed)
    new_gangs, new_pods = [], []
    sizes = [gang_size(rng, cap) for _ in range(gangs)]
    for index, size in enumerate(sizes):
        gang, members = make_gang_pods(index, size, rng, created=float(index), prefix=f"pending{seed}")
        new_gangs.append(gang)
        new_pods.extend(members)
    return Snapshot(
        nodes=tuple(node_list),
        pods=tuple(running_pods) + tuple(new_pods),
        gangs=tuple(running_gangs) + tuple(new_gangs),
    )


# ------------------------------------------------------------------------------------------------
# Measurements
# ------------------------------------------------------------------------------------------------


def measure_throughput(snapshot: Snapshot, max_cycles: int = 50) -> dict:
    config = EngineConfig()
    now = 1000.0
    total_binds = 0
    engine_s = 0.0
    cycles = []
    for _ in range(max_cycles):
        started = time.perf_counter()
        result = run_cycle(snapshot, now, config)
        elapsed = time.perf_counter() - started
        engine_s += elapsed
        binds = len(result.binds)
        total_binds += binds
        cycles.append(
            {
                "binds": binds,
                "seconds": elapsed,
                "pods_considered": result.pods_considered,
                "timings": dict(result.timings),
            }
        )
        if binds == 0:
            break
        snapshot = apply_result(snapshot, result, now)
        now += 10.0
    return {
        "total_binds": total_binds,
        "engine_seconds": engine_s,
        "pods_per_second": total_binds / engine_s if engine_s else 0.0,
        "cycles": cycles,
        "final_snapshot": snapshot,
    }


def _tolerates(tolerations, taint: Taint) -> bool:
    for t in tolerations:
        if t.effect and t.effect != taint.effect:
            continue
        if t.key and t.key != taint.key:
            continue
        if t.operator == "Exists" or t.value == taint.value:
            return True
    return False


def naive_baseline(snapshot: Snapshot, budget_s: float) -> dict:
    """Pod at a time, every node scanned in Python, resources checked with dicts, MostAllocated."""
    nodes = list(snapshot.nodes)
    free = [dict(node.allocatable) for node in nodes]
    index = {node.name: i for i, node in enumerate(nodes)}
    for pod in snapshot.pods:
        if pod.node is not None:
            room = free[index[pod.node]]
            for resource, amount in pod.requests.items():
                room[resource] = room.get(resource, 0) - amount
            room["pods"] = room.get("pods", 0) - 1
    pending = sorted((p for p in snapshot.pods if p.pending), key=lambda p: (-p.priority, p.created, p.key))
    placed = attempted = 0
    started = time.perf_counter()
    for pod in pending:
        if time.perf_counter() - started > budget_s:
            break
        attempted += 1
        best, best_score = -1, -1.0
        for i, node in enumerate(nodes):
            if not node.ready or node.unschedulable:
                continue
            if any(
                t.effect in ("NoSchedule", "NoExecute") and not _tolerates(pod.tolerations, t)
                for t in node.taints
            ):
                continue
            if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
                continue
            room = free[i]
            if room.get("pods", 0) < 1:
                continue
            if any(room.get(r, 0) < a for r, a in pod.requests.items()):
                continue
            alloc = node.allocatable
            score = sum((alloc[r] - room[r] + pod.requests.get(r, 0)) / alloc[r] for r in ("cpu", "memory"))
            if score > best_score:
                best, best_score = i, score
        if best >= 0:
            room = free[best]
            for r, a in pod.requests.items():
                room[r] -= a
            room["pods"] -= 1
            placed += 1
    elapsed = time.perf_counter() - started
    return {
        "placed": placed,
        "attempted": attempted,
        "seconds": elapsed,
        "pods_per_second": placed / elapsed if elapsed else 0.0,
        "pending": len(pending),
    }


def measure_latency(nodes: int, gangs: int, runs: int, cap: int, fill: float) -> dict:
    now = 5000.0
    base = busy_cluster(nodes, seed=7, fill=fill, now=now)
    walls, timings, considered, results = [], [], [], []
    slowest = None
    for run in range(runs):
        seed = 100 + run
        snapshot = latency_snapshot(base, gangs, seed=seed, cap=cap)
        gc.collect()  # garbage from the previous run is not this cycle's cost
        started = time.perf_counter()
        result = run_cycle(snapshot, now + run, EngineConfig())
        wall = time.perf_counter() - started
        walls.append(wall)
        timings.append(result.timings)
        considered.append(result.pods_considered)
        results.append(
            {
                "seed": seed,
                "seconds": wall,
                "binds": len(result.binds),
                "reservations": len(result.reservations),
                "evictions": len(result.evictions),
                "unplaced_gangs": len(result.explanations),
                "preempting_gangs": sum(
                    1 for e in result.explanations.values() if e.reason.value == "Preempting"
                ),
            }
        )
        if slowest is None or wall > slowest[0]:
            slowest = (wall, snapshot, now + run)
    names = list(timings[0])
    return {
        "running_pods": len(base[2]),
        "running_gangs": len(base[1]),
        "walls": walls,
        "p50": float(np.percentile(walls, 50)),
        "p99": float(np.percentile(walls, 99)),
        "timings_p50": {name: float(np.median([t.get(name, 0.0) for t in timings])) for name in names},
        "pods_considered_p50": float(np.median(considered)),
        "outcomes": results,
        "slowest": slowest,
    }


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
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "engine.json"))
    parser.add_argument("--quick", action="store_true", help="a smaller, faster run")
    parser.add_argument(
        "--profile", action="store_true", help="print cProfile of a throughput and a latency cycle"
    )
    args = parser.parse_args(argv)

    nodes = args.nodes or (1000 if args.quick else 5000)
    pods = args.pods or (10_000 if args.quick else 50_000)
    gangs_in_cycle = 200 if args.quick else 1000
    latency_runs = 5 if args.quick else 15
    naive_budget = 5.0 if args.quick else 20.0
    began = time.perf_counter()

    print(f"building {pods:,} pending pods on {nodes:,} nodes ...", flush=True)
    snapshot = throughput_snapshot(nodes, pods, seed=42)
    gangs_total = len(snapshot.gangs)
    sizes = sorted(g.total_number for g in snapshot.gangs)

    print("throughput: run_cycle until no progress ...", flush=True)
    throughput = measure_throughput(snapshot)
    print(f"naive pod-at-a-time baseline ({naive_budget:g}s budget) ...", flush=True)
    naive = naive_baseline(snapshot, naive_budget)
    print(
        f"cycle latency: {gangs_in_cycle} pending gangs on {nodes:,} nodes, {latency_runs} runs ...",
        flush=True,
    )
    latency = measure_latency(nodes, gangs_in_cycle, latency_runs, cap=256, fill=0.85)

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
        "cycle_outcomes": latency["outcomes"],
        "anchors_pods_per_second": ANCHORS,
        "targets": {
            "pods_per_second": TARGET_PODS_PER_SECOND,
            "cycle_p99_s": TARGET_CYCLE_P99_S,
            "pods_per_second_met": throughput["pods_per_second"] >= TARGET_PODS_PER_SECOND,
            "cycle_p99_met": latency["p99"] < TARGET_CYCLE_P99_S,
        },
        "engine_revision": engine_revision(),
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
    print(f"  ({report['bench_seconds']:.0f}s in all; {report['platform']}, {report['cpu_count']} CPUs)")
    if profiles:
        print(profiles)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
