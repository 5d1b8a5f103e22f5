"""Benchmark of the running service: gangs submitted, scheduled by a real Celery worker, bound.

    python bench/service.py [--nodes 2000] [--gangs 200] [--members 50] [--submitters 4]
                            [--out bench/results/service.json] [--no-backlog] [--profile]

What runs (nothing is mocked, nothing asserts; the script prints a summary and writes JSON):

* its own PostgreSQL database ``gangsched_bench`` (dropped and created at start through psycopg on
  the ``postgres`` database, migrated with ``call_command``, dropped again at the end), its own
  Redis database (``/14``) and its own Celery queue (``bench-service-<pid>``), so it never touches
  a ``make run`` or a test run on the same machine;
* a simulated cluster of ``--nodes`` nodes {cpu 64, memory 256Gi, pods 110}, bulk-inserted;
* a real ``celery worker`` subprocess (prefork, concurrency 2) on that database and queue;
* no celery beat: the script asks for cycles itself, the way the service's own submit path does,
  with ``scheduler_core.tasks.cycle_trigger()``, from a thread: at once after every submission and
  every ``--tick`` seconds (0.2) while it waits. Triggers coalesce in Redis (one queued cycle at
  most), and a trigger that arrives while a cycle runs is answered "busy" at once by the
  worker's other process, so the worker runs back-to-back cycles with at most one tick between
  them. (Beat with ``GANGSCHED_CYCLE_INTERVAL_S=0.2`` would do the same, plus the kubelet and
  publisher ticks, which are not what is measured here.) No kubelet runs: bound pods stay bound.

Two phases, each on a fresh database and a fresh worker:

* stream (the issue's figure): ``--gangs`` gangs of ``--members`` pods (1 CPU, 4Gi each, Strict,
  min_member = members) are submitted with ``gang_submit`` as fast as it goes by ``--submitters``
  threads (4: like clients of an API; one thread submits only ~1,500 pods/s on 2 busy cores,
  below the target, so one submitter would measure the submission path, not the scheduler)
  while the worker schedules them;
* backlog (skip with ``--no-backlog``): the same gangs are all submitted first, with no trigger so
  no cycle runs, then triggering starts: how fast the running service drains the pending pods,
  whatever the submission path costs. Its latencies count from the first trigger.

Measured, per phase:

* ``pods_bound_per_second``: pods bound / (last pod bound - first submission started; backlog:
  first trigger). A pod is bound when its Member row has a node; the moment is the end of the
  cycle that bound it (its ``started_at + duration_s``: the cycle's binds are committed by then),
  so the figure does not depend on how often the script polls. ``pods_bound_per_second_steady``
  is the same over the middle of the run (10% to 90% of the pods bound);
* per gang, submission (the start of its ``gang_submit`` call) to its last member bound (end of
  the cycle of its last ``BindJournal`` row in state bound): p50, p99, max;
* cycles run, mean cycle duration (``SchedulingCycle.duration_s``) and mean per-action timings
  (``SchedulingCycle.timings``) of the cycles that considered pods.

``--profile`` runs no worker: it submits everything, then runs one ``cycle_run`` in-process under
cProfile on the bench database (all pods pending) and prints where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import platform
import pstats
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BENCH_DB = "gangsched_bench"
PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}
REDIS_URL = "redis://127.0.0.1:6379/14"
QUEUE = f"bench-service-{os.getpid()}"
NAMESPACE = "bench"
NODE = {"cpu": "64", "memory": "256Gi", "pods": "110"}
POD = {"cpu": "1", "memory": "4Gi"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--gangs", type=int, default=200)
    parser.add_argument("--members", type=int, default=50)
    parser.add_argument("--submitters", type=int, default=4, help="threads calling gang_submit")
    parser.add_argument("--tick", type=float, default=0.2, help="seconds between triggers/polls")
    parser.add_argument("--timeout", type=float, default=600.0, help="give up waiting after this")
    parser.add_argument("--out", default=str(ROOT / "bench/results/service.json"))
    parser.add_argument("--profile", action="store_true", help="cProfile one in-process cycle instead")
    parser.add_argument("--profile-extra", type=int, default=10, help="gangs pending in profiled cycle 2")
    parser.add_argument("--profile-out", default=str(ROOT / "bench/results/service_profile.txt"))
    parser.add_argument("--no-backlog", action="store_true", help="skip the backlog phase")
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


# ---------------------------------------------------------------- the cluster and the work


def nodes_create(count: int) -> None:
    from scheduler_core.engine.quantity import parse_resources
    from scheduler_core.models import Node

    allocatable = parse_resources(NODE)
    Node.objects.bulk_create(
        [Node(name=f"node-{i:05d}", allocatable=dict(allocatable)) for i in range(count)], batch_size=1000
    )


def gang_pods(index: int, members: int) -> list[dict]:
    return [{"name": f"g{index:05d}-{j:04d}", "requests": dict(POD)} for j in range(members)]


def submit_all(gangs: int, members: int, submitters: int, trigger) -> dict[str, float]:
    """Submit every gang; returns gang key -> time.time() at the start of its gang_submit."""
    from django.db import connection

    from scheduler_core.services.submit import gang_submit

    submitted: dict[str, float] = {}
    lock = threading.Lock()

    def run(indexes: range) -> None:
        try:
            for index in indexes:
                pods = gang_pods(index, members)
                began = time.time()
                gang = gang_submit(namespace=NAMESPACE, name=f"g{index:05d}", min_member=members, pods=pods)
                with lock:
                    submitted[gang.key] = began
                if trigger is not None:
                    trigger()
        finally:
            connection.close()

    if submitters <= 1:
        run(range(gangs))
    else:
        threads = [
            threading.Thread(target=run, args=(range(i, gangs, submitters),)) for i in range(submitters)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return submitted


# ---------------------------------------------------------------- the worker


class Worker:
    """``celery worker`` (prefork, concurrency 2) on the bench database and queue."""

    def __init__(self, concurrency: int = 2) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "gangsched",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                str(concurrency),
                "--hostname",
                f"bench-{os.getpid()}@%h",
                "--queues",
                QUEUE,
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                "WARNING",
            ],
            cwd=ROOT,
            env=dict(os.environ),
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGTERM)  # warm shutdown: the main process stops its pool
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def trigger() -> None:
    from scheduler_core.tasks import cycle_trigger

    cycle_trigger()


def wait_first_cycle(worker: Worker, tick: float, timeout: float = 120.0) -> None:
    """Warm-up: the worker is up when it has run one (empty) cycle."""
    from scheduler_core.models import SchedulingCycle

    deadline = time.monotonic() + timeout
    while not SchedulingCycle.objects.exists():
        if not worker.alive():
            raise SystemExit("the celery worker exited during start-up")
        if time.monotonic() > deadline:
            raise SystemExit("the celery worker ran no cycle within two minutes")
        trigger()
        time.sleep(tick)


class Ticker(threading.Thread):
    """The script's stand-in for beat: ``cycle_trigger()`` every ``tick`` seconds, and at once
    when a submission ``kick()``s it (the submitting thread itself never waits on Redis)."""

    def __init__(self, tick: float) -> None:
        super().__init__(daemon=True)
        self.tick = tick
        self.stopped = threading.Event()
        self.kicked = threading.Event()

    def kick(self) -> None:
        self.kicked.set()

    def run(self) -> None:
        from django.db import connection

        while not self.stopped.is_set():
            self.kicked.wait(self.tick)
            self.kicked.clear()
            trigger()
        connection.close()

    def stop(self) -> None:
        self.stopped.set()
        self.kicked.set()
        self.join()


# ---------------------------------------------------------------- measuring


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def wait_all_bound(total: int, worker: Worker, tick: float, timeout: float) -> tuple[int, float]:
    from scheduler_core.models import Member

    deadline = time.monotonic() + timeout
    while True:
        bound = Member.objects.filter(namespace=NAMESPACE, node__isnull=False).count()
        if bound >= total:
            return bound, time.time()
        if not worker.alive():
            print("the celery worker died", file=sys.stderr)
            return bound, time.time()
        if time.monotonic() > deadline:
            print(f"timed out: {bound} of {total} pods bound", file=sys.stderr)
            return bound, time.time()
        time.sleep(tick)


def measure(submitted: dict[str, float], first_cycle_id: int) -> dict:
    """Bind times from the database: each bound journal row's time is the end of its cycle."""
    from scheduler_core.models import BindJournal, BindState, SchedulingCycle

    cycles = {
        pk: (started_at.timestamp() + duration, duration, pods_considered, pods_bound, timings)
        for pk, started_at, duration, pods_considered, pods_bound, timings in SchedulingCycle.objects.filter(
            pk__gte=first_cycle_id
        ).values_list("pk", "started_at", "duration_s", "pods_considered", "pods_bound", "timings")
    }
    rows = BindJournal.objects.filter(state=BindState.BOUND, member__namespace=NAMESPACE).values_list(
        "gang__namespace", "gang__name", "cycle_id"
    )
    pod_times: list[float] = []
    gang_done: dict[str, float] = {}
    for namespace, name, cycle_id in rows:
        ended = cycles[cycle_id][0]
        pod_times.append(ended)
        key = f"{namespace}/{name}"
        gang_done[key] = max(gang_done.get(key, 0.0), ended)
    pod_times.sort()
    first_submit = min(submitted.values())
    last_bound = pod_times[-1] if pod_times else float("nan")
    elapsed = last_bound - first_submit
    steady = float("nan")
    if len(pod_times) >= 10:
        low, high = int(len(pod_times) * 0.1), int(len(pod_times) * 0.9) - 1
        if pod_times[high] > pod_times[low]:
            steady = (high - low) / (pod_times[high] - pod_times[low])
    latencies = [gang_done[key] - began for key, began in submitted.items() if key in gang_done]
    working = [c for c in cycles.values() if c[2] > 0]
    timing_names = sorted({name for c in working for name in c[4]})
    return {
        "pods_bound": len(pod_times),
        "elapsed_s": elapsed,
        "pods_bound_per_second": len(pod_times) / elapsed if elapsed > 0 else float("nan"),
        "pods_bound_per_second_steady": steady,
        "gangs_bound": len(gang_done),
        "gang_bound_p50_s": percentile(latencies, 50),
        "gang_bound_p99_s": percentile(latencies, 99),
        "gang_bound_max_s": max(latencies) if latencies else float("nan"),
        "cycles_run": len(working),
        "cycles_binding": sum(1 for c in working if c[3] > 0),
        "cycle_duration_mean_s": sum(c[1] for c in working) / len(working) if working else float("nan"),
        "cycle_duration_max_s": max((c[1] for c in working), default=float("nan")),
        "cycle_timings_mean_s": {
            name: sum(c[4].get(name, 0.0) for c in working) / len(working) for name in timing_names
        },
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

    stream: gangs are submitted while the worker schedules (the issue's figure: first
    submission to last pod bound). backlog: every gang is submitted first with no trigger (so no
    cycle runs), then triggering starts: how fast the running service drains 10,000 pending
    pods, whatever the submission path costs. Latencies then count from the first trigger.
    """
    from scheduler_core.models import SchedulingCycle

    database_prepare(args.nodes)
    worker = Worker(concurrency=2)
    ticker = None
    total = args.gangs * args.members
    try:
        wait_first_cycle(worker, args.tick)
        time.sleep(2 * args.tick)  # a warm-up trigger still queued runs now, not during the phase
        first_cycle_id = SchedulingCycle.objects.order_by("-pk").values_list("pk", flat=True).first() + 1
        label = "backlog" if backlog else "stream"
        print(f"[{label}] worker up; submitting {args.gangs} gangs x {args.members} pods", flush=True)
        ticker = Ticker(args.tick)
        if not backlog:
            ticker.start()
        began = time.time()
        submitted = submit_all(args.gangs, args.members, args.submitters, None if backlog else ticker.kick)
        submit_s = time.time() - began
        print(f"[{label}] submitted {total} pods in {submit_s:.2f}s; waiting for binds", flush=True)
        if backlog:
            released = time.time()
            ticker.start()
            submitted = dict.fromkeys(submitted, released)
        bound, polled_at = wait_all_bound(total, worker, args.tick, args.timeout)
        ticker.stop()
        ticker = None
        # Let a cycle still running finish writing its duration before reading the cycles.
        time.sleep(1.0)
    finally:
        if ticker is not None:
            ticker.stop()
        worker.stop()
    result = measure(submitted, first_cycle_id)
    result["submit_s"] = submit_s
    result["submit_pods_per_second"] = total / submit_s if submit_s > 0 else float("nan")
    result["pods_bound_polled"] = bound
    result["last_bound_polled_s"] = polled_at - min(submitted.values())
    return result


def run_profile(args) -> None:
    """Two cycles in-process under cProfile: all ``--gangs`` pending (the backlog case), then
    ``--profile-extra`` more gangs pending beside the bound ones (a cycle of the stream case)."""
    from scheduler_core.cluster.simulated import SimulatedCluster

    began = time.time()
    submitted = submit_all(args.gangs, args.members, args.submitters, None)
    print(f"submitted {len(submitted) * args.members} pods in {time.time() - began:.2f}s; profiling")
    text = io.StringIO()
    backend = SimulatedCluster()
    profile_cycle(f"cycle 1: {args.gangs} gangs pending", backend, text)
    extra = range(args.gangs, args.gangs + args.profile_extra)
    submit_all_indexes(extra, args.members)
    profile_cycle(f"cycle 2: {args.profile_extra} more gangs pending, the others bound", backend, text)
    print(text.getvalue())
    Path(args.profile_out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.profile_out).write_text(text.getvalue())
    print(f"wrote {args.profile_out}")


def submit_all_indexes(indexes, members: int) -> None:
    from scheduler_core.services.submit import gang_submit

    for index in indexes:
        gang_submit(
            namespace=NAMESPACE, name=f"g{index:05d}", min_member=members, pods=gang_pods(index, members)
        )


def profile_cycle(title: str, backend, text: io.StringIO) -> None:
    from django.db import connection

    from scheduler_core.events import events_publish
    from scheduler_core.models import SchedulingCycle
    from scheduler_core.services.cycle import cycle_run

    queries: list[tuple[float, str]] = []

    def timed(execute, sql, params, many, context):
        began = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            queries.append((time.perf_counter() - began, " ".join(sql.split())[:100]))

    profiler = cProfile.Profile()
    with connection.execute_wrapper(timed):
        profiler.enable()
        report = cycle_run(holder="bench-profile", backend=backend)
        profiler.disable()
    cycle = SchedulingCycle.objects.order_by("-pk").first()
    began = time.perf_counter()
    published = events_publish()  # what the schedule task does after each cycle
    publish_s = time.perf_counter() - began
    print(f"==== {title}", file=text)
    print(f"then events_publish(): {published} events in {publish_s:.3f}s (not profiled)", file=text)
    print(
        f"{report.pods_considered} considered, {report.pods_bound} bound in {report.duration_s:.3f}s "
        f"(under cProfile); engine timings: "
        f"{ {k: round(v, 4) for k, v in (cycle.timings if cycle else {}).items()} }",
        file=text,
    )
    print(f"{len(queries)} queries, {sum(q[0] for q in queries):.3f}s; the slowest:", file=text)
    for seconds, sql in sorted(queries, reverse=True)[:12]:
        print(f"  {seconds * 1000:8.1f} ms  {sql}", file=text)
    stats = pstats.Stats(profiler, stream=text).strip_dirs()
    stats.sort_stats("cumulative").print_stats(40)
    stats.sort_stats("tottime").print_stats(25)


def finite(value):
    """NaN (a figure that could not be computed, e.g. no spread in a one-cycle phase) as null."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def summary(result: dict, title: str) -> str:
    lines = [
        f"service bench, {title}",
        f"  {result['nodes']} nodes, {result['gangs']} gangs x {result['members']} pods "
        f"({result['gangs'] * result['members']} pods), worker prefork x2",
        f"  submitted in          {result['submit_s']:8.2f} s   "
        f"({result['submit_pods_per_second']:.0f} pods/s)",
        f"  pods bound            {result['pods_bound']:8d}     (polled: {result['pods_bound_polled']})",
        f"  first submit -> last  {result['elapsed_s']:8.2f} s",
        f"  pods bound / s        {result['pods_bound_per_second']:8.0f}     "
        f"(steady 10-90%: {result['pods_bound_per_second_steady']:.0f})",
        f"  gang bound  p50       {result['gang_bound_p50_s']:8.2f} s",
        f"              p99       {result['gang_bound_p99_s']:8.2f} s   "
        f"(max {result['gang_bound_max_s']:.2f} s)",
        f"  cycles run            {result['cycles_run']:8d}     ({result['cycles_binding']} bound something)",
        f"  cycle duration mean   {result['cycle_duration_mean_s']:8.3f} s   "
        f"(max {result['cycle_duration_max_s']:.3f} s)",
        "  engine timings mean   "
        + ", ".join(f"{name} {value * 1000:.0f}ms" for name, value in result["cycle_timings_mean_s"].items()),
    ]
    return "\n".join(lines)


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
        result.update(run_phase(args, backlog=False))
        result["machine"] = machine_info()
        print(summary(result, "stream: submitted while the worker schedules"))
        if not args.no_backlog:
            result["load_average_before_backlog"] = os.getloadavg()
            result["backlog"] = run_phase(args, backlog=True)
            print(summary({**result, **result["backlog"]}, "backlog: all submitted, then triggered"))
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
