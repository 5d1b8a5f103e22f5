"""A unit failed by counting decides and says what its trial would have (hypothesis).

Behind the head of the queue, on a cluster below ``NARROW_FROM`` nodes, a unit whose count of
copies falls short of its need is failed without a trial (``actions/counted.py``), and its
explanation is worked out only when read (``gang.Deferred``). Every cycle of random scenarios
(``strategies.py``, also with a queue tree and with topology) runs twice, with counting and
with a trial for every unit, and everything the cycle decides and says must be the same: binds,
reservations, releases, evictions, transitions (the wait clocks the placed members start) and
every explanation with its details.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from scheduler_core.engine import EngineConfig, run_cycle
from scheduler_core.engine.actions import allocate

from .cycles import both_ways as cycles_both_ways
from .cycles import short_behind_the_head
from .queues.test_queue_properties import queued
from .strategies import SETTINGS, Scenario, scenarios
from .topology.tstrategies import topology_scenarios


def both_ways(scenario: Scenario, monkeypatch: pytest.MonkeyPatch, cycles: int = 4) -> int:
    """Run ``cycles`` cycles with and without counting; the number of units it failed."""
    return cycles_both_ways(scenario, monkeypatch, allocate, "counted_failure", lambda *args: None, cycles)


@SETTINGS
@given(scenarios())
def test_counting_decides_and_explains_as_trials_do(scenario: Scenario) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        both_ways(scenario, monkeypatch)


@SETTINGS
@given(queued())
def test_counting_decides_as_trials_do_with_queues(scenario: Scenario) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        both_ways(scenario, monkeypatch)


@SETTINGS
@given(topology_scenarios())
def test_counting_decides_as_trials_do_with_topology(scenario: Scenario) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        both_ways(scenario, monkeypatch)


def test_a_unit_short_behind_the_head_is_failed_by_counting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two 4-CPU nodes, half full; a head that needs both nodes whole, and behind it a gang of
    three 2-CPU pods (the nodes take two): counted short, told how many nodes take one."""
    scenario = Scenario(short_behind_the_head(), 100.0, EngineConfig())
    assert both_ways(scenario, monkeypatch, cycles=1) == 1
    explanation = run_cycle(scenario.snapshot, scenario.now, scenario.config).explanations["ml/behind"]
    assert (
        explanation.details["needed"],
        explanation.details["placeable"],
        explanation.details["short_by"],
    ) == (3, 2, 1)
