"""How long the CLI's reads take, as a user runs them: ``manage.py get gangs -A`` and
``manage.py describe gang demo/etl-r1``, each a fresh process.

    python bench/cli_time.py [--runs 20] [--out bench/results/cli-time.json]

kubectl answers in well under a second; so should these. Each run is the whole command a user
types: the interpreter starting, Django's setup (settings, apps, models), the command's imports,
its queries and its output. The script writes the project's bytecode caches (as ``make run``
does), runs each command once untimed, then times ``--runs`` runs of each, one after the other,
with ``time.perf_counter`` around ``subprocess.run``, and the CPU time the process used (user +
system, from ``resource.getrusage(RUSAGE_CHILDREN)``), which moves much less than wall time with
what else the machine runs. It prints p50 and max of each and writes them, with the machine's cores and
load average, to JSON. Nothing asserts.

It uses a database of its own, ``gangsched_bench_cli`` (dropped and created at start, migrated,
dropped at the end unless ``--keep-db``), seeded as ``make run`` seeds a fresh one: 16 nodes
(``seed_cluster``) and the six demo gangs (``submit_demo``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.pages import admin_execute, configure_environment  # noqa: E402

BENCH_DB = "gangsched_bench_cli"
COMMANDS = {
    "get gangs -A": ["get", "gangs", "-A"],
    "describe gang demo/etl-r1": ["describe", "gang", "demo/etl-r1"],
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs of each command")
    parser.add_argument("--db", default=BENCH_DB)
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database at the end")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "cli-time.json"))
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs: give at least 1")
    return args


def manage(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=os.environ,
        capture_output=True,
        text=True,
        check=True,
    )


def prepare(db: str) -> None:
    """A fresh database with what ``make run`` puts in a fresh one."""
    configure_environment(db)
    admin_execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    admin_execute(f'CREATE DATABASE "{db}"')
    manage("migrate", "--noinput")
    manage("seed_cluster", "--if-empty", "--nodes", "16")
    manage("submit_demo", "--if-empty")


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def write_bytecode() -> None:
    """The project's bytecode caches, as ``make run`` writes them (``make bytecode``): with
    PYTHONDONTWRITEBYTECODE set, an untimed run would not write them, and every timed run would
    compile the project's modules again."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "gangsched", "scheduler_core", "dashboard", "manage.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )


def time_command(args: list[str], runs: int) -> dict:
    manage(*args)  # untimed: the operating system's file caches
    walls, cpus = [], []
    for _ in range(runs):
        cpu = cpu_of_children()
        started = time.perf_counter()
        manage(*args)
        walls.append(time.perf_counter() - started)
        cpus.append(cpu_of_children() - cpu)
    return {
        "runs": runs,
        "wall_p50_s": round(statistics.median(walls), 3),
        "wall_max_s": round(max(walls), 3),
        "cpu_p50_s": round(statistics.median(cpus), 3),
        "wall_s": [round(w, 3) for w in walls],
    }


def main() -> int:
    args = parse_args()
    prepare(args.db)
    write_bytecode()
    load_before = os.getloadavg()
    results = {}
    try:
        for name, command in COMMANDS.items():
            results[name] = time_command(command, args.runs)
    finally:
        if not args.keep_db:
            admin_execute(f'DROP DATABASE IF EXISTS "{args.db}" WITH (FORCE)')
    report = {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "commands": results,
    }
    print(f"{'command':<36} {'runs':>4} {'wall p50':>9} {'wall max':>9} {'CPU p50':>8}")
    for name, row in results.items():
        print(
            f"manage.py {name:<26} {row['runs']:>4} {row['wall_p50_s']:>8.3f}s "
            f"{row['wall_max_s']:>8.3f}s {row['cpu_p50_s']:>7.3f}s"
        )
    print(f"load average before: {report['load_average_before']}, cores: {os.cpu_count()}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
