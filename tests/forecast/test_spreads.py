"""Runtime spreads per estimate source: quantiles, the running pod's condition, the limit's cap."""

from __future__ import annotations

import pytest

from scheduler_core.forecast import DEFAULT_SPREADS, Spread


def test_quantiles_are_ordered_and_the_median_is_the_median():
    spread = Spread(median=1.0, sigma=0.55)
    assert spread.factor(0.5) == pytest.approx(1.0)
    assert spread.factor(0.1) < 1.0 < spread.factor(0.9)
    assert spread.factor(0.9) == pytest.approx(2.02, abs=0.01)  # learned: within x2 at p10-p90


def test_a_limit_never_runs_past_itself():
    limit = DEFAULT_SPREADS["limit"]
    assert limit.runtime(900.0, 0.99) == pytest.approx(900.0)
    assert limit.runtime(900.0, 0.5) == pytest.approx(300.0)


def test_a_running_pod_ends_after_what_it_has_already_run():
    spread = DEFAULT_SPREADS["default"]
    for quantile in (0.01, 0.1, 0.5, 0.9):
        assert spread.runtime(600.0, quantile, elapsed=500.0) > 500.0
    assert spread.runtime(600.0, 0.5, elapsed=500.0) > spread.runtime(600.0, 0.5)
    assert spread.runtime(600.0, 0.1, elapsed=500.0) < spread.runtime(600.0, 0.9, elapsed=500.0)


def test_an_impossible_spread_is_refused():
    with pytest.raises(ValueError):
        Spread(median=0.0)
