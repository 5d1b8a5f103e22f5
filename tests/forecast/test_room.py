"""The forward runs share one build of the nodes' free room (``Room.copy``): each run changes its
own copy, and the forecast is the one runs that each build their own room give."""

from __future__ import annotations

from scheduler_core.forecast import forecast, future, make
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


def test_forked_runs_forecast_as_runs_built_from_the_snapshot(monkeypatch):
    """The runs after the first are forks of it, made before it runs (``Future.fork``): the same
    forecast as each run built from the snapshot with its own truth."""
    snap = busy()
    forked = forecast(snap, NOW, resolution=0.0)
    built = future.Future.__init__

    def keeping(self, *args, **kwargs):
        built(self, *args, **kwargs)
        self.made_with = (args, kwargs)

    def afresh(self, truth, quantile):
        args, kwargs = self.made_with
        return future.Future(*args[:3], truth, *args[4:], **{**kwargs, "quantile": quantile})

    monkeypatch.setattr(future.Future, "__init__", keeping)
    monkeypatch.setattr(future.Future, "fork", afresh)
    own = forecast(snap, NOW, resolution=0.0)
    assert [(r.cycles, r.end, r.stopped_by) for r in forked.runs] == [
        (r.cycles, r.end, r.stopped_by) for r in own.runs
    ]
    assert {k: (f.start_p10, f.start_p50, f.start_p90) for k, f in forked.gangs.items()} == {
        k: (f.start_p10, f.start_p50, f.start_p90) for k, f in own.gangs.items()
    }
    assert (
        forked.gangs
        and len({f.start_p10 for f in forked.gangs.values()} | {f.start_p90 for f in forked.gangs.values()})
        > 1
    )
