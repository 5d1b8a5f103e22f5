"""The count preemption uses to skip trial placements (``actions/fit_bound.py``) never says
"no room" where a trial would find room, on random busy clusters (hypothesis), so that the
searches it shortens choose what they chose without it."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.engine.actions.fit_bound import Bound
from scheduler_core.engine.actions.victims import candidates, shift_all
from scheduler_core.engine.gang import fits
from scheduler_core.engine.session import Session

from .strategies import SETTINGS, Scenario
from .test_preemption_properties import busy_clusters


def _opened(scenario: Scenario):
    session = Session(scenario.snapshot, scenario.now, scenario.config)
    session.build_queue()
    unit = next(unit for unit in session.units if unit.key == "team-b/urgent")
    victims = candidates(session, unit.priority).select(session, unit.priority, tuple(unit.gangs))
    return session, unit, victims


def _fits_after(session: Session, unit, victims) -> bool:
    shift_all(session.state, victims, -1)
    try:
        return fits(session, unit)
    finally:
        shift_all(session.state, victims, +1)


@SETTINGS
@given(busy_clusters())
def test_no_prefix_shorter_than_the_counted_one_fits(scenario: Scenario) -> None:
    session, unit, victims = _opened(scenario)
    if not victims or fits(session, unit):  # only a unit with no room preempts
        return
    before = session.state.used.copy()
    low = Bound(session, unit).shortest(victims)
    assert np.array_equal(session.state.used, before), "counting changed the state"
    shorter = len(victims) + 1 if low is None else low
    for count in range(1, shorter):
        assert not _fits_after(session, unit, victims[:count]), f"{count} victims fit, counted {low}"


@SETTINGS
@given(busy_clusters())
def test_a_victim_counted_as_needed_is_needed(scenario: Scenario) -> None:
    session, unit, victims = _opened(scenario)
    if not victims:
        return
    shift_all(session.state, victims, -1)
    bound = Bound(session, unit)
    bound.count()
    maybe = bound.holds(bound.losses(victims))
    for victim, counted in zip(victims, maybe, strict=True):
        if counted:
            continue
        victim.restore(session.state)
        assert not fits(session, unit), f"{victim.key} was counted as needed but is not"
        victim.free(session.state)


@SETTINGS
@given(busy_clusters(), st.data())
def test_where_the_count_is_the_answer_it_is_the_answer(scenario: Scenario, data) -> None:
    """``Bound.exact``: one gang of one shape, no topology, no minResources: fits iff counted."""
    session, unit, victims = _opened(scenario)
    bound = Bound(session, unit)
    if not bound.exact or not victims:
        return
    gone = data.draw(st.lists(st.sampled_from(victims), unique_by=id, max_size=len(victims)))
    shift_all(session.state, gone, -1)
    bound.count()
    assert bound.holds() == fits(session, unit)
    for victim in gone[:4]:  # and each given back, as the give-back loop keeps the count
        lost = bound.losses([victim])
        victim.restore(session.state)
        bound.totals -= lost[:, 0]
        assert bound.holds() == fits(session, unit)
