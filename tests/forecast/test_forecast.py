"""The forecast of pending gangs' starts: times, intervals, limits, determinism, the dry run."""

from __future__ import annotations

import dataclasses

import pytest

from scheduler_core.engine import EngineConfig
from scheduler_core.forecast import EXPECTED, LATER, NONE, forecast, forecast_with
from tests.engine.world import NOW, nodes, snapshot

from .cases import behind_one, running, waiting

DECLARED = {"a/run": "declared", "b/wait": "declared"}


def test_a_gang_behind_a_running_gang_starts_about_when_it_ends():
    f = forecast(behind_one(ends_in=300.0), NOW, sources=DECLARED)["b/wait"]
    assert f.status == EXPECTED
    # Ends are handled in batches of 10% of the time ahead (RESOLUTION): at most 30 s late here.
    assert NOW + 300.0 <= f.start_p50 <= NOW + 300.0 * 1.1 + 2.0
    exact = forecast(behind_one(ends_in=300.0), NOW, sources=DECLARED, resolution=0.0)["b/wait"]
    assert exact.start_p50 == pytest.approx(NOW + 300.0, abs=2.0)
    assert f.start_p10 < f.start_p50 < f.start_p90
    assert f.waiting_for.reason == "InsufficientResources"
    assert "needs 2 x {cpu 4" in f.waiting_for.message


def test_the_interval_widens_with_an_uncertain_source():
    snap = behind_one()
    declared = forecast(snap, NOW, sources=DECLARED)["b/wait"]
    default = forecast(snap, NOW, sources={**DECLARED, "a/run": "default"})["b/wait"]
    assert default.start_p90 - default.start_p10 > declared.start_p90 - declared.start_p10


def test_a_limit_is_expected_to_end_well_before_it_never_after():
    """A limit overstates: the median run ends the pod before its limit, and no run after it."""
    f = forecast(
        behind_one(ends_in=3000.0, duration=3600.0),
        NOW,
        sources={**DECLARED, "a/run": "limit"},
        resolution=0.0,
    )["b/wait"]
    assert f.start_p50 < NOW + 3000.0 - 1000.0
    assert f.start_p90 <= NOW + 3000.0 + 1.0


def test_a_gang_that_fits_now_starts_now_and_waits_for_nothing():
    run_gang, run_pods = running("a/run", 1, cpu=4, started=NOW - 10, duration=100.0)
    wait_gang, wait_pods = waiting("b/fits", 1, cpu=4, duration=50.0, created=NOW - 5)
    f = forecast(snapshot(nodes(2, cpu=4), run_pods + wait_pods, (run_gang, wait_gang)), NOW)["b/fits"]
    assert (f.start_p10, f.start_p50, f.start_p90) == (NOW, NOW, NOW)
    assert f.waiting_for is None


def test_the_second_in_line_waits_for_the_first_to_end():
    """b needs both nodes after a ends (at +300); c, created later, needs them after b's 100 s."""
    snap = behind_one(ends_in=300.0)
    c_gang, c_pods = waiting("c/next", 2, cpu=4, duration=100.0, created=NOW - 5)
    snap = dataclasses.replace(snap, gangs=snap.gangs + (c_gang,), pods=snap.pods + c_pods)
    out = forecast(
        snap,
        NOW,
        sources={**DECLARED, "c/next": "declared"},
        config=EngineConfig(overtake_limit_s=0),
        resolution=0.0,
    )
    assert out["c/next"].start_p50 == pytest.approx(out["b/wait"].start_p50 + 100.0, abs=3.0)
    assert out["c/next"].position_in_cluster == 1
    assert out["c/next"].waiting_for.reason == "InsufficientResources"


def test_behind_pods_without_an_estimate_there_is_no_forecast():
    f = forecast(behind_one(duration=None), NOW, sources=DECLARED)["b/wait"]
    assert f.status == NONE
    assert (f.start_p10, f.start_p50, f.start_p90) == (None, None, None)
    assert "without a runtime estimate" in f.note


def test_a_start_past_the_horizon_is_later_than_the_horizon():
    out = forecast(
        behind_one(ends_in=5 * 3600.0, duration=6 * 3600.0), NOW, sources=DECLARED, horizon_s=3600.0
    )
    f = out["b/wait"]
    assert f.status == LATER
    assert f.start_p50 is None
    assert "later than the horizon" in f.note
    assert out.horizon == NOW + 3600.0
    assert {run.stopped_by for run in out.runs} == {"horizon"}


def test_the_same_input_gives_the_same_forecast():
    snap = behind_one()
    c_gang, c_pods = waiting("c/next", 2, cpu=2, duration=700.0, created=NOW - 5)
    snap = dataclasses.replace(snap, gangs=snap.gangs + (c_gang,), pods=snap.pods + c_pods)
    assert forecast(snap, NOW, sources={"a/run": "learned"}) == forecast(
        snap, NOW, sources={"a/run": "learned"}
    )


def test_the_dry_run_leaves_the_snapshot_as_it_was_and_forecasts_the_extra_gang():
    snap = behind_one(ends_in=300.0)
    before = dataclasses.replace(snap)
    # More work than b/wait's: it is queued behind it (less work would pass it, as it would for real).
    extra_gang, extra_pods = waiting("c/mine", 2, cpu=4, duration=600.0, created=NOW)
    out = forecast_with(
        snap, NOW, gangs=[extra_gang], pods=extra_pods, sources={**DECLARED, "c/mine": "declared"}
    )
    assert snap == before and len(snap.gangs) == 2
    assert out["c/mine"].status == EXPECTED
    assert out["c/mine"].start_p50 >= out["b/wait"].start_p50
    assert out["b/wait"].start_p50 == forecast(snap, NOW, sources=DECLARED)["b/wait"].start_p50


def test_a_dry_run_with_less_work_passes_the_waiting_gang():
    """Least work first: a short gang submitted now is forecast to start before a longer one
    that waits already, and pushes it back."""
    snap = behind_one(ends_in=300.0)
    short_gang, short_pods = waiting("c/short", 2, cpu=4, duration=60.0, created=NOW)
    out = forecast_with(
        snap,
        NOW,
        gangs=[short_gang],
        pods=short_pods,
        sources={**DECLARED, "c/short": "declared"},
        resolution=0.0,
    )
    alone = forecast(snap, NOW, sources=DECLARED, resolution=0.0)["b/wait"]
    assert out["c/short"].position_in_cluster == 0
    assert out["c/short"].start_p50 == pytest.approx(alone.start_p50, abs=1.0)
    assert out["b/wait"].start_p50 == pytest.approx(alone.start_p50 + 60.0, abs=3.0)
