"""A cycle that explains nothing (``EngineConfig(explain=False)``) decides what one that
explains does (hypothesis).

A forecast's cycles after its first are read for their decisions only, so they skip the
explanations of units that fail, and the test of whether a unit is only behind the head. Every
cycle of random scenarios (also with queues and with topology) runs both ways, each with a carry
of its own kept across the cycles (its requeue book parks units by what they failed for), and
the binds, reservations, releases, evictions and transitions must be the same.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given

from scheduler_core.engine import Carry, EngineConfig, apply_result, run_cycle
from scheduler_core.engine.decisions import Reason

from .cycles import advance, short_behind_the_head
from .queues.test_queue_properties import queued
from .strategies import SETTINGS, Scenario, scenarios
from .topology.tstrategies import topology_scenarios


def both_ways(scenario: Scenario, cycles: int = 4) -> None:
    quiet = dataclasses.replace(scenario.config, explain=False)
    told, untold = Carry(), Carry()
    snapshot, now = scenario.snapshot, scenario.now
    for _ in range(cycles):
        said = run_cycle(snapshot, now, scenario.config, told)
        unsaid = run_cycle(snapshot, now, quiet, untold)
        assert (unsaid.binds, unsaid.reservations, unsaid.releases, unsaid.evictions, unsaid.transitions) == (
            said.binds,
            said.reservations,
            said.releases,
            said.evictions,
            said.transitions,
        )
        snapshot = advance(apply_result(snapshot, said, now), now + 37.0)
        now += 37.0


@SETTINGS
@given(scenarios())
def test_a_quiet_cycle_decides_as_one_that_explains(scenario: Scenario) -> None:
    both_ways(scenario)


@SETTINGS
@given(queued())
def test_a_quiet_cycle_decides_the_same_with_queues(scenario: Scenario) -> None:
    both_ways(scenario)


@SETTINGS
@given(topology_scenarios())
def test_a_quiet_cycle_decides_the_same_with_topology(scenario: Scenario) -> None:
    both_ways(scenario)


def test_a_quiet_cycle_leaves_a_unit_short_of_room_untold() -> None:
    """The head of the queue needs both nodes whole; a gang behind it is short of room. Told,
    it gets an explanation of room; quiet, the same cycle gives it none (and decides the same)."""
    snapshot = short_behind_the_head()
    told = run_cycle(snapshot, 100.0, EngineConfig())
    quiet = run_cycle(snapshot, 100.0, EngineConfig(explain=False))
    assert told.explanations["ml/behind"].reason == Reason.INSUFFICIENT_RESOURCES
    assert "ml/behind" not in quiet.explanations
    assert (quiet.binds, quiet.reservations, quiet.transitions) == (
        told.binds,
        told.reservations,
        told.transitions,
    )
