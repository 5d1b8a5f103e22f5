"""Leaving out of a forward cycle the units that cannot fit (``window.py``) and skipping the
cycles where nothing fits (``room.py``) change no start: the same forecast with every unit shown."""

from __future__ import annotations

from scheduler_core.forecast import forecast, future, window
from tests.engine.world import NOW

from .cases import busy


def test_the_window_and_the_skipped_cycles_change_no_start(monkeypatch):
    snap = busy()
    shown = forecast(snap, NOW, resolution=0.0)
    monkeypatch.setattr(window.Window, "shown", lambda self, *args: None)
    monkeypatch.setattr("scheduler_core.forecast.room.Room.may_start", lambda self, *args, **kw: True)
    everything = forecast(snap, NOW, resolution=0.0)
    assert {k: (f.start_p10, f.start_p50, f.start_p90) for k, f in shown.gangs.items()} == {
        k: (f.start_p10, f.start_p50, f.start_p90) for k, f in everything.gangs.items()
    }
    assert any(f.start_p50 > NOW for f in shown.gangs.values())


def test_cycles_that_explain_nothing_change_no_start(monkeypatch):
    """The cycles after the first explain nothing (``Future.quiet``): the same forecast as with
    every cycle explaining."""
    snap = busy()
    quiet = forecast(snap, NOW, resolution=0.0)
    real = future.Future.__init__

    def explaining(self, *args, **kwargs):
        real(self, *args, **kwargs)
        self.quiet = self.config

    monkeypatch.setattr(future.Future, "__init__", explaining)
    told = forecast(snap, NOW, resolution=0.0)
    assert {k: (f.start_p10, f.start_p50, f.start_p90, f.waiting_for) for k, f in quiet.gangs.items()} == {
        k: (f.start_p10, f.start_p50, f.start_p90, f.waiting_for) for k, f in told.gangs.items()
    }
    assert any(f.start_p50 > NOW for f in quiet.gangs.values())
