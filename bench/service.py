"""Benchmark of the running service: gangs submitted, scheduled by a real Celery worker, bound.

    python bench/service.py [--nodes 2000] [--gangs 200] [--members 50] [--submitters 4]
                            [--submit-processes 1] [--out bench/results/service.json]
                            [--no-stream] [--no-backlog] [--profile]

What runs (the service is not mocked; the script prints a summary and writes JSON, and aborts
without writing it when a check below shows it did not measure what it says):

* its own PostgreSQL database ``gangsched_bench`` (``GANGSCHED_BENCH_DB`` names another; dropped
  and created at start through psycopg on the ``postgres`` database, migrated with
  ``call_command``, dropped again at the end), its own Redis database (``/14``;
  ``GANGSCHED_BENCH_REDIS_DB`` names another) and its own Celery queue (``bench-service-<pid>``),
  so it never touches a ``make run`` or a test run on the same machine;
* a simulated cluster of ``--nodes`` nodes {cpu 64, memory 256Gi, pods 110}, bulk-inserted;
* a real ``celery worker`` subprocess (prefork, concurrency 2) on that database and queue;
* no celery beat: the script asks for cycles itself, the way the service's own submit path does,
  with ``scheduler_core.tasks.cycle_trigger()``, from a thread: at once after every submission and
  every ``--tick`` seconds (0.2) while it waits. Triggers coalesce in Redis (one queued cycle at
  most), and a trigger that arrives while a cycle runs is answered "busy" at once by the worker's
  other process, so the worker runs back-to-back cycles with at most one tick between them. (Beat
  with ``GANGSCHED_CYCLE_INTERVAL_S=0.2`` would do the same, plus the kubelet and publisher ticks,
  which are not what is measured here.) No kubelet runs: bound pods stay bound.

Two phases, each on a fresh database and a fresh worker:

* stream (the headline figure; skip with ``--no-stream``): ``--gangs`` gangs of ``--members`` pods
  (1 CPU, 4Gi each, Strict, min_member = members) are submitted with ``gang_submit`` as fast as it
  goes by ``--submitters`` threads (4: like clients of an API; one thread submits only ~1,500
  pods/s on 2 busy cores, below the target, so one submitter would measure the submission path,
  not the scheduler) while the worker schedules them. ``--submit-processes N`` spreads the
  threads over N spawned processes (as API clients and web workers are): threads of one process
  share its GIL, which caps what one process submits; the processes are started and set up
  before the first submission, which is when the clock starts, and each submission kicks the
  script's ticker, which asks for a cycle at once (``service_work.submit_all`` says why the
  processes do not ask themselves);
* backlog (skip with ``--no-backlog``): the same gangs are all loaded first with no cycle running,
  then triggering starts: how fast the running service drains a real backlog, whatever the
  submission path costs. The load goes through ``gang_submit`` like the stream's, with its
  on-commit ``cycle_trigger`` replaced by a no-op in this process for the length of the load
  (``service_worker.triggers_suppressed``; the service itself has no such switch), the worker warm
  and idle and the ticker not started. Before the drain the script checks that no
  ``SchedulingCycle`` was written since the warm-up, no cycle is queued in Redis and no pod is
  bound, and after it that the drain's first cycle started after the load ended; any of these
  failing aborts the run. The drain is timed from the start of its first cycle.

Measured, per phase:

* ``pods_bound_per_second``: pods bound / (last pod bound - first submission started; backlog: the
  start of the drain's first cycle). A pod is bound when its Member row has a node; the moment is
  the end of the cycle that bound it (its ``started_at + duration_s``: the cycle's binds are
  committed by then), so the figure does not depend on how often the script polls.
  ``pods_bound_per_second_steady`` is the same over the middle of the run (10% to 90% of the pods
  bound);
* per gang, submission (the start of its ``gang_submit`` call; backlog: the start of the drain's
  first cycle) to its last member bound (end of the cycle of its last ``BindJournal`` row in state
  bound): p50, p99, max. A latency below zero is a measurement bug and aborts the run;
* cycles run, mean cycle duration (``SchedulingCycle.duration_s``) and mean per-action timings
  (``SchedulingCycle.timings``) of the cycles that considered pods.

``--profile`` runs no worker: it submits everything, then runs one ``cycle_run`` in-process under
cProfile on the bench database (all pods pending) and prints where the time goes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.service_measure import MeasurementError, finite, measure, summary, wait_all_bound  # noqa: E402
from bench.service_profile import run_profile  # noqa: E402
from bench.service_work import NAMESPACE, NODE, POD, nodes_create, submit_all  # noqa: E402
from bench.service_worker import (  # noqa: E402
    QUEUE,
    Ticker,
    Worker,
    backlog_loaded_check,
    triggers_suppressed,
    wait_first_cycle,
    wait_quiet,
)

#: Its own database and Redis database; the environment names others (the bench's own test does).
BENCH_DB = os.environ.get("GANGSCHED_BENCH_DB", "gangsched_bench")
PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}
REDIS_URL = f"redis://127.0.0.1:6379/{os.environ.get('GANGSCHED_BENCH_REDIS_DB', '14')}"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--gangs", type=int, default=200)
    parser.add_argument("--members", type=int, default=50)
    parser.add_argument("--submitters", type=int, default=4, help="threads calling gang_submit, in all")
    parser.add_argument(
        "--submit-processes", type=int, default=1, help="processes the submitting threads are spread over"
    )
    parser.add_argument("--tick", type=float, default=0.2, help="seconds between triggers/polls")
    parser.add_argument("--timeout", type=float, default=600.0, help="give up waiting after this")
    parser.add_argument("--out", default=str(ROOT / "bench/results/service.json"))
    parser.add_argument("--profile", action="store_true", help="cProfile one in-process cycle instead")
    parser.add_argument("--profile-extra", type=int, default=10, help="gangs pending in profiled cycle 2")
    parser.add_argument("--profile-out", default=str(ROOT / "bench/results/service_profile.txt"))
    parser.add_argument("--no-backlog", action="store_true", help="skip the backlog phase")
    parser.add_argument("--no-stream", action="store_true", help="skip the stream phase")
    parser.add_argument("--keep-db", action="store_true", help="do not drop the bench database")
    return parser.parse_args()


# ---------------------------------------------------------------- environment


def configure_environment() -> None:
    """Point this process (and the worker it starts) at the bench database, Redis db and queue."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "gangsched.settings"
    from bench.local_key import ensure_local_key

    ensure_local_key()
    os.environ["DATABASE_URL"] = f"postgres://{PG['user']}@{PG['host']}:{PG['port']}/{BENCH_DB}"
    os.environ["REDIS_URL"] = REDIS_URL
    os.environ["GANGSCHED_CELERY_QUEUE"] = QUEUE
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("CLUSTER_BACKEND", "simulated")


def admin_execute(sql: str) -> None:
    import psycopg

    with psycopg.connect(dbname="postgres", autocommit=True, **PG) as conn:
        conn.execute(sql)


def database_create() -> None:
    admin_execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
    admin_execute(f"CREATE DATABASE {BENCH_DB}")


def database_drop() -> None:
    from django.db import connections

    connections.close_all()
    admin_execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")


def redis_reset() -> None:
    """Forget this bench's coalescing key and queue (the Redis db is the bench's own)."""
    import redis

    from scheduler_core.tasks import QUEUED_KEY

    client = redis.Redis.from_url(REDIS_URL)
    client.delete(QUEUED_KEY, QUEUE)
    client.close()


def machine_info() -> dict:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        postgres = cursor.fetchone()[0]
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    redis_version = client.info("server").get("redis_version")
    client.close()
    cpu_model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model,
        "postgres": postgres,
        "redis": redis_version,
    }


# ---------------------------------------------------------------- the two modes


def database_prepare(nodes: int) -> None:
    from django.core.management import call_command
    from django.db import connections

    connections.close_all()
    database_create()
    call_command("migrate", verbosity=0)
    redis_reset()
    nodes_create(nodes)


def run_phase(args, *, backlog: bool) -> dict:
    """One measured run on a fresh database and a fresh worker.

    stream: gangs are submitted while the worker schedules (the headline figure: first
    submission to last pod bound). backlog: ``backlog_load`` submits every gang while no cycle
    runs, then triggering starts: how fast the running service drains the pending pods, from
    the start of the drain's first cycle to the last pod bound; latencies count from there too.
    """
    database_prepare(args.nodes)
    worker = Worker(concurrency=2)
    ticker = None
    total = args.gangs * args.members
    loaded: dict = {}
    try:
        wait_first_cycle(worker, args.tick)
        first_cycle_id = wait_quiet(args.tick) + 1  # a warm-up trigger still queued has run
        label = "backlog" if backlog else "stream"
        print(f"[{label}] worker up; submitting {args.gangs} gangs x {args.members} pods", flush=True)
        # Submitting processes kick the ticker through a multiprocessing event (service_work).
        ticker = Ticker(args.tick, kicked=multiprocessing.get_context("spawn").Event())
        if backlog:
            submitted, submit_s, loaded = backlog_load(args, first_cycle_id - 1)
            ticker.start()
            ticker.kick()
        else:
            ticker.start()
            submitted, finished = submit_all(
                args.gangs,
                args.members,
                args.submitters,
                ticker.kick,
                processes=args.submit_processes,
                kicked=ticker.kicked,
            )
            submit_s = finished - min(submitted.values())  # not the processes' start-up
        print(f"[{label}] submitted {total} pods in {submit_s:.2f}s; waiting for binds", flush=True)
        bound, polled_at = wait_all_bound(total, NAMESPACE, worker, args.tick, args.timeout)
        ticker.stop()
        ticker = None
        # Let a cycle still running finish writing its duration before reading the cycles.
        time.sleep(1.0)
    finally:
        if ticker is not None:
            ticker.stop()
        worker.stop()
    result = measure(submitted, first_cycle_id, NAMESPACE, drain=backlog)
    if backlog and not result["started_at"] >= loaded["loaded_at"]:
        raise MeasurementError("backlog phase aborted: its first cycle started before the load ended")
    result.update(loaded)
    result["submit_s"] = submit_s
    result["submit_pods_per_second"] = total / submit_s if submit_s > 0 else float("nan")
    result["pods_bound_polled"] = bound
    result["last_bound_polled_s"] = polled_at - result["started_at"]
    return result


def backlog_load(args, last_cycle_id: int) -> tuple[dict[str, float], float, dict]:
    """Submit every gang through ``gang_submit`` with its trigger suppressed, the worker idle
    and no ticker running, then check that no cycle ran and no pod is bound (else abort)."""
    with triggers_suppressed():
        submitted, finished = submit_all(
            args.gangs, args.members, args.submitters, None, processes=args.submit_processes
        )
    loaded_at = time.time()  # after every submitting process has returned
    evidence = backlog_loaded_check(last_cycle_id, NAMESPACE, REDIS_URL)
    return submitted, finished - min(submitted.values()), {**evidence, "loaded_at": loaded_at}


def main() -> None:
    args = parse_args()
    configure_environment()
    import django

    django.setup()

    try:
        if args.profile:
            database_prepare(args.nodes)
            run_profile(args)
            return
        result = {
            "benchmark": "service",
            "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "nodes": args.nodes,
            "gangs": args.gangs,
            "members": args.members,
            "submitters": args.submitters,
            "submit_processes": args.submit_processes,
            "tick_s": args.tick,
            "node_allocatable": NODE,
            "pod_requests": POD,
            "worker": {
                "pool": "prefork",
                "concurrency": 2,
                "trigger": "cycle_trigger() from a thread, after each submission and every tick",
            },
        }
        result["load_average_at_start"] = os.getloadavg()
        if not args.no_stream:
            result.update(run_phase(args, backlog=False))
            print(summary(result, "stream: submitted while the worker schedules", "first submit -> last"))
        if not args.no_backlog:
            result["load_average_before_backlog"] = os.getloadavg()
            result["backlog"] = run_phase(args, backlog=True)
            print(
                summary(
                    {**result, **result["backlog"]},
                    "backlog: all loaded with no cycle running, then drained",
                    "first cycle -> last",
                )
            )
        result["machine"] = machine_info()
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(finite(result), indent=2, allow_nan=False) + "\n")
        print(f"wrote {out}")
    finally:
        redis_reset()
        if not args.keep_db:
            database_drop()


if __name__ == "__main__":
    main()
