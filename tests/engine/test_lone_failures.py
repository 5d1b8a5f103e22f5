"""A lone pod failed by an earlier one behind the head decides as its trial would (hypothesis).

Behind the head of the queue a lone pod whose request is at least that of a lone pod that
already failed there, on the same nodes and the same capacity, is failed without a trial
(``actions/lone_failures.py``). Every cycle of random scenarios (``strategies.py``, also with a
queue tree and with topology) runs twice, with that shortcut and with a trial for every pod,
and everything the cycle decides and says must be the same.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from scheduler_core.engine import EngineConfig, Gang, Node, Pod, Snapshot, run_cycle
from scheduler_core.engine.actions.lone_failures import LoneFailures

from .cycles import both_ways as cycles_both_ways
from .queues.test_queue_properties import queued
from .strategies import SETTINGS, Scenario, scenarios
from .topology.tstrategies import topology_scenarios


def both_ways(scenario: Scenario, monkeypatch: pytest.MonkeyPatch, cycles: int = 4) -> int:
    """Run ``cycles`` cycles with and without the shortcut; the number of pods it failed."""
    return cycles_both_ways(scenario, monkeypatch, LoneFailures, "settled", lambda self, *args: None, cycles)


@SETTINGS
@given(scenarios())
def test_lone_failures_decide_and_explain_as_trials_do(scenario: Scenario) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        both_ways(scenario, monkeypatch)


@SETTINGS
@given(queued())
def test_lone_failures_decide_as_trials_do_with_queues(scenario: Scenario) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        both_ways(scenario, monkeypatch)


@SETTINGS
@given(topology_scenarios())
def test_lone_failures_decide_as_trials_do_with_topology(scenario: Scenario) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        both_ways(scenario, monkeypatch)


def lone_pods_behind_the_head() -> Snapshot:
    """Two 4-CPU nodes, half full until 600 (at the head's priority: no victims); a head that
    needs both whole; behind it lone pods, least work first: 0.5 CPU past the head's start
    (limited to the room the head leaves: none), 2 CPU ending before it (free to use the free
    room), then past it 1 and 2 CPU and, running long enough to come last, 0.25 CPU."""
    nodes = tuple(Node(f"n{i}", {"cpu": 4000, "pods": 110}) for i in range(2))
    pods = tuple(
        Pod("ml", f"r{i}", {"cpu": 2000}, node=f"n{i}", started=0.0, duration=600.0, priority=10)
        for i in range(2)
    )
    pods += tuple(
        Pod("ml", f"h{i}", {"cpu": 4000}, gang="ml/head", priority=10, created=1.0) for i in range(2)
    )
    pods += (
        Pod("ml", "long-1cpu", {"cpu": 1000}, created=2.0, duration=3600.0),
        Pod("ml", "long-2cpu", {"cpu": 2000}, created=3.0, duration=3600.0),
        Pod("ml", "long-half-cpu", {"cpu": 500}, created=4.0, duration=600.0),
        Pod("ml", "short-2cpu", {"cpu": 2000}, created=5.0, duration=200.0),
        Pod("ml", "longest-quarter-cpu", {"cpu": 250}, created=6.0, duration=100_000.0),
    )
    gangs = (Gang("ml", "head", min_member=2, created=1.0, priority=10),)
    return Snapshot(nodes=nodes, pods=pods, gangs=gangs)


def test_a_larger_lone_pod_behind_the_head_fails_without_a_trial(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the 0.5-CPU pod failed, the 1- and 2-CPU ones are failed without a trial; the
    0.25-CPU one is tried (it asks less); the short one is tried on other capacity, and binds."""
    scenario = Scenario(lone_pods_behind_the_head(), 100.0, EngineConfig())
    settled: list[str] = []
    real = LoneFailures.settled

    def watching(self, session, unit, limit):
        found = real(self, session, unit, limit)
        if found is not None:
            settled.append(unit.pods[0].name)
        return found

    monkeypatch.setattr(LoneFailures, "settled", watching)
    result = run_cycle(scenario.snapshot, scenario.now, scenario.config)
    assert settled == ["long-1cpu", "long-2cpu"]
    assert [bind.pod for bind in result.binds] == ["ml/short-2cpu"]
    monkeypatch.setattr(LoneFailures, "settled", real)
    assert both_ways(scenario, monkeypatch, cycles=1) == 2
