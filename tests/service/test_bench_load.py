"""bench/load.py judges every target of a run (bench/load_report.py) and reports the machine's
speed beside its figures (bench/machine_speed.py). It used to judge the errors and the read p99 only,
and printed "targets met" for runs whose submissions took longer than the submit interval."""

from __future__ import annotations

import pytest

from bench.load_report import judge, report
from bench.machine_speed import engine_us_per_pod


def run(per_second=1500.0, read_p99=80.0, submit_p99=900.0, errors=0, interval=4.0) -> dict:
    """The parts of bench/load.py's result that ``judge`` reads."""
    return {
        "per_second": per_second,
        "submit_interval_s": interval,
        "read": {"latency_ms": {"p99": read_p99}},
        "submit": {"latency_ms": {"p99": submit_p99}},
        "errors": errors,
    }


def missed(result: dict) -> list[str]:
    return [target["target"] for target in judge(result) if not target["met"]]


def test_a_run_within_every_bound_meets_every_target():
    targets = judge(run())
    assert [t["target"] for t in targets] == ["throughput", "read p99", "submission p99", "errors"]
    assert all(target["met"] for target in targets)


@pytest.mark.parametrize(
    "figures, target",
    [
        ({"per_second": 999.9}, "throughput"),
        ({"read_p99": 200.0}, "read p99"),
        ({"submit_p99": 2000.0}, "submission p99"),  # half the 4 s interval
        ({"submit_p99": 5800.0}, "submission p99"),  # longer than the interval: clients queue
        ({"errors": 1}, "errors"),
    ],
)
def test_each_target_is_judged_on_its_own(figures, target):
    assert missed(run(**figures)) == [target]


def test_the_submission_bound_is_half_the_submit_interval():
    submission = judge(run(interval=60.0, submit_p99=29_000.0))[2]
    assert submission["target"] == "submission p99"
    assert (submission["bound"], submission["met"]) == (30_000.0, True)
    assert missed(run(interval=60.0, submit_p99=30_000.0)) == ["submission p99"]


def test_the_boundaries_of_throughput_and_errors_are_met():
    assert missed(run(per_second=1000.0, errors=0)) == []


def test_the_machines_speed_is_the_engines_microseconds_per_pod():
    speed = engine_us_per_pod(seconds=0, nodes=100, pods=500)  # one small run
    assert len(speed["runs_us_per_pod"]) == 1
    assert speed["engine_us_per_pod"] == speed["fastest_us_per_pod"] > 0
    assert (speed["nodes"], speed["pods"]) == (100, 500)


def test_the_report_prints_each_target_met_or_missed_beside_the_machines_speed(capsys):
    result = run(submit_p99=5800.0) | {"meets_targets": False, "client_loop_lag_ms": {"p50": 0.1, "p99": 9.0}}
    for kind, requests in (("read", 9000), ("submit", 1500)):
        result[kind] |= {"requests": requests, "per_second": requests / 30, "errors": 0, "by_cache": {}}
        result[kind]["latency_ms"] = {"p50": 5.0, "p90": 9.0, **result[kind]["latency_ms"], "max": 9999.0}
    result["targets"] = judge(result)
    result["load_average"] = {"before": [2.5, 2.0, 1.0], "after": [3.5, 2.5, 1.5]}
    result["machine"] = {"speed": {"engine_us_per_pod": 12.5}}
    report(result)
    printed = capsys.readouterr().out
    assert "submission p99       5800.0 ms  < 2000.0   MISSED" in printed
    assert "throughput        1500.0 req/s  >= 1000     met" in printed
    assert "machine: engine 12.5 µs per pod, load average 2.5 -> 3.5; targets met: False" in printed
