"""The forward runs share one build of the nodes' free room (``Room.copy``): each run changes its
own copy, and the forecast is the one runs that each build their own room give."""

from __future__ import annotations

from scheduler_core.forecast import forecast, make
from scheduler_core.forecast.room import Room
from tests.engine.world import NOW

from .cases import busy


def test_a_copy_of_the_room_changes_alone():
    snap = busy()
    room = Room(snap.nodes, snap.pods)
    twin = room.copy()
    before = room.used.copy()
    pod = next(pod for pod in snap.pods if pod.node is not None)
    twin.take(pod.requests, pod.node, -1)
    assert (room.used == before).all()
    assert not (twin.used == before).all()
    assert twin.shape(pod) is room.shape(pod)  # what depends on the nodes alone is shared


def test_runs_from_one_room_forecast_as_runs_that_build_their_own(monkeypatch):
    snap = busy()
    shared = forecast(snap, NOW, resolution=0.0)
    monkeypatch.setattr(make, "Room", lambda nodes, pods: None)  # each run builds its own
    own = forecast(snap, NOW, resolution=0.0)
    assert {k: (f.start_p10, f.start_p50, f.start_p90) for k, f in shared.gangs.items()} == {
        k: (f.start_p10, f.start_p50, f.start_p90) for k, f in own.gangs.items()
    }
    assert shared.gangs and any(f.start_p90 is not None and f.start_p90 > NOW for f in shared.gangs.values())
