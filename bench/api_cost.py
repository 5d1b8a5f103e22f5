"""What one API request costs the web process: CPU and wall time, and SQL queries, per kind.

    python bench/api_cost.py [--requests 300] [--gangs 2000] [--out bench/results/api-cost.json]

bench/load.py measures the whole server under load, where every figure depends on everything
else the machine does. This measures the part a change to a view moves: each kind of request
run ``--requests`` times in a row, in this process, through Django's test client (the whole
middleware chain and the view; the read cache off, so reads are computed, as a miss or a
background recomputation computes them; the submission throttle off), after ten warm-up requests:

* ``submit``: ``POST /api/v1/gangs/`` of bench/load.py's one-pod gang, by a submitter;
* ``list-own``: ``GET /api/v1/gangs/?pageSize=20`` by that submitter (their own gangs);
* ``list-all``: the same by an operator (every gang);
* ``detail``: ``GET /api/v1/gangs/<namespace>/<name>/`` of one of the submitter's gangs.

CPU is ``time.process_time`` (this process: Django, DRF, psycopg's client side); the database
server's own time is in the wall time, not in the CPU. The CPU time per request is the figure to
compare between two checkouts on one machine: it moves much less than wall time with what else
runs. Then a full garbage collection's CPU in this process, with nothing frozen and after
``gc.freeze()`` and ``--requests`` more list-and-submit pairs (gangsched/gc_policy.py). Nothing
asserts; the script prints a table and writes JSON.

It uses a database of its own, ``gangsched_bench_api`` (dropped and created at start, migrated,
dropped at the end), holding ``--gangs`` gangs of the submitter and as many of other users
before the measured requests (ANALYZEd, as autovacuum would).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.pages import admin_execute, configure_environment  # noqa: E402

BENCH_DB = "gangsched_bench_api"
WARMUP = 10


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="measured requests per kind")
    parser.add_argument("--gangs", type=int, default=2000, help="gangs of the submitter (and of others)")
    parser.add_argument("--db", default=BENCH_DB)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "api-cost.json"))
    return parser.parse_args()


def configure(db: str) -> None:
    """A fresh, migrated ``db`` for this process (bench/pages.py's environment)."""
    configure_environment(db)
    admin_execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    admin_execute(f'CREATE DATABASE "{db}"')
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.GANGSCHED_API_CACHE = False
    settings.GANGSCHED_SUBMIT_RATE = None
    call_command("migrate", verbosity=0)


def gang_body(name: str) -> dict:
    """bench/load.py's submission."""
    return {
        "namespace": "load",
        "name": name,
        "minMember": 1,
        "waitSeconds": 600,
        "pods": [{"name": name, "requests": {"cpu": "100m", "memory": "128Mi"}, "durationSeconds": 5}],
    }


def populate(gangs: int) -> None:
    """``gangs`` gangs of ``cost-submitter`` and as many of ``cost-other``, through the service."""
    from django.db import connection

    from scheduler_core.services.submit import gang_submit

    for owner in ("cost-submitter", "cost-other"):
        for index in range(gangs):
            name = f"{owner}-seed-{index}"
            gang_submit(
                namespace="load",
                name=name,
                min_member=1,
                pods=[{"name": name, "requests": {"cpu": "100m", "memory": "128Mi"}, "duration_seconds": 5}],
                submitter=owner,
                source_format="api",
            )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def clients():
    from django.contrib.auth.models import Group, User
    from django.test import Client
    from rest_framework.authtoken.models import Token

    submitter = User.objects.create_user("cost-submitter")
    operator = User.objects.create_user("cost-operator")
    operator.groups.add(Group.objects.get(name="operators"))
    made = {}
    for who, user in (("submitter", submitter), ("operator", operator)):
        token = Token.objects.create(user=user)
        made[who] = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    return made


def measure(name: str, call, count: int) -> dict:
    from django.db import connection

    for _ in range(WARMUP):
        call()
    queries = []
    with connection.execute_wrapper(lambda execute, sql, *rest: queries.append(sql) or execute(sql, *rest)):
        response = call()
    cpu, wall = [], []
    for _ in range(count):
        c0, w0 = time.process_time(), time.perf_counter()
        response = call()
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return {
        "kind": name,
        "status": response.status_code,
        "queries": len(queries),
        "cpu_ms": {"mean": round(statistics.fmean(cpu), 2), "p50": round(statistics.median(cpu), 2)},
        "wall_ms": {"mean": round(statistics.fmean(wall), 2), "p50": round(statistics.median(wall), 2)},
    }


def full_collection_cpu_ms() -> float:
    """The CPU of one full collection of the cyclic garbage collector in this process (the
    median of three), as CPython runs one in a web process with Django loaded."""
    import gc

    samples = []
    for _ in range(3):
        c0 = time.process_time()
        gc.collect()
        samples.append((time.process_time() - c0) * 1000)
    return round(statistics.median(samples), 2)


def garbage_collection(call, count: int) -> dict:
    """A full collection before and after gangsched/gc_policy.py freezes: the policy, as the web
    process runs it, sees a full collection end and freezes its survivors; ``count`` more calls
    run, and a full collection then looks only at what those left behind."""
    import gc

    from gangsched.gc_policy import FreezeAfterFullCollections

    before = full_collection_cpu_ms()  # ends with a full collection the policy has not seen
    policy = FreezeAfterFullCollections(thaw_s=float("inf"))
    gc.callbacks.append(policy.on_gc)
    try:
        gc.collect()
        policy.step()  # what the web process's event loop does after a full collection
        frozen = gc.get_freeze_count()
        for _ in range(count):
            call()
        gc.callbacks.remove(policy.on_gc)  # the measurement's own collections are not followed
        after = full_collection_cpu_ms()
    finally:
        if policy.on_gc in gc.callbacks:
            gc.callbacks.remove(policy.on_gc)
        gc.unfreeze()
    return {
        "full_collection_cpu_ms": {"nothing_frozen": before, "after_freeze": after},
        "frozen_objects": frozen,
    }


def main() -> None:
    args = parse_args()
    configure(args.db)
    try:
        populate(args.gangs)
        made = clients()
        submitter, operator = made["submitter"], made["operator"]
        counter = iter(range(10**9))

        def submit():
            body = gang_body(f"cost-{next(counter)}")
            return submitter.post("/api/v1/gangs/", json.dumps(body), content_type="application/json")

        rows = [
            measure("submit", submit, args.requests),
            measure("list-own", lambda: submitter.get("/api/v1/gangs/?pageSize=20"), args.requests),
            measure("list-all", lambda: operator.get("/api/v1/gangs/?pageSize=20"), args.requests),
            measure(
                "detail",
                lambda: submitter.get("/api/v1/gangs/load/cost-submitter-seed-7/"),
                args.requests,
            ),
        ]

        def list_then_submit():
            submitter.get("/api/v1/gangs/?pageSize=20")
            submit()

        collection = garbage_collection(list_then_submit, args.requests)
    finally:
        from django.db import connections

        connections.close_all()
        admin_execute(f'DROP DATABASE IF EXISTS "{args.db}" WITH (FORCE)')
    print(
        f"{'kind':10s} {'status':>6s} {'queries':>7s} {'cpu ms':>8s} {'p50':>6s} {'wall ms':>8s} {'p50':>6s}"
    )
    for row in rows:
        print(
            f"{row['kind']:10s} {row['status']:6d} {row['queries']:7d} {row['cpu_ms']['mean']:8.2f} "
            f"{row['cpu_ms']['p50']:6.2f} {row['wall_ms']['mean']:8.2f} {row['wall_ms']['p50']:6.2f}"
        )
    cpu = collection["full_collection_cpu_ms"]
    print(
        f"a full garbage collection: {cpu['nothing_frozen']:.1f} ms of CPU, {cpu['after_freeze']:.1f} ms "
        f"after freezing its survivors ({collection['frozen_objects']:,} objects) "
        f"and {args.requests} more requests"
    )
    result = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "load_average": list(os.getloadavg()),
        "requests": args.requests,
        "gangs": args.gangs,
        "kinds": rows,
        "garbage_collection": collection,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
