"""``--forecasts``: the accuracy figures on hand-made forecasts, the baseline's plan on users'
limits, and the replay's forecasts end to end."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from django.core.management import call_command

from scheduler_core.engine import EngineConfig
from scheduler_core.simulation.forecast_accuracy import Record, accuracy
from scheduler_core.simulation.forecast_book import limits_plan
from scheduler_core.simulation.runtime_view import limits
from scheduler_core.simulation.traces import parse_trace
from tests.engine.world import NOW, nodes, snapshot
from tests.forecast.cases import running, waiting

from .helpers import ONE_NODE, trace_text


def test_error_and_coverage_of_known_forecasts():
    submit = np.array([0.0, 0.0, 0.0, 0.0])
    start = np.array([1000.0, 600.0, 100.0, 2000.0])
    demand = np.array([1.0, 8.0, 1.0, 64.0])
    records = [
        Record(0, 0.0, 800.0, 900.0, 1200.0, True),  # 10% early, inside its interval
        Record(1, 0.0, 700.0, 900.0, 1000.0, True),  # 50% late, started before its p10
        Record(2, 0.0, 0.0, 50.0, 90.0, True),  # waited 100 s: not judged
        Record(3, 0.0, None, None, None, True),  # no forecast: infinitely wrong
        Record(0, 500.0, 900.0, 1000.0, 1100.0, False),  # an hour later: exact (500 s ahead)
    ]
    figures = accuracy(records, submit, start, demand)
    first = figures["at_submission"]
    assert first["count"] == 3
    assert first["median_abs_error"] == pytest.approx(0.5)
    assert first["median_signed_error"] == pytest.approx(0.5)
    assert first["coverage"] == pytest.approx(1 / 3, abs=1e-4)
    assert first["started_by_p50"] == pytest.approx(1 / 3, abs=1e-4)
    assert first["no_forecast"] == 1
    assert first["by_size"]["1"] == {
        "count": 1,
        "median_abs_error": 0.1,
        "median_signed_error": -0.1,
        "coverage": 1.0,
        "started_by_p50": 0.0,
        "no_forecast": 0,
        "median_wait_s": 1000.0,
    }
    assert first["by_size"]["2-8"]["coverage"] == 0.0
    assert first["by_size"]["9-32"] == {"count": 0}
    assert first["by_size"]["33+"]["median_abs_error"] is None  # inf is not JSON
    every = figures["all"]
    assert every["count"] == 4
    assert every["by_size"]["1"]["count"] == 2
    assert every["by_size"]["1"]["median_abs_error"] == pytest.approx(0.05)


def test_the_baseline_plans_every_job_to_its_limit():
    """a/run's limit ends it at NOW + 400 (it will end sooner: the plan cannot know); b/wait
    needs both nodes, so the plan starts it then, as one point."""
    run_gang, run_pods = running("a/run", 2, cpu=4, started=NOW - 100, duration=500.0)
    wait_gang, wait_pods = waiting("b/wait", 2, cpu=4, duration=300.0, created=NOW - 10)
    plan = limits_plan(
        snapshot(nodes(2, cpu=4), run_pods + wait_pods, (run_gang, wait_gang)), NOW, EngineConfig()
    )
    f = plan["b/wait"]
    assert f.start_p10 == f.start_p50 == f.start_p90 == NOW + 400.0
    assert len(plan.runs) == 1


# R holds the whole node for 5,000 s; W, submitted at 10, needs it all: it waits 4,990 s, and is
# forecast at its submission and again an hour later.
WAITS = trace_text("R,0,1,1,5000,1,1Gi,4,0,", "W,10,1,1,100,1,1Gi,4,0,")


@pytest.mark.parametrize("window", ["0", "600"])
def test_simulate_forecasts_end_to_end(tmp_path, capsys, window):
    trace = tmp_path / "jobs.csv"
    trace.write_text(WAITS)
    out = tmp_path / "out"
    call_command(
        "simulate",
        "--trace", str(trace),
        "--cluster", ONE_NODE,
        "--policy", "gangsched",
        "--policy", "pod",
        "--out", str(out),
        "--processes", "1",
        "--forecasts",
        "--arrival-window", window,
    )  # fmt: skip
    results = json.loads((out / "results.json").read_text())
    assert "forecasts" not in results["policies"]["pod"]  # gangsched's own forecasts only
    figures = results["policies"]["gangsched"]["forecasts"]
    assert figures["arrival_window_s"] == float(window)
    assert figures["forecasts"] == 2  # W at its submission (R started at once) and an hour later
    ours = figures["gangsched"]
    assert ours["at_submission"]["count"] == 1 and ours["all"]["count"] == 2
    # R is declared (oracle): W's forecast is R's end, within the runs' 10% batching.
    assert ours["at_submission"]["median_abs_error"] < 0.11
    assert ours["at_submission"]["coverage"] == 1.0
    assert ours["at_submission"]["by_size"]["2-8"]["count"] == 1
    base = figures["baseline"]["at_submission"]
    limit = limits(parse_trace(WAITS, "hand"))[0]  # R's limit: W's start in the plan
    assert base["median_abs_error"] == pytest.approx((limit - 5000.0) / 4990.0, abs=1e-4)
    assert base["started_by_p50"] == 1.0
    assert not math.isnan(base["median_signed_error"])
    assert "forecasts of gangsched: 2 calls, 2 forecasts" in capsys.readouterr().out
