"""What ``bench/service.py`` reads back after a phase: bind times from the database, pods bound
per second, per-gang latencies, cycle timings, and the printed summary.

Split from the script so that each part reads on its own. A latency below zero (a gang bound
before the moment it is counted from) is a measurement bug, never a figure: it aborts the run.
"""

from __future__ import annotations

import sys
import time


class MeasurementError(SystemExit):
    """The run measured something other than what it claims; its figures must not be written."""


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def wait_all_bound(total: int, namespace: str, worker, tick: float, timeout: float) -> tuple[int, float]:
    from scheduler_core.models import Member

    deadline = time.monotonic() + timeout
    while True:
        bound = Member.objects.filter(namespace=namespace, node__isnull=False).count()
        if bound >= total:
            return bound, time.time()
        if not worker.alive():
            print("the celery worker died", file=sys.stderr)
            return bound, time.time()
        if time.monotonic() > deadline:
            print(f"timed out: {bound} of {total} pods bound", file=sys.stderr)
            return bound, time.time()
        time.sleep(tick)


def cycles_since(first_cycle_id: int) -> dict[int, tuple]:
    """Cycle id -> (start, end, duration, pods considered, pods bound, timings), times in epoch s."""
    from scheduler_core.models import SchedulingCycle

    rows = SchedulingCycle.objects.filter(pk__gte=first_cycle_id).values_list(
        "pk", "started_at", "duration_s", "pods_considered", "pods_bound", "timings"
    )
    return {
        pk: (started_at.timestamp(), started_at.timestamp() + duration, duration, considered, bound, timings)
        for pk, started_at, duration, considered, bound, timings in rows
    }


def latencies_check(latencies: list[float]) -> None:
    if latencies and min(latencies) < 0:
        raise MeasurementError(
            f"measurement bug: a gang bound {-min(latencies):.3f}s before the moment its latency "
            "counts from; no figure written"
        )


def measure(submitted: dict[str, float], first_cycle_id: int, namespace: str, *, drain: bool) -> dict:
    """Bind times from the database: each bound journal row's time is the end of its cycle.

    stream (``drain`` false): the run starts at the first submission and a gang's latency counts
    from the start of its own ``gang_submit``. backlog (``drain`` true): both count from the start
    of the drain's first cycle (``started_at`` of the first cycle at or after ``first_cycle_id``).
    """
    from scheduler_core.models import BindJournal, BindState

    cycles = cycles_since(first_cycle_id)
    rows = BindJournal.objects.filter(state=BindState.BOUND, member__namespace=namespace).values_list(
        "gang__namespace", "gang__name", "cycle_id"
    )
    pod_times: list[float] = []
    gang_done: dict[str, float] = {}
    for gang_namespace, name, cycle_id in rows:
        if cycle_id not in cycles:
            raise MeasurementError(f"measurement bug: a pod was bound by cycle {cycle_id}, before the run")
        ended = cycles[cycle_id][1]
        pod_times.append(ended)
        key = f"{gang_namespace}/{name}"
        gang_done[key] = max(gang_done.get(key, 0.0), ended)
    pod_times.sort()
    if drain:
        start = min((c[0] for c in cycles.values()), default=float("nan"))
        counted_from = dict.fromkeys(submitted, start)
    else:
        start = min(submitted.values())
        counted_from = submitted
    last_bound = pod_times[-1] if pod_times else float("nan")
    elapsed = last_bound - start
    steady = float("nan")
    if len(pod_times) >= 10:
        low, high = int(len(pod_times) * 0.1), int(len(pod_times) * 0.9) - 1
        if pod_times[high] > pod_times[low]:
            steady = (high - low) / (pod_times[high] - pod_times[low])
    latencies = [gang_done[key] - began for key, began in counted_from.items() if key in gang_done]
    latencies_check(latencies)
    working = [c for c in cycles.values() if c[3] > 0]
    timing_names = sorted({name for c in working for name in c[5]})
    return {
        "started_at": start,
        "pods_bound": len(pod_times),
        "elapsed_s": elapsed,
        "pods_bound_per_second": len(pod_times) / elapsed if elapsed > 0 else float("nan"),
        "pods_bound_per_second_steady": steady,
        "gangs_bound": len(gang_done),
        "gang_bound_min_s": min(latencies) if latencies else float("nan"),
        "gang_bound_p50_s": percentile(latencies, 50),
        "gang_bound_p99_s": percentile(latencies, 99),
        "gang_bound_max_s": max(latencies) if latencies else float("nan"),
        "cycles_run": len(working),
        "cycles_binding": sum(1 for c in working if c[4] > 0),
        "cycle_duration_mean_s": sum(c[2] for c in working) / len(working) if working else float("nan"),
        "cycle_duration_max_s": max((c[2] for c in working), default=float("nan")),
        "cycle_timings_mean_s": {
            name: sum(c[5].get(name, 0.0) for c in working) / len(working) for name in timing_names
        },
    }


def finite(value):
    """NaN (a figure that could not be computed, e.g. no spread in a one-cycle phase) as null."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def summary(result: dict, title: str, start_label: str) -> str:
    lines = [
        f"service bench, {title}",
        f"  {result['nodes']} nodes, {result['gangs']} gangs x {result['members']} pods "
        f"({result['gangs'] * result['members']} pods), worker prefork x2",
        f"  submitted in          {result['submit_s']:8.2f} s   "
        f"({result['submit_pods_per_second']:.0f} pods/s)",
        f"  pods bound            {result['pods_bound']:8d}     (polled: {result['pods_bound_polled']})",
        f"  {start_label:<21} {result['elapsed_s']:8.2f} s",
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
