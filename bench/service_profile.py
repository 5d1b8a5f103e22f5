"""``bench/service.py --profile``: no worker; cycles run in-process under cProfile on the bench
database, printed with the slowest queries.

Split from the script so that each part reads on its own.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time
from pathlib import Path

from bench.service_work import submit_all, submit_all_indexes


def run_profile(args) -> None:
    """Two cycles in-process under cProfile: all ``--gangs`` pending (the backlog case), then
    ``--profile-extra`` more gangs pending beside the bound ones (a cycle of the stream case)."""
    from scheduler_core.cluster.simulated import SimulatedCluster

    began = time.time()
    submitted, _ = submit_all(args.gangs, args.members, args.submitters, None)
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
