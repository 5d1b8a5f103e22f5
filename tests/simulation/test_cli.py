"""``manage.py simulate`` end to end on a tiny trace, and its argument errors."""

import json

import pytest
from django.core.management import CommandError, call_command

from scheduler_core.simulation.plots import PLOTS

from .helpers import JOB_A_JOB_B, LEAST_WORK, ONE_NODE, THREE_NODES

REQUIRED = {
    "jobs_total",
    "jobs_finished",
    "avg_jct_s",
    "p95_jct_s",
    "avg_wait_s",
    "p95_wait_s",
    "makespan_s",
    "utilization",
    "waste_resource_hours",
    "deadlocked_jobs",
    "scheduler_seconds",
}


def test_it_writes_results_json_of_the_documented_shape_and_the_plots(tmp_path, capsys):
    trace = tmp_path / "jobs.csv"
    trace.write_text(JOB_A_JOB_B)
    out = tmp_path / "out"
    call_command(
        "simulate",
        "--trace", str(trace),
        "--cluster", THREE_NODES,
        "--policy", "pod",
        "--policy", "gangsched",
        "--out", str(out),
        "--processes", "1",
    )  # fmt: skip
    results = json.loads((out / "results.json").read_text())
    assert results["trace"] == "jobs.csv" and results["cluster"] == THREE_NODES
    assert list(results["policies"]) == ["pod", "gangsched"]
    for metrics in results["policies"].values():
        assert set(metrics) >= REQUIRED
        assert set(metrics["utilization"]) == {"cpu", "memory", "nvidia.com/gpu"}
        assert set(metrics["waste_resource_hours"]) == {"cpu", "memory", "nvidia.com/gpu"}
    assert results["policies"]["pod"]["deadlocked_jobs"] == 2
    assert results["policies"]["gangsched"]["jobs_finished"] == 5
    for name in PLOTS:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| deadlocked | 2 | 0 |" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"--cluster": "3x{gpu}"}, "group 1: 'gpu' is not resource=amount"),
        ({"--policy": "slurm"}, "unknown policy 'slurm'"),
        ({"--trace": "/nowhere.csv"}, "cannot read the file"),
        ({"--tick": "0"}, "--tick and --time-cap must be positive"),
        ({"--overtake-limit": "-5"}, "the overtake limit must be a finite number of seconds, 0 or more"),
    ],
)
def test_bad_arguments_are_a_command_error_with_the_reason(tmp_path, change, reason):
    trace = tmp_path / "jobs.csv"
    trace.write_text(JOB_A_JOB_B)
    arguments = {"--trace": str(trace), "--cluster": THREE_NODES, "--policy": "pod", "--out": str(tmp_path)}
    arguments.update(change)
    with pytest.raises(CommandError, match=reason.replace("(", r"\(")):
        call_command("simulate", *[item for pair in arguments.items() for item in pair])


def test_the_overtake_limit_changes_the_gangsched_order_only(tmp_path):
    trace = tmp_path / "jobs.csv"
    trace.write_text(LEAST_WORK)
    waits = {}
    for limit in ("0", "3600"):
        out = tmp_path / limit
        arguments = ["--trace", str(trace), "--cluster", ONE_NODE, "--out", str(out), "--processes", "1"]
        call_command(
            "simulate",
            *arguments,
            "--policy",
            "gangsched",
            "--policy",
            "fifo-gang",
            "--overtake-limit",
            limit,
        )
        results = json.loads((out / "results.json").read_text())["policies"]
        assert results["gangsched"]["overtake_limit_s"] == float(limit)
        assert results["fifo-gang"]["overtake_limit_s"] == 0.0
        waits[limit] = results["gangsched"]["avg_wait_s"]
    assert waits["0"] == pytest.approx((0 + 99 + 1098) / 3)  # FIFO: BIG first
    assert waits["3600"] == pytest.approx((0 + 109 + 98) / 3)  # SMALL passes BIG
