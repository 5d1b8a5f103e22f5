"""Benchmark of live updates: from the scheduling loop's commit to a message on an open websocket.

    python bench/live.py [--samples 50] [--out bench/results/live.json] [--keep-db]

What runs (nothing is mocked, nothing asserts; the script prints a summary and writes JSON):

* its own PostgreSQL database ``gangsched_bench_live`` (dropped and created at start, migrated,
  dropped at the end), Redis database 14 with a Celery queue and a channel-layer prefix of its
  own (``bench-live-<pid>``), so it never touches a ``make run`` or a test run;
* a real ``daphne`` (gangsched.asgi:application, so the origin check, session auth and the
  consumer's visibility rule all run) and a real ``celery worker`` (prefork, concurrency 1) on
  that database, and an operator with a session;
* a websocket client in this script (``websockets``), connected to ``/ws/gangs/`` with the
  operator's session cookie, as a dashboard page is.

Per sample: one gang of two pods (fits at once) is submitted with ``gang_submit``, then one cycle
is asked for (``schedule.delay()``); the worker's cycle binds it, commits, and the same task
publishes the outbox. Measured is the gang's ``bound`` event: from its ``created`` stamp (taken
inside the cycle's transaction, just *before* the commit, so the figure is an upper bound of
commit-to-socket) to the moment the client receives it. ``server_ms`` is the part up to
``published_at`` (the rest of the cycle, the commit, the fan-out to the channel layer); the rest
is channel layer -> daphne -> consumer (visibility) -> socket. Samples run one after the other,
``--pause`` (0.2 s) apart. Target: a median and p95 under 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BENCH_DB = "gangsched_bench_live"
PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}
REDIS_URL = "redis://127.0.0.1:6379/14"
PREFIX = f"bench-live-{os.getpid()}"
TARGET_MS = 1000


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--pause", type=float, default=0.2, help="seconds between samples")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "live.json"))
    parser.add_argument("--keep-db", action="store_true", help="do not drop the bench database")
    return parser.parse_args()


def configure_environment() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "gangsched.settings"
    from bench.local_key import ensure_local_key

    ensure_local_key()
    os.environ["DATABASE_URL"] = f"postgres://{PG['user']}@{PG['host']}:{PG['port']}/{BENCH_DB}"
    os.environ["REDIS_URL"] = REDIS_URL
    os.environ["GANGSCHED_CELERY_QUEUE"] = PREFIX
    os.environ["GANGSCHED_CHANNELS_PREFIX"] = PREFIX
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("CLUSTER_BACKEND", "simulated")


def admin_execute(sql: str) -> None:
    import psycopg

    with psycopg.connect(dbname="postgres", autocommit=True, **PG) as conn:
        conn.execute(sql)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def start(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        env=dict(os.environ),
        stdout=open(log, "w"),  # noqa: SIM115 (the child owns it)
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def prepare() -> str:
    """Migrate, add room for every sample, an operator; returns the operator's session cookie."""
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from scheduler_core.models import Node

    call_command("migrate", verbosity=0)
    Node.objects.bulk_create(
        Node(name=f"node-{i}", allocatable={"cpu": 64_000, "memory": 256 << 30, "pods": 110})
        for i in range(8)
    )
    user = User.objects.create_superuser("bench", password="bench-pass-123")
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


async def measure(url: str, cookie: str, samples: int, pause: float) -> list[dict]:
    import websockets
    from asgiref.sync import sync_to_async

    from scheduler_core import tasks
    from scheduler_core.services.submit import gang_submit

    origin = url.replace("ws://", "http://").split("/ws/")[0]
    rows = []
    async with websockets.connect(url, additional_headers={"Cookie": cookie}, origin=origin) as ws:

        def submit(i: int) -> None:
            pods = [{"name": f"g{i:04d}-{j}", "requests": {"cpu": "1", "memory": "1Gi"}} for j in range(2)]
            gang_submit(namespace="bench", name=f"g{i:04d}", min_member=2, pods=pods, submitter="bench")
            tasks.schedule.delay()

        for i in range(samples):
            key = f"bench/g{i:04d}"
            await sync_to_async(submit)(i)
            deadline = time.monotonic() + 15
            while True:
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=max(deadline - time.monotonic(), 0.01))
                except TimeoutError:
                    print(f"{key}: no bound event within 15 s", file=sys.stderr)
                    break
                received = time.time()
                event = json.loads(raw)
                if event.get("gang") == key and event.get("kind") == "bound":
                    created = dt.datetime.fromisoformat(event["created"]).timestamp()
                    rows.append({"gang": key, "id": event["id"], "latency_ms": (received - created) * 1000})
                    break
            await asyncio.sleep(pause)
    return rows


def server_part(rows: list[dict]) -> list[float]:
    from scheduler_core.models import GangEvent

    stamps = dict(
        (pk, (published - created).total_seconds() * 1000)
        for pk, created, published in GangEvent.objects.filter(pk__in=[r["id"] for r in rows]).values_list(
            "pk", "created", "published_at"
        )
        if published is not None
    )
    return [stamps[r["id"]] for r in rows if r["id"] in stamps]


def main() -> None:
    args = parse_args()
    # A SIGTERM (timeout, Ctrl-C in a supervisor) still stops daphne and the worker below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    configure_environment()
    admin_execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
    admin_execute(f"CREATE DATABASE {BENCH_DB}")
    logs = ROOT / "bench" / "results"
    processes = []
    try:
        cookie = prepare()
        port = free_port()
        daphne = ["daphne", "-b", "127.0.0.1", "-p", str(port), "gangsched.asgi:application"]
        worker = ["celery", "-A", "gangsched", "worker", "--pool", "prefork", "--concurrency", "1"]
        worker += ["--hostname", f"{PREFIX}@%h", "--queues", PREFIX, "--without-gossip", "--without-mingle"]
        processes.append(start(daphne, logs / "live-daphne.log.tmp"))
        processes.append(start(worker + ["--loglevel", "WARNING"], logs / "live-worker.log.tmp"))
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).close()
                break
            except OSError as error:
                # 503 until the worker answers: healthy means every part of the path is up.
                if time.monotonic() > deadline:
                    raise SystemExit(f"the service did not come up: {error}") from error
                time.sleep(0.3)
        rows = asyncio.run(measure(f"ws://127.0.0.1:{port}/ws/gangs/", cookie, args.samples, args.pause))
        latencies = [r["latency_ms"] for r in rows]
        server = server_part(rows)
        result = {
            "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "machine": {
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
            },
            "samples": args.samples,
            "received": len(rows),
            "latency_ms": {
                "median": round(statistics.median(latencies), 1) if latencies else None,
                "p95": round(percentile(latencies, 0.95), 1) if latencies else None,
                "max": round(max(latencies), 1) if latencies else None,
            },
            "server_ms": {
                "median": round(statistics.median(server), 1) if server else None,
                "p95": round(percentile(server, 0.95), 1) if server else None,
            },
            "target_ms": TARGET_MS,
            "meets_target": bool(latencies)
            and len(rows) == args.samples
            and percentile(latencies, 0.95) < TARGET_MS,
        }
        latency, part = result["latency_ms"], result["server_ms"]
        print(
            f"{len(rows)}/{args.samples} events; commit -> socket median {latency['median']} ms, "
            f"p95 {latency['p95']} ms, max {latency['max']} ms "
            f"(up to published_at: median {part['median']} ms, p95 {part['p95']} ms)"
        )
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    finally:
        for process in reversed(processes):
            stop(process)
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            admin_execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")


if __name__ == "__main__":
    main()
