"""Soak: the fault tests of tests/faults/ run for longer than ``make test`` runs them.

    python bench/soak.py [--rounds 50] [--handovers 5000] [--out bench/results/soak.json]

What runs (nothing is mocked; the tests assert, this script measures):

* tests/faults/test_kills.py with ``--rounds`` rounds of three SIGKILLs each (``make test``: 17
  rounds, 51 kills): a real ``celery worker`` whose cycle is killed while deciding, binding and
  recovering, the invariants checked after every kill, the journal recovered after every round
  and every pod bound once at the end;
* tests/faults/test_lease_handover.py with ``--handovers`` handovers (``make test``: 1,000)
  between three workers whose holder dies at random, stale writes refused.

Both run through pytest on a test database and Celery queue of this run's own (the database
``test_gs_soak``, or ``$GANGSCHED_TEST_DB``, plus ``_<pid>_<random>``, dropped at the end), so
they never touch a ``make run``, another test run or another soak. The figures are what the
tests record in their ``FIGURES``: kills and seconds per kill (a round is three kills, each
ended when the killed session has ended and the next cycle has taken the lease and stopped on
the test's lock, plus the recovery of the round's binds by a fourth cycle);
handovers, holders killed, stale writes tried and accepted (always 0), handovers per second.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faults_run import ROOT, run_database, run_tests, write  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50, help="rounds of three SIGKILLs")
    parser.add_argument("--handovers", type=int, default=5000)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "soak.json"))
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    env = {
        "GANGSCHED_TEST_DB": run_database("test_gs_soak"),
        "GANGSCHED_KILL_ROUNDS": str(args.rounds),
        "GANGSCHED_HANDOVERS": str(args.handovers),
    }
    code, wall = run_tests(["tests/faults/test_kills.py", "tests/faults/test_lease_handover.py"], env)
    kills = sys.modules["tests.faults.test_kills"].FIGURES
    handovers = sys.modules["tests.faults.test_lease_handover"].FIGURES
    figures = {
        "passed": code == 0,
        "kills": kills.get("kills"),
        "seconds_per_kill": round(kills["seconds"] / kills["kills"], 3) if kills.get("kills") else None,
        "handovers": handovers.get("handovers"),
        "killed_holders": handovers.get("killed_holders"),
        "stale_writes": handovers.get("stale_writes"),
        "stale_writes_accepted": handovers.get("stale_writes_accepted"),
        "handovers_per_second": (
            round(handovers["handovers"] / handovers["seconds"], 1) if handovers.get("seconds") else None
        ),
        "wall_s": round(wall, 1),
    }
    write(figures, args.out)
    return code


if __name__ == "__main__":
    sys.exit(main())
