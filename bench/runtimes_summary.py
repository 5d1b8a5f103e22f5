"""The figures of bench/simulate_runtimes.sh in one file: per trace, mode and policy.

    python bench/runtimes_summary.py DIR LOAD_BEFORE LOAD_AFTER WALL_S [COMMAND]

Reads every ``<trace>-<mode>/results.json`` under DIR (bench/results/simulate-runtimes, or its
``queues/`` and ``topology/``), writes ``summary.json`` beside them and prints the figures
docs/forecasts.md shows: with gangsched and coscheduling, the targets' (gangsched's average wait
under ``learned`` against coscheduling's and against its own ``oracle`` one); with queues, the
fairness and reclaim figures; with a topology, where the eligible gangs landed.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

MODES = ("oracle", "limit", "learned")
GPU = "nvidia.com/gpu"


def figures(policy: dict) -> dict:
    return {
        "avg_wait_s": policy["avg_wait_s"],
        "p95_wait_s": policy["p95_wait_s"],
        "avg_jct_s": policy["avg_jct_s"],
        "p95_jct_s": policy["p95_jct_s"],
        "gpu_utilization": policy["utilization"].get(GPU),
        "gpu_waste_hours": policy["waste_resource_hours"].get(GPU),
        "jobs_finished": policy["jobs_finished"],
        "jobs_total": policy["jobs_total"],
        "runtimes": policy.get("runtimes"),
        "head_guarantee": policy.get("head_guarantee"),
        **queue_figures(policy),
        **topology_figures(policy),
    }


def queue_figures(policy: dict) -> dict:
    """Fairness and reclaim, and each queue's wait (the queue replays' table)."""
    if "queues" not in policy:
        return {}
    return {
        "jain_index": policy.get("jain_index"),
        "reclaim_evictions": policy.get("reclaim_evictions"),
        "reclaim_lost_gpu_hours": policy.get("reclaim_lost_gpu_hours"),
        "queues": {
            name: {key: queue.get(key) for key in ("avg_wait_s", "p95_wait_s", "below_guarantee_share")}
            for name, queue in policy["queues"].items()
        },
    }


def topology_figures(policy: dict) -> dict:
    """The gangs that may span nodes: how many started, in one rack and in one block, their wait."""
    eligible = policy.get("topology", {}).get("eligible")
    if eligible is None:
        return {}
    levels = eligible.get("levels", {})
    return {
        "eligible": {
            "gangs": eligible.get("gangs"),
            "one_rack_share": levels.get("rack", {}).get("one_domain_share"),
            "one_block_share": levels.get("block", {}).get("one_domain_share"),
            "avg_wait_s": eligible.get("avg_wait_s"),
        }
    }


def header(argv: list[str], command: str) -> dict:
    """What every summary starts with: the command, the date, the machine, the load and the
    wall time (``argv``: DIR LOAD_BEFORE LOAD_AFTER WALL_S [COMMAND])."""
    return {
        "command": argv[4].strip() if len(argv) > 4 else command,
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average_before": argv[1],
        "load_average_after": argv[2],
        "wall_seconds": int(argv[3]),
    }


def main(argv: list[str]) -> None:
    out = Path(argv[0])
    traces: dict[str, dict] = {}
    for path in sorted(out.glob("*/results.json")):
        name, mode = path.parent.name.rsplit("-", 1)
        results = json.loads(path.read_text())
        traces.setdefault(name, {})[mode] = {
            policy: figures(metrics) for policy, metrics in results["policies"].items()
        }
    targets = {}
    for name, modes in traces.items():
        if {"oracle", "learned"} <= set(modes) and {"gangsched", "coscheduling"} <= set(modes["oracle"]):
            learned = modes["learned"]["gangsched"]["avg_wait_s"]
            cosched = modes["learned"]["coscheduling"]["avg_wait_s"]
            oracle = modes["oracle"]["gangsched"]["avg_wait_s"]
            targets[name] = {
                "learned_below_coscheduling": round(1 - learned / cosched, 4) if cosched else None,
                "learned_above_oracle": round(learned / oracle - 1, 4) if oracle else None,
            }
    summary = {
        **header(argv, "bench/simulate_runtimes.sh"),
        "targets": targets,
        "traces": traces,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    for name, modes in traces.items():
        for mode in MODES:
            for policy, m in modes.get(mode, {}).items():
                head = m["head_guarantee"]
                late = "-" if head is None else f"{head['late']}/{head['started_as_head']} late"
                print(
                    f"{name:15} {mode:8} {policy:13} wait {m['avg_wait_s']:8.1f} / {m['p95_wait_s']:8.1f}"
                    f"  JCT {m['avg_jct_s']:8.1f}  util {m['gpu_utilization']:.3f}  {late}"
                )
    if targets:
        print(json.dumps(targets, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
