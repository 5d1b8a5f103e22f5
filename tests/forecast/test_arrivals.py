"""The arrival model (``forecast/arrivals.py``): gangs submitted later pass a waiting gang in the
forecast as they would in the queue; gangs that cannot pass it change nothing; no copy is ever
reported."""

from __future__ import annotations

import pytest

from scheduler_core.engine import EngineConfig
from scheduler_core.forecast import Arrivals, Submission, forecast
from scheduler_core.forecast.arrivals import ARRIVAL_NAMESPACE, plan
from tests.engine.world import NOW, nodes, snapshot

from .cases import running, waiting

SOURCES = {"a/run": "declared", "b/big": "declared"}


def _cluster():
    """Two 4-CPU nodes full with a/run until NOW + 300; b/big (both nodes, 2,000 s: far more work
    than the overtaking limit) waits."""
    run_gang, run_pods = running("a/run", 2, cpu=4, started=NOW - 100, duration=400.0)
    big_gang, big_pods = waiting("b/big", 2, cpu=4, duration=2000.0, created=NOW - 10)
    return snapshot(nodes(2, cpu=4), run_pods + big_pods, (run_gang, big_gang))


def _small(count: int = 6, window: float = 600.0, **fields) -> Arrivals:
    """One-node gangs of 100 s submitted over the last ``window`` seconds: a steady stream."""
    step = window / count
    subs = [
        Submission(at=NOW - window + step * (i + 1), min_member=1, requests={"cpu": 4000}, duration=100.0,
                   source="declared", **fields)
        for i in range(count)
    ]  # fmt: skip
    return Arrivals(subs, window_s=window)


def _plan(arrivals: Arrivals, config: EngineConfig | None = None):
    return plan(
        arrivals, _cluster(), NOW, config or EngineConfig(), horizon=NOW + 86400, tick=1.0, resolution=0.1
    )


def test_arrivals_that_pass_it_make_a_waiting_gang_start_later():
    without = forecast(_cluster(), NOW, sources=SOURCES)["b/big"]
    with_them = forecast(_cluster(), NOW, sources=SOURCES, arrivals=_small())["b/big"]
    assert without.start_p50 == pytest.approx(NOW + 300.0, abs=31.0)  # when a/run ends
    # The copies come every 100 s from NOW + 100, each holding a node for 100 s: the two nodes
    # are never free together while they come (the last at NOW + 600).
    assert with_them.start_p50 >= NOW + 600.0
    assert with_them.start_p50 > without.start_p50
    assert with_them.start_p90 >= with_them.start_p50 >= with_them.start_p10


def test_arrivals_that_cannot_pass_it_change_nothing():
    fifo = EngineConfig(overtake_limit_s=0)  # within a priority, no one passes an older gang
    without = forecast(_cluster(), NOW, fifo, sources=SOURCES)["b/big"]
    with_them = forecast(_cluster(), NOW, fifo, sources=SOURCES, arrivals=_small())["b/big"]
    assert _plan(_small(), fifo).events == []
    assert (with_them.start_p10, with_them.start_p50, with_them.start_p90) == (
        without.start_p10,
        without.start_p50,
        without.start_p90,
    )
    # The same with least work first, for copies of a lower priority than the waiting gang.
    lower = _small(priority=-1)
    assert _plan(lower).events == []


def test_a_higher_priority_passes_even_a_fifo_queue():
    fifo = EngineConfig(overtake_limit_s=0)
    without = forecast(_cluster(), NOW, fifo, sources=SOURCES)["b/big"]
    urgent = forecast(_cluster(), NOW, fifo, sources=SOURCES, arrivals=_small(priority=10))["b/big"]
    assert urgent.start_p50 > without.start_p50


def test_no_copy_appears_in_the_results_and_the_window_bounds_the_copies():
    result = forecast(_cluster(), NOW, sources=SOURCES, arrivals=_small())
    assert set(result.gangs) == {"b/big"}
    assert not any(key.startswith(ARRIVAL_NAMESPACE) for key in result.gangs)
    planned = _plan(_small())
    assert len(planned.events) == 6  # one window ahead, each submission once
    assert all(NOW < when <= NOW + 600 + 60 for when, _gang, _pods in planned.events)
    old = Arrivals([Submission(at=NOW - 700, min_member=1, requests={"cpu": 4000}, duration=100.0)], 600)
    assert _plan(old).events == []


def test_a_window_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        Arrivals([], window_s=0)
