"""Runs whose pasts are the same share their cycles (``history.py``): the forecast is the same
as with every run running all of its own cycles, and it is the same every time."""

from __future__ import annotations

from scheduler_core.forecast import Spread, forecast, history
from tests.engine.world import NOW, nodes, snapshot

from .cases import busy, running, waiting

#: Every gang but r/run1 and r/run2 ends at its estimate in every run (a source with no
#: spread): the runs are the same until one of those two ends, then part.
SOURCES = {
    **{f"w/g{i}": "exact" for i in range(6)},
    **{"r/run3": "exact", "r/run0": "exact", "r/run1": "default", "r/run2": "learned"},
}
EXACT = {"exact": Spread(median=1.0, sigma=0.0)}


def _starts(out):
    return {k: (f.start_p10, f.start_p50, f.start_p90, f.status) for k, f in out.gangs.items()}


def test_shared_cycles_change_no_start(monkeypatch):
    shared = []
    real_result = history.History.result

    def counted(self, number):
        found = real_result(self, number)
        shared.append(found is not None and found is not history.SKIPPED)
        return found

    for sources in (SOURCES, dict.fromkeys(SOURCES, "exact")):
        shared.clear()
        monkeypatch.setattr(history.History, "result", counted)
        with_sharing = forecast(busy(), NOW, sources=sources, spreads=EXACT, resolution=0.0)
        assert any(shared), "no run took another's cycle: the test shows nothing"
        monkeypatch.setattr(history.History, "result", lambda self, number: None)
        alone = forecast(busy(), NOW, sources=sources, spreads=EXACT, resolution=0.0)
        assert _starts(with_sharing) == _starts(alone)
        assert with_sharing.runs == alone.runs
    assert len({f.start_p50 for f in with_sharing.gangs.values()}) > 2


def test_runs_at_the_same_time_with_different_pods_gone_do_not_share(monkeypatch):
    """a/exact ends at +100 in every run. b/vague ends at about +95 in the run at the 10th
    percentile (so that run's next cycle takes both ends together, at +100, the last of them)
    and long after in the others: every run has a cycle at +100, with b gone in one only.
    e/second starts then in that run, not in the others."""
    a_gang, a_pods = running("a/exact", 2, cpu=4, started=NOW - 300, duration=400.0)
    b_gang, b_pods = running("b/vague", 2, cpu=4, started=NOW - 10, duration=378.0, first=2)
    d_gang, d_pods = waiting("d/first", 2, cpu=4, duration=1000.0, created=NOW - 20)
    e_gang, e_pods = waiting("e/second", 2, cpu=4, duration=1000.0, created=NOW - 10)
    snap = snapshot(nodes(4, cpu=4), a_pods + b_pods + d_pods + e_pods, (a_gang, b_gang, d_gang, e_gang))
    sources = {"a/exact": "exact", "b/vague": "default", "d/first": "exact", "e/second": "exact"}
    out = forecast(snap, NOW, sources=sources, spreads=EXACT)
    assert out["d/first"].start_p50 == out["e/second"].start_p10 == NOW + 100.0
    assert out["e/second"].start_p50 > NOW + 100.0
    monkeypatch.setattr(history.History, "result", lambda self, number: None)
    assert _starts(forecast(snap, NOW, sources=sources, spreads=EXACT)) == _starts(out)


def test_the_forecast_is_the_same_every_time():
    snap = busy()
    first = forecast(snap, NOW, sources={"r/run0": "learned", "r/run2": "limit"})
    for _ in range(3):
        assert forecast(snap, NOW, sources={"r/run0": "learned", "r/run2": "limit"}) == first
