"""The figures of bench/simulate_runtimes.sh in one file: per trace, mode and policy.

    python bench/runtimes_summary.py bench/results/simulate-runtimes LOAD_BEFORE LOAD_AFTER WALL_S

Reads every ``<trace>-<mode>/results.json`` under the directory, writes ``summary.json`` beside
them and prints the table docs/forecasts.md shows, with the targets' figures (gangsched's
average wait under ``learned`` against coscheduling's and against its own ``oracle`` one).
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
        if {"oracle", "learned"} <= set(modes):
            learned = modes["learned"]["gangsched"]["avg_wait_s"]
            cosched = modes["learned"]["coscheduling"]["avg_wait_s"]
            oracle = modes["oracle"]["gangsched"]["avg_wait_s"]
            targets[name] = {
                "learned_below_coscheduling": round(1 - learned / cosched, 4) if cosched else None,
                "learned_above_oracle": round(learned / oracle - 1, 4) if oracle else None,
            }
    summary = {
        "command": "bench/simulate_runtimes.sh",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average_before": argv[1],
        "load_average_after": argv[2],
        "wall_seconds": int(argv[3]),
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
    print(json.dumps(targets, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
