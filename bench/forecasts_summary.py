"""The figures of bench/simulate_forecasts.sh in one file: per trace and arrival window.

    python bench/forecasts_summary.py DIR LOAD_BEFORE LOAD_AFTER WALL_S [COMMAND]

Reads every ``<trace>-w<window>/results.json`` under DIR (bench/results/simulate-forecasts),
writes ``summary.json`` beside them and prints, per run, gangsched's forecasts and the
baseline's at submission (waits over 5 minutes; all sizes and per size) and the targets on
production-10k (coverage at least 80%, median absolute error at most 25% of the wait).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from runtimes_summary import header  # bench/, on the path when run as a script

KEYS = ("count", "median_abs_error", "median_signed_error", "coverage", "started_by_p50", "no_forecast")
TARGET_COVERAGE = 0.8
TARGET_ERROR = 0.25


def figures(found: dict) -> dict:
    out = {key: found.get(key) for key in KEYS}
    out["by_size"] = {size: {key: f.get(key) for key in KEYS} for size, f in found.get("by_size", {}).items()}
    return out


def main(argv: list[str]) -> None:
    out = Path(argv[0])
    runs: dict[str, dict] = {}
    for path in sorted(out.glob("*-w*/results.json")):
        results = json.loads(path.read_text())
        forecasts = results["policies"]["gangsched"]["forecasts"]
        runs[path.parent.name] = {
            "trace": results["trace"],
            "runtimes": results["runtimes"],
            "arrival_window_s": forecasts["arrival_window_s"],
            "calls": forecasts["calls"],
            "forecasts": forecasts["forecasts"],
            "forecast_cpu_seconds": forecasts["cpu_seconds"],
            "first_forecast_lag_s": forecasts["first_forecast_lag_s"],
            "avg_wait_s": results["policies"]["gangsched"]["avg_wait_s"],
            "gangsched": {name: figures(forecasts["gangsched"][name]) for name in ("at_submission", "all")},
            "baseline": {name: figures(forecasts["baseline"][name]) for name in ("at_submission", "all")},
        }
    targets = {
        name: {
            "coverage_met": (run["gangsched"]["at_submission"]["coverage"] or 0) >= TARGET_COVERAGE,
            "error_met": (run["gangsched"]["at_submission"]["median_abs_error"] or 1e9) <= TARGET_ERROR,
        }
        for name, run in runs.items()
        if name.startswith("production-10k") and run["gangsched"]["at_submission"]["count"]
    }
    summary = {
        **header(argv, "bench/simulate_forecasts.sh"),
        "targets": targets,
        "runs": runs,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    for name, run in runs.items():
        for who in ("gangsched", "baseline"):
            f = run[who]["at_submission"]
            print(
                f"{name:22} {who:9} n {f['count']:4}  abs err {f['median_abs_error']}  "
                f"signed {f['median_signed_error']}  coverage {f['coverage']}  by p50 {f['started_by_p50']}"
            )
    print(json.dumps(targets, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
