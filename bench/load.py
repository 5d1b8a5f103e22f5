"""Load test of the REST API against a running server (``make run``): many clients listing and
submitting gangs at once while the scheduler runs.

    python bench/load.py [--url http://127.0.0.1:8010] [--clients 200] [--duration 60]
                         [--submit-interval 4] [--operators 20] [--think 0] [--warmup 0]
                         [--out bench/results/load.json]

Run it against a ``make run`` of its own (bench/README.md, *load.py*, has the commands):
it needs the server's database (the same ``DATABASE_URL``), where it creates the users
``load-000`` ... and their API tokens (``load-000`` ... ``load-<operators - 1>`` in the
``operators`` group) and nothing else. Each client is one user with one HTTP keep-alive
connection (uvloop + bench/keepalive.py, whose CPU per request is a quarter of aiohttp's: the
script shares the server's two cores), looping without pause (or, with ``--think S``, waiting about S
seconds between requests, as API clients and dashboards that poll do; each such client starts
at a random moment of its first S seconds, as independent pollers do):

* reads: ``GET /api/v1/gangs/?pageSize=20``, a submitter's own gangs or, for operators, every
  gang (the newest page; answered from the web process's read cache until one of those gangs
  changes, docs/api.md);
* writes: every ``--submit-interval`` seconds (staggered; never twice in a row, so a slow
  server still sees reads), ``POST /api/v1/gangs/`` of a
  one-pod gang (100m CPU, 128Mi, ``durationSeconds`` 5, so the scheduler binds it and the
  kubelet finishes it while the test runs). Per user that is 15 a minute at the default, under
  the submission throttle (``GANGSCHED_SUBMIT_RATE``, 60/min), so no 429 is expected.

Load models docs/benchmarks.md reports: back to back (the defaults: a saturation test, half of the
requests are submissions, 50 a second from 200 users); and polling, ``--think 2`` or
``--think 5`` with ``--submit-interval 60`` (a dashboard or CLI refreshing its list every 2 or
5 s, each user submitting a job a minute: 3.3 submissions a second in all).

``--warmup S`` runs the same load for S seconds first and leaves those requests out of the
latencies and throughput (a freshly started server's first requests: imports, connection pools
filling); their errors still count, and the JSON lists them under ``warmup``.

Reported per kind (read, submit): requests, throughput, latency p50/p90/p99/max and errors
(anything but 200/201, and connection failures), a ``timeline`` of latency per 10 s, and
``by_cache``: the requests and latency per way the server answered (its ``X-Cache`` header: ``hit``,
``stale``, ``coalesced``, ``miss``; ``none`` when Django answered without the fast path); the
load average before and after (the server, its worker and this script share the machine); and
this script's own part: its CPU per request (``client_cpu_ms_per_request``) and how late its
event loop ran a 5 ms timer (``client_loop_lag_ms``), a delay every latency it measured includes.
``seconds`` runs until the last client stops, so with ``--think`` it includes up to 1.5 think
times after ``--duration``, and throughput is a little understated.

The machine's speed, measured in the same run: before the load, ``--speed-seconds`` (5; 0
skips it) of the engine benchmark's µs per pod (bench/machine_speed.py), printed beside the
figures and in the JSON's ``machine``, so that figures from two machines can be compared.

Targets (bench/load_report.py), each printed as met or MISSED, and the exit status 1 when one
is missed: at least 1,000 requests a second, read p99 under 200 ms, submission p99 under half the submit
interval, no errors. Half the interval: a client submits every interval and waits for the
answer before its next request, so a submission that takes as long as the interval means the
server no longer serves the rate the clients ask for (they queue, and submit less often than
asked); under half, every client spends at most half its interval submitting, and at most half
of them wait on a submission at once (Little's law), with room for the load's spread. The JSON
holds every target (``targets``) and whether all were met (``meets_targets``).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gc
import json
import os
import platform
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httptools
import uvloop

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.keepalive import Connection  # noqa: E402
from bench.load_report import judge, report  # noqa: E402

#: A request not answered within this is a failure (``TimeoutError``).
REQUEST_TIMEOUT_S = 30.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("LOAD_URL", "http://127.0.0.1:8010"))
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument(
        "--warmup",
        type=float,
        default=0.0,
        help="seconds of the same load before --duration starts, not in the latencies (a fresh "
        "server's first requests); their errors still count",
    )
    parser.add_argument(
        "--submit-interval", type=float, default=4.0, help="seconds between a client's submits"
    )
    parser.add_argument("--operators", type=int, default=20, help="clients that list every gang")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean seconds a client waits between requests (uniform 0.5x-1.5x); 0: back to back",
    )
    parser.add_argument(
        "--speed-seconds",
        type=float,
        default=5.0,
        help="seconds of the engine's µs-per-pod benchmark before the load (the machine's speed); 0: skip",
    )
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "load.json"))
    return parser.parse_args(argv)


def tokens(count: int, operators: int) -> list[str]:
    """API tokens of the load users, created in the server's database if missing."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gangsched.settings")
    from bench.local_key import ensure_local_key

    ensure_local_key()
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from rest_framework.authtoken.models import Token

    group = Group.objects.get(name="operators")
    keys = []
    for index in range(count):
        user, created = User.objects.get_or_create(username=f"load-{index:03d}")
        if created:
            user.set_unusable_password()
            user.save()
        if index < operators:
            user.groups.add(group)
        keys.append(Token.objects.get_or_create(user=user)[0].key)
    return keys


@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)
    sent_at: list[float] = field(default_factory=list)  # seconds since the start, per request
    statuses: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)  # exceptions by type
    # Latencies by how the server answered (its X-Cache header: hit, stale, coalesced, miss; none:
    # a read Django answered without the fast path, e.g. a token the token cache no longer held).
    by_cache: dict[str, list[float]] = field(default_factory=dict)


def percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def client(
    index: int,
    key: str,
    args: argparse.Namespace,
    stop_at: float,
    tallies: dict[str, Tally],
    run: str,
    t0: float,
) -> None:
    """One user's loop; ``t0`` is when the measured part starts (requests sent before it go
    to the ``warmup`` tally)."""
    connection = Connection(args.url, f"Token {key}")
    read_request = connection.get_bytes("/api/v1/gangs/?pageSize=20")
    # Submissions staggered over the interval, so they do not arrive in waves.
    next_submit = time.monotonic() + random.Random(index).uniform(0, args.submit_interval)
    submitted, last = 0, ""
    pause = random.Random(10_000 + index)
    if args.think > 0:  # pollers start at their own moment, not all in the same millisecond
        await asyncio.sleep(pause.uniform(0, args.think))
    while time.monotonic() < stop_at:
        # A submit is due every interval, but never twice in a row: when requests take
        # longer than the interval the client still lists (the mix stays read-heavy).
        if time.monotonic() >= next_submit and last != "submit":
            kind = "submit"
            name = f"{run}-c{index:03d}-{submitted}"
            body = {
                "namespace": "load",
                "name": name,
                "minMember": 1,
                "waitSeconds": 600,
                "pods": [
                    {
                        "name": name,
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                        "durationSeconds": 5,
                    }
                ],
            }
            request = connection.post_json_bytes("/api/v1/gangs/", body)
            submitted += 1
            next_submit += args.submit_interval
        else:
            kind, request = "read", read_request
        last = kind
        started = time.perf_counter()
        tally = tallies[kind] if started >= t0 else tallies["warmup"]
        try:
            status, how = await connection.send(request, timeout=REQUEST_TIMEOUT_S)
            tally.statuses[status] += 1
            tally.by_cache.setdefault(how, []).append((time.perf_counter() - started) * 1000)
        except (OSError, TimeoutError, httptools.HttpParserError) as error:
            tally.failures[type(error).__name__] += 1
            continue
        finally:
            tally.latencies_ms.append((time.perf_counter() - started) * 1000)
            tally.sent_at.append(started - t0)
        if args.think > 0:
            await asyncio.sleep(pause.uniform(0.5, 1.5) * args.think)
    connection.close()


def timeline(tally: Tally, seconds: float, window: float = 10.0) -> list[dict]:
    """Requests and latency per ``window`` seconds of the run (by when each was sent)."""
    rows = []
    start = 0.0
    while start < seconds:
        sent = zip(tally.latencies_ms, tally.sent_at, strict=True)
        latencies = [ms for ms, at in sent if start <= at < start + window]
        rows.append(
            {
                "from_s": start,
                "requests": len(latencies),
                "p50_ms": round(percentile(latencies, 0.50), 1),
                "p99_ms": round(percentile(latencies, 0.99), 1),
                "max_ms": round(max(latencies, default=0.0), 1),
            }
        )
        start += window
    return rows


def summary(tally: Tally, seconds: float, ok: int) -> dict:
    requests = sum(tally.statuses.values()) + sum(tally.failures.values())
    errors = sum(n for status, n in tally.statuses.items() if status != ok) + sum(tally.failures.values())
    return {
        "requests": requests,
        "per_second": round(requests / seconds, 1),
        "errors": errors,
        "statuses": {str(status): n for status, n in sorted(tally.statuses.items())},
        "failures": dict(tally.failures),
        "latency_ms": {
            "p50": round(percentile(tally.latencies_ms, 0.50), 1),
            "p90": round(percentile(tally.latencies_ms, 0.90), 1),
            "p99": round(percentile(tally.latencies_ms, 0.99), 1),
            "max": round(max(tally.latencies_ms, default=0.0), 1),
        },
        "timeline": timeline(tally, seconds),
        "by_cache": {
            how: {
                "requests": len(values),
                "p50_ms": round(percentile(values, 0.50), 1),
                "p99_ms": round(percentile(values, 0.99), 1),
            }
            for how, values in sorted(tally.by_cache.items())
        },
    }


async def load(args: argparse.Namespace, keys: list[str], tallies: dict[str, Tally]) -> float:
    """Every client at once until the warm-up and the duration are over; returns the seconds
    the measured part took."""
    run = dt.datetime.now(dt.UTC).strftime("r%H%M%S")  # gang names of this run's own
    stop_at = time.monotonic() + args.warmup + args.duration
    t0 = time.perf_counter() + args.warmup
    loop = asyncio.get_running_loop()
    lag = loop.create_task(loop_lag(stop_at, t0, tallies["lag"]))
    from gangsched import gc_policy  # after django.setup() (tokens): it reads the settings

    collector = loop.create_task(gc_policy.run())
    await asyncio.gather(*(client(i, key, args, stop_at, tallies, run, t0) for i, key in enumerate(keys)))
    lag.cancel()
    collector.cancel()
    return time.perf_counter() - t0


#: How often ``loop_lag`` wakes to see how late this script's own event loop is.
LAG_PROBE_S = 0.005


async def loop_lag(stop_at: float, t0: float, tally: Tally) -> None:
    """How late this script's event loop runs a timer (its own CPU share and scheduling, on a
    machine it shares with the server): a latency measured here includes that delay, so a
    reader can tell the client's part of a read's p99 from the server's."""
    while time.monotonic() < stop_at:
        asked = time.perf_counter()
        await asyncio.sleep(LAG_PROBE_S)
        if asked >= t0:
            tally.latencies_ms.append((time.perf_counter() - asked - LAG_PROBE_S) * 1000)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    speed = None
    if args.speed_seconds > 0:  # before the load, the server idle: this machine's speed now
        from bench.machine_speed import engine_us_per_pod

        speed = engine_us_per_pod(args.speed_seconds)
        print(
            f"machine speed: engine {speed['engine_us_per_pod']} µs per pod (median of "
            f"{len(speed['runs_us_per_pod'])} runs, fastest {speed['fastest_us_per_pod']}), "
            f"load average {os.getloadavg()[0]:.2f}"
        )
    keys = tokens(args.clients, args.operators)  # the ORM, before the event loop starts
    # Django's objects, loaded for tokens(), are out of every later collection, and survivors of
    # full collections during the run are frozen as in the web process (gangsched/gc_policy.py):
    # the script's collections are not counted in the latencies it measures.
    gc.collect()
    gc.freeze()
    tallies = {"read": Tally(), "submit": Tally(), "warmup": Tally(), "lag": Tally()}
    warm = f" after {args.warmup:.0f} s of warm-up" if args.warmup else ""
    who = f"{args.clients} clients ({args.operators} operators)"
    print(f"{who} against {args.url} for {args.duration:.0f} s{warm}")
    load_before = [round(x, 2) for x in os.getloadavg()]  # what else the machine was doing
    cpu_before = time.process_time()
    seconds = uvloop.run(load(args, keys, tallies))
    client_cpu_s = time.process_time() - cpu_before
    load_after = [round(x, 2) for x in os.getloadavg()]
    result = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            # The engine benchmark's µs per pod just before the load (bench/machine_speed.py).
            "speed": speed,
        },
        # 1, 5 and 15 minute load averages before and after the run (the server, its worker
        # and this script share the machine with whatever else runs).
        "load_average": {"before": load_before, "after": load_after},
        "url": args.url,
        "clients": args.clients,
        "operators": args.operators,
        "seconds": round(seconds, 1),
        "submit_interval_s": args.submit_interval,
        "think_s": args.think,
        "warmup_s": args.warmup,
        "read": summary(tallies["read"], seconds, ok=200),
        "submit": summary(tallies["submit"], seconds, ok=201),
        "client_loop_lag_ms": {
            f"p{int(share * 100)}": round(percentile(tallies["lag"].latencies_ms, share), 1)
            for share in (0.5, 0.9, 0.99)
        },
    }
    total = result["read"]["requests"] + result["submit"]["requests"]
    result["per_second"] = round(total / seconds, 1)
    # This script's own CPU per request (warm-up included in both): what it takes from the server.
    all_requests = total + len(tallies["warmup"].latencies_ms)
    result["client_cpu_ms_per_request"] = round(1000 * client_cpu_s / max(1, all_requests), 3)
    warmup = tallies["warmup"]
    warmup_errors = sum(n for status, n in warmup.statuses.items() if status not in (200, 201))
    warmup_errors += sum(warmup.failures.values())
    if args.warmup:
        result["warmup"] = {
            "requests": len(warmup.latencies_ms),
            "errors": warmup_errors,
            "statuses": {str(status): n for status, n in sorted(warmup.statuses.items())},
            "failures": dict(warmup.failures),
        }
    result["errors"] = result["read"]["errors"] + result["submit"]["errors"] + warmup_errors
    result["targets"] = judge(result)
    result["meets_targets"] = all(target["met"] for target in result["targets"])

    report(result)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["meets_targets"] else 1


if __name__ == "__main__":
    sys.exit(main())
