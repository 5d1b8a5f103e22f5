"""One replay with ``--forecasts``, its figures on one line: the arrival window's calibration.

    python bench/forecast_window.py TRACE CLUSTER MODE GAP_S WINDOW_S

Replays ``gangsched`` on TRACE and CLUSTER under ``--runtimes MODE``, forecasting at most every
GAP_S virtual seconds with the arrival model fed the last WINDOW_S seconds (0: none), and prints
the wall time, the calls, the first forecasts' median lag and, for waits over 5 minutes, the
error, signed error and coverage of the first forecasts (docs/forecasts.md, *Calibration*: run
on traces other than those bench/simulate_forecasts.sh reports).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scheduler_core.simulation import (  # noqa: E402
    ReplayOptions,
    get_policies,
    load_cluster,
    load_trace,
    replay,
)


def main(argv: list[str]) -> None:
    trace, cluster, mode, gap, window = argv
    options = ReplayOptions(
        runtimes=mode, forecasts=True, forecast_gap_s=float(gap), arrival_window_s=float(window)
    )
    began = time.time()
    out = replay(load_trace(trace), load_cluster(cluster), get_policies(["gangsched"])[0], options)
    figures = out.forecasts
    first = figures["gangsched"]["at_submission"]
    base = figures["baseline"]["at_submission"]
    print(
        f"{Path(trace).name} {mode} gap {gap} window {window} wall {time.time() - began:.0f} s "
        f"calls {figures['calls']} lag {figures['first_forecast_lag_s']['median']} | "
        f"n {first['count']} error {first.get('median_abs_error')} signed {first.get('median_signed_error')} "
        f"coverage {first.get('coverage')} | baseline error {base.get('median_abs_error')}",
        flush=True,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
