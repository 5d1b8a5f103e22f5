"""The cycle runs with the cyclic garbage collector paused, and leaves it as it found it."""

import gc

import pytest

from scheduler_core.engine import cycle, run_cycle

from .world import NOW, bound_of, gang, members, nodes, snapshot


@pytest.fixture
def seen_during_cycle(monkeypatch):
    """Whether the collector was running, as the cycle's first action saw it."""
    seen: list[bool] = []
    first_name, first_action = cycle.ACTIONS[0]

    def watched(session):
        seen.append(gc.isenabled())
        return first_action(session)

    monkeypatch.setattr(cycle, "ACTIONS", ((first_name, watched), *cycle.ACTIONS[1:]))
    return seen


def _world():
    return snapshot(nodes(2), members("team/train", 4, cpu=2), [gang("team/train", 4)])


def test_the_collector_is_paused_during_a_cycle_and_running_again_after(seen_during_cycle):
    assert gc.isenabled()
    result = run_cycle(_world(), NOW)
    assert seen_during_cycle == [False]
    assert gc.isenabled()
    assert len(bound_of(result, "team/train")) == 4


def test_a_collector_paused_by_the_caller_stays_paused(seen_during_cycle):
    gc.disable()
    try:
        run_cycle(_world(), NOW)
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert seen_during_cycle == [False]


def test_the_collector_runs_again_when_the_cycle_raises(monkeypatch):
    def broken(session):
        raise RuntimeError("an action failed")

    monkeypatch.setattr(cycle, "ACTIONS", (("broken", broken),))
    with pytest.raises(RuntimeError):
        run_cycle(_world(), NOW)
    assert gc.isenabled()
