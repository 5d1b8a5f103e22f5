"""Hand-over of the scheduler lease after a SIGKILL, with the default lease TTL.

    python bench/handover.py [--kills 40] [--out bench/results/handover.json]

Runs tests/faults/test_handover.py (a real ``celery worker`` and ``celery beat``; the pool
process holding the lease is killed ``--kills`` times mid-cycle) with the product's default
``GANGSCHED_LEASE_TTL_S`` instead of the test's hour, and writes what the test records: each
hand-over, from the SIGKILL to the next holder's taking the lease, their median and maximum, and
the machine's load average over the run. The test asserts; this script measures.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faults_run import ROOT, run_database, run_tests, write  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=40)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "handover.json"))
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    env = {
        "GANGSCHED_TEST_DB": run_database("test_gs_handover"),
        "GANGSCHED_HANDOVER_KILLS": str(args.kills),
        "GANGSCHED_HANDOVER_TTL_S": "",  # the default
    }
    load_before = os.getloadavg()
    code, wall = run_tests(["tests/faults/test_handover.py"], env)
    figures = {
        "passed": code == 0,
        **sys.modules["tests.faults.test_handover"].FIGURES,
        "load_average_before": [round(value, 2) for value in load_before],
        "load_average_after": [round(value, 2) for value in os.getloadavg()],
        "wall_s": round(wall, 1),
    }
    write(figures, args.out)
    return code


if __name__ == "__main__":
    sys.exit(main())
