"""``bench/engine.py --sweep 1000,5000,20000,65000``: the engine benchmark at several cluster sizes.

At each node count: the throughput measurement (2.5 pending pods per node unless ``--pods``, until a
cycle binds nothing) and 5 runs of the 1,000-gang cycle on a cluster 85% full; one row per size
with pods per second, the cost per pod (µs of ``run_cycle`` per pod placed) and the cycle's p50
and p99. The target: the cost per pod stays flat (within 2x) from 1,000 to 65,000 nodes:
the engine's work should grow with the pods it places, not with the nodes it could place them
on. Writes ``bench/results/engine-sweep.json`` (or ``--out``), with the load average.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import platform
from pathlib import Path

from engine_workload import throughput_snapshot, with_queue_tree, with_topology

#: Pending pods per node unless ``--pods`` fixes a count: 50,000 on 20,000 nodes (the headline
#: run), and at every size a backlog the cluster holds (about a sixth of its CPU), so that each
#: size measures placing, not trying what no longer fits.
PODS_PER_NODE = 2.5
#: Timed 1,000-gang cycles per size.
LATENCY_RUNS = 5


def sweep(sizes: list[int], args, measure_throughput, latency_runs, revision: dict, out: Path) -> int:
    """Throughput and cycle latency at each node count, and the cost per pod; the
    measurements are ``engine.py``'s, passed in (this module does not import it).

    The machine's speed may drift during a sweep (a shared VM's can swing by half within
    seconds, which ``bench/calibration.py`` shows), and the targets are ratios between sizes: so
    the throughput is measured twice, the sizes in one order and then the other, keeping each
    size's faster run, and the latency runs are taken in turns, one of each size at a time."""
    throughputs: dict[int, dict] = {}
    for nodes in [*sizes, *reversed(sizes)]:
        pods = args.pods or int(PODS_PER_NODE * nodes)
        print(f"{nodes:,} nodes: {pods:,} pending pods ...", flush=True)
        snapshot = with_queue_tree(throughput_snapshot(nodes, pods, seed=42), args.queues)
        snapshot = with_topology(snapshot, args.topology_levels)
        throughput = measure_throughput(snapshot, carry=not args.no_carry)
        del throughput["final_snapshot"], snapshot  # not kept into the next size
        gc.collect()
        kept = throughputs.get(nodes)
        if kept is None or throughput["engine_seconds"] < kept["engine_seconds"]:
            throughputs[nodes] = throughput
    print("1000-gang cycles, the sizes in turns ...", flush=True)
    latencies = {
        nodes: latency_runs(
            nodes,
            1000,
            cap=256,
            fill=0.85,
            queues=args.queues,
            topology=args.topology_levels,
            carry=not args.no_carry,
        )
        for nodes in sizes
    }
    for index in range(LATENCY_RUNS):
        for nodes in sizes:
            latencies[nodes].run(index)
    rows = []
    for nodes in sizes:
        throughput, latency = throughputs[nodes], latencies[nodes].report()
        placed = throughput["total_binds"]
        rows.append(
            {
                "nodes": nodes,
                "pods": args.pods or int(PODS_PER_NODE * nodes),
                "placed": placed,
                "pods_per_second": throughput["pods_per_second"],
                "us_per_pod": throughput["engine_seconds"] / placed * 1e6 if placed else None,
                "cycle_p50_s": latency["p50"],
                "cycle_p99_s": latency["p99"],
                "cycle_walls_s": latency["walls"],
                "cycle_timings_p50": latency["timings_p50"],
                "steady_cycle_p50_s": latency["steady_p50"],
                "steady_cycle_p99_s": latency["steady_p99"],
                "steady_parked_p50": latency["steady_parked_p50"],
                "cycle_running_pods": latency["running_pods"],
            }
        )
    del latencies
    gc.collect()
    costs = [row["us_per_pod"] for row in rows if row["us_per_pod"]]
    # Ratios travel between machines, absolute times do not: each size against the 5,000-node
    # cycle (or the nearest size measured) and against the cheapest cost per pod.
    anchor = min(rows, key=lambda row: abs(row["nodes"] - 5000))
    for row in rows:
        row["cycle_p99_vs_anchor"] = row["cycle_p99_s"] / anchor["cycle_p99_s"]
        row["us_per_pod_vs_cheapest"] = (
            row["us_per_pod"] / min(costs) if row["us_per_pod"] and costs else None
        )
    speed = revision.pop("speed", None)
    report = {
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "load_average": os.getloadavg(),
        "queues": args.queues,
        "topology_levels": args.topology_levels,
        "carry": not args.no_carry,
        "sizes": rows,
        "cost_per_pod_spread": max(costs) / min(costs) if costs else None,
        "engine_revision": revision,
        "machine_speed": speed,
        "ratio_anchor_nodes": anchor["nodes"],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
    }
    p99_vs = f"p99 / {anchor['nodes']:,}"
    print(
        f"\n  {'nodes':>7}  {'µs/pod / min':>12}  {p99_vs:>12}  {'pods/s':>8}  {'µs/pod':>7}  "
        f"{'cycle p50':>9}  {'cycle p99':>9}  open p50  {'steady p99':>10}  parked"
    )
    for row in rows:
        print(
            f"  {row['nodes']:>7,}  {row['us_per_pod_vs_cheapest']:>11.2f}x  "
            f"{row['cycle_p99_vs_anchor']:>11.2f}x  "
            f"{row['pods_per_second']:>8,.0f}  {row['us_per_pod']:>7.1f}  "
            f"{row['cycle_p50_s']:>8.3f}s  {row['cycle_p99_s']:>8.3f}s  "
            f"{row['cycle_timings_p50'].get('open', 0.0) * 1000:>6.0f}ms  "
            + (
                f"{row['steady_cycle_p99_s']:>9.3f}s  {row['steady_parked_p50']:>6.0f}"
                if row["steady_cycle_p99_s"] is not None
                else f"{'-':>10}  {'-':>6}"
            )
        )
    print(f"  cost per pod: largest / smallest = {report['cost_per_pod_spread']:.2f}x")
    print("  load average " + " ".join(f"{load:.2f}" for load in report["load_average"]))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return 0
