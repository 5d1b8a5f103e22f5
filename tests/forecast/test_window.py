"""Leaving out of a forward cycle the units that cannot fit (``window.py``) and skipping the
cycles where nothing fits (``room.py``) change no start: the same forecast with every unit shown."""

from __future__ import annotations

from scheduler_core.forecast import book, forecast, future, window
from scheduler_core.forecast.room import Room
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


def test_the_kept_shapes_of_waiting_gangs_change_no_start(monkeypatch):
    """A run keeps each waiting gang's shapes until its waiting pods change (``Book.grouped``):
    the same forecast as working them out at every look."""
    snap = busy()
    kept = forecast(snap, NOW, resolution=0.0)
    monkeypatch.setattr(
        book.Book,
        "grouped",
        lambda self, buckets, room: room.groups(p for b in buckets for p in self.waiting.get(b, {}).values()),
    )
    fresh = forecast(snap, NOW, resolution=0.0)
    assert {k: (f.start_p10, f.start_p50, f.start_p90) for k, f in kept.gangs.items()} == {
        k: (f.start_p10, f.start_p50, f.start_p90) for k, f in fresh.gangs.items()
    }
    assert any(f.start_p50 > NOW for f in kept.gangs.values())


def test_a_gang_s_kept_shapes_follow_its_waiting_pods():
    """Worked out once while the gang's waiting pods stay; again when one of them binds."""
    snap = busy()
    kept = book.Book(snap)
    room = Room(snap.nodes, snap.pods)
    gang = next(key for key, pods in kept.waiting.items() if key is not None and len(pods) > 1)
    first = kept.grouped((gang,), room)
    assert kept.grouped((gang,), room) is first
    assert sum(count for _shape, count in first) == len(kept.waiting[gang])
    pod = next(iter(kept.waiting[gang].values()))
    kept.drop([pod.key], [])
    again = kept.grouped((gang,), room)
    assert sum(count for _shape, count in again) == sum(count for _shape, count in first) - 1
