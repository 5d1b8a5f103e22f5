"""CPU per pod of the service's two halves, in-process: submission and binding cycles.

    python bench/service_cpu.py [--nodes 2000] [--gangs 200] [--members 50] [--rounds 5]

``bench/service.py`` times the running service in wall-clock time, which on a shared 2-core
machine moves with everything else that runs. This counts CPU seconds instead, which move much
less: this process's own (Python) and that of its PostgreSQL backend (``/proc/<pid>/stat`` of
the server process serving the connection, so the server must be on this machine and readable),
for

* submission: ``--gangs`` gangs of ``--members`` pods through ``gang_submit`` in one thread,
  with its cycle trigger suppressed (as the backlog phase loads);
* backlog: one ``cycle_run`` binding all of them (the simulated cluster, as the worker does);
* stream: ``--rounds`` more rounds of a fifth of the gangs submitted then bound by one cycle
  each, beside the pods already bound (each cycle's snapshot reuse warm, as in a worker).

Its own database (``GANGSCHED_BENCH_DB``, default ``gangsched_bench_cpu``), created, migrated
and dropped like ``bench/service.py``'s; no worker, and no cycle trigger or event is sent.
Run it from two checkouts back to back to compare code (each migrates its own schema).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("GANGSCHED_BENCH_DB", "gangsched_bench_cpu")

from bench import service  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


class Meter:
    """Wall, Python CPU and PostgreSQL backend CPU over a block."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> Meter:
        self.wall, self.cpu, self.pg = time.perf_counter(), time.process_time(), backend_cpu(self.pid)
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu
        self.pg = backend_cpu(self.pid) - self.pg

    def per_pod(self, pods: int) -> dict:
        return {
            "pods": pods,
            "wall_s": round(self.wall, 3),
            "python_cpu_us_per_pod": round(self.cpu / pods * 1e6, 1),
            "postgres_cpu_us_per_pod": round(self.pg / pods * 1e6, 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--gangs", type=int, default=200)
    parser.add_argument("--members", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    service.configure_environment()
    import django

    django.setup()
    from django.db import connection

    from bench.service_work import submit_all_indexes
    from bench.service_worker import triggers_suppressed
    from scheduler_core.cluster.simulated import SimulatedCluster
    from scheduler_core.services.cycle import cycle_run

    service.database_prepare(args.nodes)
    try:
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        backend, result = SimulatedCluster(), {"load_average_at_start": os.getloadavg()}
        pods = args.gangs * args.members
        with triggers_suppressed(), Meter(pid) as meter:
            submit_all_indexes(range(args.gangs), args.members)
        result["submit"] = meter.per_pod(pods)
        with Meter(pid) as meter:
            bound = cycle_run(holder="bench-cpu", backend=backend).pods_bound
        result["backlog_cycle"] = meter.per_pod(bound)
        step, start = max(1, args.gangs // 5), args.gangs
        cycles, bound = [], 0
        for _ in range(args.rounds):
            with triggers_suppressed():
                submit_all_indexes(range(start, start + step), args.members)
            start += step
            with Meter(pid) as meter:
                bound += cycle_run(holder="bench-cpu", backend=backend).pods_bound
            cycles.append(meter)
        total = Meter(pid)
        total.wall = sum(m.wall for m in cycles)
        total.cpu = sum(m.cpu for m in cycles)
        total.pg = sum(m.pg for m in cycles)
        result["stream_cycles"] = {**total.per_pod(bound), "cycles": args.rounds}
        result["load_average_at_end"] = os.getloadavg()
        print(json.dumps(result, indent=2))
    finally:
        service.database_drop()


if __name__ == "__main__":
    main()
