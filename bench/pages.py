"""Benchmark of the dashboard pages: server-side render time and query count at 10,000 gangs.

    python bench/pages.py [--gangs 10000] [--members 10] [--nodes 500] [--repeat 20]
                          [--out bench/results/pages.json] [--keep-db] [--topology] [--only TEXT]
                          [--db NAME] [--reuse]

The large size, 20,000 nodes and 1,000,000 members: ``--nodes 20000 --gangs 100000 --topology``
(about 5 minutes to populate on 2 cores). ``--keep-db --only NONE`` populates and keeps the
database; ``--reuse`` renders against it later, migrating it first (so that two checkouts can
be measured in turn on the same data; a newer checkout's migrations stay applied).

What runs (nothing asserts; the script prints a table and writes JSON):

* its own PostgreSQL database ``gangsched_bench_pages`` (``--db``; dropped and created at start through
  psycopg on the ``postgres`` database, migrated with ``call_command``, dropped at the end);
* bulk inserts: ``--nodes`` nodes (80% CPU {cpu 64, memory 256Gi}, 20% GPU {cpu 96, memory
  768Gi, nvidia.com/gpu 8}); ``--gangs`` gangs of ``--members`` pods (so 100,000 by default):
  40% Running (bound, started over the last two hours, a tenth of them finished in the last
  hour), 30% Pending (a third reserved; each with a start-time forecast, as the forecast run
  leaves them), 15% TimedOut with the engine's message, 10% Finished,
  5% Killed; one gang in twenty in a gang group of two; twenty submitters; three history events
  per gang over the last two hours; a scheduling cycle a second for the last hour from two
  workers; the scheduler lease; the three queues the gangs name (``default``, ``gpu``,
  ``batch``); the per-node usage folded (as the timeout sweep does); then ANALYZE;
* each page rendered ``--repeat`` times with Django's test client, logged in as an operator
  (sees every gang), after one warm-up render: wall time per render (p50, p95, max, ms) and the
  number of SQL queries. A few pages are also rendered as a submitter (sees her own gangs).
* ``--topology``: the nodes get block and rack labels (8 nodes a rack, 64 a block,
  ``topology.gangsched.io/block``, ``/rack``, ``kubernetes.io/hostname``) and a Topology of those
  three levels, so the Nodes page draws its heat map; one rack's filtered Nodes page is rendered
  too. ``--only TEXT`` renders only the pages whose URL contains TEXT (``--only /nodes/``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.pages_forecasts import forecasts_insert  # noqa: E402

BENCH_DB = "gangsched_bench_pages"
PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}
GI = 2**30
SUBMITTERS = [f"user{i:02d}" for i in range(20)]
BUDGET_MS = 300
#: Members and events are built and inserted this many at a time.
CHUNK = 50_000
TOPOLOGY = ("topology.gangsched.io/block", "topology.gangsched.io/rack", "kubernetes.io/hostname")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gangs", type=int, default=10_000)
    parser.add_argument("--members", type=int, default=10, help="pods per gang")
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "pages.json"))
    parser.add_argument("--keep-db", action="store_true", help="do not drop the bench database")
    parser.add_argument("--db", default=BENCH_DB, help="the database to create (and drop) for the run")
    parser.add_argument(
        "--reuse", action="store_true", help="render against --db as a --keep-db run left it (no populate)"
    )
    parser.add_argument("--topology", action="store_true", help="label racks and blocks; a Topology")
    parser.add_argument("--only", default="", help="render only the pages whose URL contains this")
    return parser.parse_args()


def configure_environment(db: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "gangsched.settings"
    from bench.local_key import ensure_local_key

    ensure_local_key()
    os.environ["DATABASE_URL"] = f"postgres://{PG['user']}@{PG['host']}:{PG['port']}/{db}"
    os.environ["ALLOWED_HOSTS"] = "testserver,localhost"
    os.environ.setdefault("LOG_LEVEL", "WARNING")


def admin_execute(sql: str) -> None:
    import psycopg

    with psycopg.connect(dbname="postgres", autocommit=True, **PG) as conn:
        conn.execute(sql)


def database_drop(db: str) -> None:
    from django.db import connections

    connections.close_all()
    admin_execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


# ---------------------------------------------------------------- data


def populate(args: argparse.Namespace) -> dict:
    """Bulk-insert the cluster, gangs, members, history and cycles; return what to render."""
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.utils import timezone

    from scheduler_core.models import (
        Gang,
        GangEvent,
        GangGroup,
        Member,
        Node,
        Queue,
        SchedulerLease,
        SchedulingCycle,
    )
    from scheduler_core.reads.node_usage import usage_compact

    rng = random.Random(args.seed)
    now = timezone.now()
    nodes = []
    for i in range(args.nodes):
        gpu = i % 5 == 0
        allocatable = (
            {"cpu": 96000, "memory": 768 * GI, "nvidia.com/gpu": 8}
            if gpu
            else {"cpu": 64000, "memory": 256 * GI}
        )
        nodes.append(
            Node(
                name=f"{'gpu' if gpu else 'cpu'}-{i:04d}", allocatable=allocatable, unschedulable=i % 97 == 0
            )
        )
        if args.topology:
            nodes[-1].labels = {TOPOLOGY[0]: f"block-{i // 64:03d}", TOPOLOGY[1]: f"rack-{i // 8:04d}",
                                TOPOLOGY[2]: nodes[-1].name}  # fmt: skip
    Node.objects.bulk_create(nodes, batch_size=2000)
    # The queues the gangs name, so that the Queues page charges their pods to them.
    Queue.objects.bulk_create([Queue(name=name) for name in ("batch", "default", "gpu")])
    if args.topology:
        from scheduler_core.models import Topology

        Topology.objects.create(name="bench", levels=list(TOPOLOGY))
    names = [n.name for n in nodes]

    groups = GangGroup.objects.bulk_create(
        [GangGroup(key=f"team-{i % 50}/pair-{i}",
                   members=[f"team-{i % 50}/g{i:05d}", f"team-{(i + 1) % 50}/g{i + 1:05d}"])
         for i in range(0, args.gangs - 1, 40)]
    )  # fmt: skip
    group_of = {}
    for group in groups:
        for key in group.members:
            group_of[key] = group

    plan = []  # (phase, gang) per gang
    gangs = []
    for i in range(args.gangs):
        namespace, name = f"team-{i % 50}", f"g{i:05d}"
        roll = rng.random()
        phase = (
            "Running" if roll < 0.40 else "Pending" if roll < 0.70 else "TimedOut" if roll < 0.85
            else "Finished" if roll < 0.95 else "Killed"
        )  # fmt: skip
        timed_out = phase == "TimedOut"
        gangs.append(
            Gang(
                namespace=namespace, name=name, min_member=args.members, total_number=args.members,
                queue=rng.choice(["default", "gpu", "batch"]), priority=rng.randint(0, 1000),
                submitter=SUBMITTERS[i % len(SUBMITTERS)], phase=phase,
                group=group_of.get(f"{namespace}/{name}"),
                reason="TimedOut" if timed_out else ("InsufficientResources" if phase == "Pending" else ""),
                message=(
                    f"timed out: not satisfied within 300s (waited 301.2s); {args.members} members, "
                    f"{rng.randint(0, args.members - 1)} placeable: nvidia.com/gpu short by 4"
                    if timed_out
                    else "needs 10 x {cpu 1, memory 4Gi}; short by 3 nodes" if phase == "Pending" else ""
                ),
                declaration={"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                             "metadata": {"name": name, "namespace": namespace},
                             "spec": {"minMember": args.members}},
                source_format="podgroup", wait_seconds=300,
                created=now - dt.timedelta(seconds=rng.randint(60, 3 * 86400)),
            )
        )  # fmt: skip
        plan.append(phase)
    Gang.objects.bulk_create(gangs, batch_size=2000)
    forecasts_insert([g for g, phase in zip(gangs, plan, strict=True) if phase == "Pending"], now)

    members, created = [], 0
    for gang, phase in zip(gangs, plan, strict=True):
        if len(members) >= CHUNK:  # in chunks: a million Member objects at once would take gigabytes
            created += len(Member.objects.bulk_create(members, batch_size=5000))
            members = []
        for j in range(args.members):
            member = Member(
                namespace=gang.namespace, name=f"{gang.name}-{j}", gang=gang, priority=gang.priority,
                requests={"cpu": 1000 * rng.randint(1, 4), "memory": 4 * GI}, created=gang.created,
            )  # fmt: skip
            if phase == "Running":
                member.phase, member.node = "Running", rng.choice(names)
                member.started_at = now - dt.timedelta(seconds=rng.randint(0, 7200))
                if rng.random() < 0.1:
                    member.phase, member.finished_at = (
                        "Succeeded",
                        now - dt.timedelta(seconds=rng.randint(0, 3600)),
                    )
            elif phase == "Pending" and rng.random() < 0.33:
                member.reserved_node = rng.choice(names)
            elif phase in ("Finished", "Killed"):
                member.phase = "Succeeded" if phase == "Finished" else "Failed"
            members.append(member)
    created += len(Member.objects.bulk_create(members, batch_size=5000))

    events, recorded = [], 0
    for gang, phase in zip(gangs, plan, strict=True):
        if len(events) >= CHUNK:
            recorded += len(GangEvent.objects.bulk_create(events, batch_size=5000))
            events = []
        kinds = [
            "created",
            "explained",
            {
                "Running": "bound",
                "TimedOut": "timed_out",
                "Finished": "finished",
                "Killed": "killed",
                "Pending": "explained",
            }[phase],
        ]
        for kind in kinds:
            events.append(GangEvent(gang=gang, kind=kind, reason=f"{kind} (bench)",
                                    created=now - dt.timedelta(seconds=rng.randint(0, 7200)),
                                    published_at=now))  # fmt: skip
    recorded += len(GangEvent.objects.bulk_create(events, batch_size=5000))
    SchedulingCycle.objects.bulk_create(
        [SchedulingCycle(started_at=now - dt.timedelta(seconds=s), duration_s=rng.uniform(0.01, 0.3),
                         pods_considered=rng.randint(0, 3000), pods_bound=rng.randint(0, 100), epoch=1,
                         worker=f"celery@worker-{s % 2}") for s in range(3600)],
        batch_size=2000,
    )  # fmt: skip
    SchedulerLease.objects.create(
        name="scheduler",
        holder="worker-0:1234",
        epoch=1,
        acquired_at=now,
        expires_at=now + dt.timedelta(seconds=30),
    )
    operator = User.objects.create_user("olga", password="bench")
    operator.groups.add(Group.objects.get(name="operators"))
    submitter = User.objects.create_user(SUBMITTERS[3], password="bench")
    # The triggers appended the usage per insert batch; the timeout sweep folds it within seconds.
    usage_compact()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    running = next(g for g, p in zip(gangs, plan, strict=True) if p == "Running")
    timed_out = next(g for g, p in zip(gangs, plan, strict=True) if p == "TimedOut" and g.group_id)
    return {"operator": operator, "submitter": submitter, "running": running, "grouped": timed_out,
            "members": created, "events": recorded}  # fmt: skip


def reused() -> dict:
    """What ``populate`` returned, read back from a database a ``--keep-db`` run left."""
    from django.contrib.auth.models import User

    from scheduler_core.models import Gang, GangEvent, Member, Node

    return {
        "operator": User.objects.get(username="olga"),
        "submitter": User.objects.get(username=SUBMITTERS[3]),
        "running": Gang.objects.filter(phase="Running").order_by("pk").first(),
        "grouped": Gang.objects.filter(phase="TimedOut", group__isnull=False).order_by("pk").first(),
        "members": Member.objects.count(),
        "events": GangEvent.objects.count(),
        "gangs": Gang.objects.count(),
        "nodes": Node.objects.count(),
    }


# ---------------------------------------------------------------- measure


def measure(client, url: str, repeat: int) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    response = client.get(url)  # warm-up: templates compiled, connection open
    if response.status_code != 200:
        raise SystemExit(f"{url}: HTTP {response.status_code}")
    times = []
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as queries:
            start = time.perf_counter()
            client.get(url)
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {
        "url": url,
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 1),
        "max_ms": round(times[-1], 1),
        "queries": len(queries),
        "bytes": len(response.content),
    }


def main() -> None:
    args = parse_args()
    configure_environment(args.db)
    if not args.reuse:
        admin_execute(f"DROP DATABASE IF EXISTS {args.db} WITH (FORCE)")
        admin_execute(f"CREATE DATABASE {args.db}")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    try:
        start = time.perf_counter()
        if args.reuse:
            # Brings a database an older checkout left up to this one's tables and triggers (a
            # no-op when it is current; 0019 sums its queues and event minutes once).
            call_command("migrate", verbosity=0)
            world = reused()
            args.gangs, args.nodes = world["gangs"], world["nodes"]
        else:
            call_command("migrate", verbosity=0)
            world = populate(args)
        populate_s = time.perf_counter() - start
        print(f"{'reused' if args.reuse else 'populated'} {args.gangs} gangs, {world['members']} members, "
              f"{world['events']} events, {args.nodes} nodes in {populate_s:.1f}s")  # fmt: skip
        as_operator, as_submitter = Client(), Client()
        as_operator.force_login(world["operator"])
        as_submitter.force_login(world["submitter"])
        running, grouped = world["running"], world["grouped"]
        pages = [
            ("operator", as_operator, "/"),
            ("operator", as_operator, "/gangs/"),
            ("operator", as_operator, "/gangs/?state=Pending&state=Running&sort=-priority"),
            ("operator", as_operator, "/gangs/?queue=gpu&sort=submitter&page=40"),
            ("operator", as_operator, "/gangs/?q=g0999"),
            ("operator", as_operator, f"/gangs/{running.namespace}/{running.name}/"),
            ("operator", as_operator, f"/gangs/{grouped.namespace}/{grouped.name}/"),
            ("operator", as_operator, "/nodes/"),
            ("operator", as_operator, "/timed-out/"),
            ("operator", as_operator, "/timed-out/?page=10"),
            ("operator", as_operator, "/queues/"),
            ("operator", as_operator, "/simulations/"),
            ("operator", as_operator, "/history/"),
            ("operator", as_operator, "/history/?kind=killed&kind=timed_out"),
            ("operator", as_operator, f"/history/?gang={running.namespace}/{running.name}"),
            ("operator", as_operator, "/history/?queue=gpu&since=1h"),
            ("operator", as_operator, "/history/?actor=scheduler"),
            ("submitter", as_submitter, "/"),
            ("submitter", as_submitter, "/gangs/"),
            ("submitter", as_submitter, "/timed-out/"),
            ("submitter", as_submitter, "/history/"),
            ("submitter", as_submitter, "/history/?kind=killed"),
        ]
        if args.topology:
            pages.insert(8, ("operator", as_operator, f"/nodes/?level={TOPOLOGY[1]}&domain=rack-0001"))
        pages = [page for page in pages if args.only in page[2]]
        results = []
        print(f"{'as':10} {'page':58} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'queries':>8}")
        for who, client, url in pages:
            row = {"as": who, **measure(client, url, args.repeat)}
            results.append(row)
            flag = "" if row["p95_ms"] < BUDGET_MS else f"  over {BUDGET_MS} ms"
            figures = f"{row['p50_ms']:8} {row['p95_ms']:8} {row['max_ms']:8} {row['queries']:8}"
            print(f"{who:10} {url[:58]:58} {figures}{flag}")
        out = {
            "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                        "platform": platform.platform()},
            "gangs": args.gangs, "members": world["members"], "events": world["events"], "nodes": args.nodes,
            "topology": args.topology,
            "repeat": args.repeat, "budget_ms": BUDGET_MS, "populate_s": round(populate_s, 1),
            "pages": results,
            "all_under_budget": all(r["p95_ms"] < BUDGET_MS for r in results),
        }  # fmt: skip
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.out}")
    finally:
        if not args.keep_db and not args.reuse:
            database_drop(args.db)


if __name__ == "__main__":
    main()
