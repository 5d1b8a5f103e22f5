"""Leaving out of a forward cycle the units that cannot fit (``window.py``) and skipping the
cycles where nothing fits (``room.py``) change no start: the same forecast with every unit shown."""

from __future__ import annotations

from scheduler_core.forecast import forecast, window
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
