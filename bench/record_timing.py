"""Add one replay's wall time to bench/results/simulate/timing.json (the bench/simulate*.sh scripts).

    python bench/record_timing.py TIMING_JSON NAME BEGAN ENDED LOAD_BEFORE LOAD_AFTER PROCESSES

BEGAN and ENDED are ``date +%s.%N``; the loads are /proc/loadavg's 1, 5 and 15 minutes, so a
figure measured on a busy machine says so.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main() -> None:
    path, name, began, ended, before, after, processes = sys.argv[1:]
    target = Path(path)
    timing = json.loads(target.read_text()) if target.exists() else {}
    timing[name] = {
        "wall_seconds": round(float(ended) - float(began), 1),
        "processes": int(processes),
        "cores": os.cpu_count(),
        "loadavg_before": before,
        "loadavg_after": after,
    }
    target.write_text(json.dumps(timing, indent=2) + "\n")
    print(f"{name}: {timing[name]['wall_seconds']} s wall, load {before} -> {after}")


if __name__ == "__main__":
    main()
