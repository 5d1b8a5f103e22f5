"""bench/load.py's verdict and printed report: every target judged against a run's result.

Targets: at least 1,000 requests a second, read p99 under 200 ms, submission p99 under half the
submit interval, no errors (why half: bench/load.py's docstring). Each is printed as met or
MISSED with the machine's speed and load average beside the figures.
"""

from __future__ import annotations

import operator

READ_P99_TARGET_MS = 200
THROUGHPUT_TARGET = 1000  # requests a second, reads and submissions together
#: A submission's p99 must stay under this share of the submit interval.
SUBMIT_P99_SHARE_OF_INTERVAL = 0.5
COMPARE = {">=": operator.ge, "<": operator.lt, "==": operator.eq}


def judge(result: dict) -> list[dict]:
    """Every target against a run's result: name, the figure, the bound and whether it was met."""
    submit_bound_ms = round(SUBMIT_P99_SHARE_OF_INTERVAL * result["submit_interval_s"] * 1000, 1)
    checks = [
        ("throughput", "req/s", result["per_second"], ">=", THROUGHPUT_TARGET),
        ("read p99", "ms", result["read"]["latency_ms"]["p99"], "<", READ_P99_TARGET_MS),
        ("submission p99", "ms", result["submit"]["latency_ms"]["p99"], "<", submit_bound_ms),
        ("errors", "", result["errors"], "==", 0),
    ]
    return [
        {"target": name, "unit": unit, "value": value, "must_be": must, "bound": bound}
        | {"met": COMPARE[must](value, bound)}
        for name, unit, value, must, bound in checks
    ]


def report(result: dict) -> None:
    """The run's table, the reads by how the server answered them, each target and the machine."""
    columns = ("requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors")
    print(f"{'kind':<8}" + "".join(f"{column:>10}" for column in columns))
    for kind in ("read", "submit"):
        row, latency = result[kind], result[kind]["latency_ms"]
        values = (row["requests"], row["per_second"], *latency.values(), row["errors"])
        print(f"{kind:<8}" + "".join(f"{value:>10}" for value in values))
    for how, row in result["read"]["by_cache"].items():
        share = 100 * row["requests"] / max(1, result["read"]["requests"])
        print(f"  read {how:<7} {share:5.1f}%  p50 {row['p50_ms']:>7} ms  p99 {row['p99_ms']:>7} ms")
    lag = result["client_loop_lag_ms"]
    print(f"this script's event loop ran timers late by p50 {lag['p50']} ms, p99 {lag['p99']} ms")
    print(f"total {result['per_second']} req/s, {result['errors']} errors")
    for target in result["targets"]:
        verdict = "met" if target["met"] else "MISSED"
        figure = f"{target['value']} {target['unit']}".strip()
        print(f"  {target['target']:<15} {figure:>14}  {target['must_be']} {target['bound']:<8} {verdict}")
    averages = result["load_average"]
    where = f"load average {averages['before'][0]} -> {averages['after'][0]}"
    speed = result["machine"]["speed"]
    if speed:
        where = f"engine {speed['engine_us_per_pod']} µs per pod, {where}"
    print(f"machine: {where}; targets met: {result['meets_targets']}")
