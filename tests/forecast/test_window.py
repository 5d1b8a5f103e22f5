"""Leaving out of a forward cycle the units that cannot fit (``window.py``) and skipping the
cycles where nothing fits (``room.py``) change no start: the same forecast with every unit shown."""

from __future__ import annotations

from scheduler_core.forecast import forecast, window
from tests.engine.world import NOW, nodes, snapshot

from .cases import running, waiting


def _busy():
    pods, gangs = [], []
    for i, (ends_in, duration) in enumerate([(50, 400), (120, 200), (300, 900), (40, 100)]):
        gang, members = running(
            f"r/run{i}", 2, cpu=2, started=NOW + ends_in - duration, duration=duration, first=2 * i
        )
        gangs.append(gang)
        pods += members
    shapes = [(2, 4, 300), (1, 2, 60), (4, 1, 500), (3, 3, 100), (1, 4, 1000), (2, 1, 30)]
    for i, (count, cpu, duration) in enumerate(shapes):
        gang, members = waiting(f"w/g{i}", count, cpu=cpu, duration=float(duration), created=NOW - 50 + i)
        gangs.append(gang)
        pods += members
    return snapshot(nodes(8, cpu=4), pods, gangs)


def test_the_window_and_the_skipped_cycles_change_no_start(monkeypatch):
    snap = _busy()
    shown = forecast(snap, NOW, resolution=0.0)
    monkeypatch.setattr(window.Window, "shown", lambda self, *args: None)
    monkeypatch.setattr("scheduler_core.forecast.room.Room.may_start", lambda self, *args, **kw: True)
    everything = forecast(snap, NOW, resolution=0.0)
    assert {k: (f.start_p10, f.start_p50, f.start_p90) for k, f in shown.gangs.items()} == {
        k: (f.start_p10, f.start_p50, f.start_p90) for k, f in everything.gangs.items()
    }
    assert any(f.start_p50 > NOW for f in shown.gangs.values())
