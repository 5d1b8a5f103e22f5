"""The service-layer state machine of tests/faults/stateful.py for 10,000 steps.

    python bench/stateful.py [--examples 125] [--steps 100] [--out bench/results/stateful.json]

Runs tests/faults/test_stateful.py through pytest (on a test database of this run's own:
``test_gs_stateful``, or ``$GANGSCHED_TEST_DB``, plus ``_<pid>_<random>``, dropped at the end)
with ``--examples`` runs of at most ``--steps`` steps each (``make test``: 8 x 40). After every
step the invariants of tests/faults/invariants.py are checked against PostgreSQL; the script
prints and writes how many steps ran, how often each rule ran, and whether it passed (a failure
prints hypothesis' shortest failing sequence).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faults_run import ROOT, run_database, run_tests, write  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=125)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "stateful.json"))
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    env = {
        "GANGSCHED_TEST_DB": run_database("test_gs_stateful"),
        "GANGSCHED_STATEFUL_EXAMPLES": str(args.examples),
        "GANGSCHED_STATEFUL_STEPS": str(args.steps),
    }
    code, wall = run_tests(["tests/faults/test_stateful.py"], env)
    stats = dict(sorted(sys.modules["tests.faults.stateful"].STATS.items()))
    figures = {
        "passed": code == 0,
        "examples": args.examples,
        "max_steps_per_example": args.steps,
        "steps_checked": stats.pop("steps", 0),
        "rules": stats,
        "wall_s": round(wall, 1),
    }
    write(figures, args.out)
    return code


if __name__ == "__main__":
    sys.exit(main())
