"""Preemption's candidates kept from cycle to cycle are the candidates found afresh.

With a carry, the candidate list is the victim book's, brought up to date: only the gangs it was
told changed are looked at again (``actions/kept_victims.py``). Here random clusters change
from cycle to cycle in the ways that must reach the book (running pods end or start again,
preemptors arrive and take victims, gangs start, are respecified with another priority or gain
a member of another priority, gang groups are formed), some cycles list candidates and others
not, so that changes pile up between two lists, and some cycles' decisions are lost (the next
snapshot holds the gangs a cycle wrote as they were). Every list built with the carry must be
the list ``victims.py`` builds afresh, victim for victim, and every cycle must decide with the
carry what it decides without.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.engine import (
    Carry,
    EngineConfig,
    Gang,
    GangGroup,
    Pod,
    Snapshot,
    apply_result,
    run_cycle,
)
from scheduler_core.engine.actions import victims
from scheduler_core.engine.session import Session

from .cycles import advance, decisions
from .strategies import SETTINGS, Scenario, scenarios
from .test_victim_book import cluster

GI = 2**30
CHANGES = ("none", "end", "preemptor", "restart", "respecify", "join", "group")


def described(session: Session, found: list) -> list[tuple]:
    """What a candidate list says, victim by victim, that decisions could depend on."""
    return [
        (
            victim.key,
            victim.priority,
            [pod.key for pod in victim.pods],
            victim.gangs,
            victim.nodes.tolist(),
            victim.rows.tolist(),
            victim.started,
            victim.created,
            victim.elastic_of,
            victim.whole.key if victim.whole is not None else None,
            victim.evicted,
        )
        for victim in found
    ]


def change(data: st.DataObject, snapshot: Snapshot, index: int) -> Snapshot:
    """One drawn change to the snapshot, as the cluster or the submitters would make it."""
    kind = data.draw(st.sampled_from(CHANGES))
    pods, gangs, groups = list(snapshot.pods), list(snapshot.gangs), list(snapshot.gang_groups)
    running = [i for i, pod in enumerate(pods) if pod.node is not None]
    if kind == "end" and running:  # running pods end (their gangs run with fewer, or not at all)
        ending = set(data.draw(st.lists(st.sampled_from(running), max_size=3)))
        pods = [pod for i, pod in enumerate(pods) if i not in ending]
    elif kind == "preemptor":  # a gang above (or among) the running ones arrives
        priority = data.draw(st.sampled_from((1, 5, 10, 50)))
        gang = Gang("late", f"p{index}", min_member=2, priority=priority, created=500.0 + index)
        gangs.append(gang)
        pods += [
            Pod("late", f"p{index}-{j}", {"cpu": 2000, "memory": GI}, priority, 500.0 + index, gang.key)
            for j in range(2)
        ]
    elif kind == "restart" and running:  # a member started again: a new object, a later start
        at = data.draw(st.sampled_from(running))
        pods[at] = dataclasses.replace(pods[at], started=(pods[at].started or 0.0) + 1.0)
    elif kind == "respecify" and gangs:  # a new Gang object: another priority, or minimum
        at = data.draw(st.sampled_from(some_gangs(data, gangs)))
        priority = data.draw(st.sampled_from((None, 0, 7, 20)))
        least = max(1, gangs[at].min_member + data.draw(st.integers(-1, 1)))
        gangs[at] = dataclasses.replace(gangs[at], priority=priority, min_member=least)
    elif kind == "join" and gangs:  # a pending member of another priority: its pods' priority moves
        gang = gangs[data.draw(st.sampled_from(some_gangs(data, gangs)))]
        priority = data.draw(st.sampled_from((0, 3, 30)))
        pods.append(Pod(gang.namespace, f"j{index}", {"cpu": 500}, priority, 600.0, gang.key))
    elif kind == "group":  # two gangs of no group become one (their Gang objects change too)
        free = [i for i, gang in enumerate(gangs) if gang.group is None]
        if len(free) >= 2:
            first, second = data.draw(st.permutations(free))[:2]
            key = f"{gangs[first].namespace}/together-{index}"
            groups.append(GangGroup(key, (gangs[first].key, gangs[second].key)))
            for at in (first, second):
                gangs[at] = dataclasses.replace(gangs[at], group=key)
    return dataclasses.replace(snapshot, pods=tuple(pods), gangs=tuple(gangs), gang_groups=tuple(groups))


def some_gangs(data: st.DataObject, gangs: list[Gang]) -> list[int]:
    """The gangs to draw one from: often those of a group (a change to a member that does not
    run changes its group's victims too)."""
    grouped = [i for i, gang in enumerate(gangs) if gang.group is not None]
    return grouped if grouped and data.draw(st.booleans()) else list(range(len(gangs)))


def run_lists(data: st.DataObject, scenario: Scenario, cycles: int) -> Carry:
    snapshot, now, config = scenario.snapshot, scenario.now, scenario.config
    carry = Carry()
    for index in range(cycles):
        snapshot = change(data, snapshot, index)
        if data.draw(st.booleans()):  # the list of a preemptor of a drawn priority, both ways
            below = data.draw(st.sampled_from((1, 6, 21, 100)))
            kept = Session(snapshot, now, config, carry)
            fresh = Session(snapshot, now, config)
            assert described(kept, victims.candidates(kept, below).victims) == described(
                fresh, victims.candidates(fresh, below).victims
            ), f"cycle {index}: the lists differ"
        expected = run_cycle(snapshot, now, config)
        got = run_cycle(snapshot, now, config, carry)
        assert decisions(got) == decisions(expected), f"cycle {index} differs"
        if data.draw(st.booleans()):  # else its decisions are lost: the gangs it wrote stay as they were
            snapshot = advance(apply_result(snapshot, expected, now), now + 37.0)
        now += 37.0
    return carry


@SETTINGS
@given(scenarios(), st.data())
def test_kept_candidates_are_those_found_afresh(scenario: Scenario, data: st.DataObject) -> None:
    run_lists(data, scenario, 6)


def test_unchanged_gangs_are_kept() -> None:
    """A cluster that does not change between two lists keeps every entry."""
    snapshot = cluster()
    carry = Carry()
    for now in (0.0, 1.0):
        session = Session(snapshot, now, EngineConfig(), carry)
        assert [victim.key for victim in victims.candidates(session, 10).victims] == [
            f"low/g{i}" for i in (3, 2, 1, 0)
        ]
    assert (carry.victim_book.found, carry.victim_book.used) == (4, 4)


def test_a_gang_the_cycle_rewrote_is_found_again() -> None:
    """A cycle's actions write new Gang objects (preemption, a start, a timeout); when its
    decisions are lost, the next snapshot has the old object again, and the victims of that
    gang name the gang of the snapshot, not the object the lost cycle wrote."""
    one = cluster()
    gang = dataclasses.replace(one.gangs[0], min_member=1)  # one elastic member above its minimum
    snapshot = dataclasses.replace(one, gangs=(gang,) + one.gangs[1:])
    carry = Carry()
    session = Session(snapshot, 0.0, EngineConfig(), carry)
    session.gangs[gang.key] = dataclasses.replace(gang, satisfied=False)  # as preemption writes it
    assert any(
        victim.elastic_of is session.gangs[gang.key] for victim in victims.candidates(session, 10).victims
    )
    again = Session(snapshot, 1.0, EngineConfig(), carry)
    elastic = [victim for victim in victims.candidates(again, 10).victims if victim.elastic_of is not None]
    assert elastic and all(victim.elastic_of is gang for victim in elastic)


def test_a_group_whose_idle_gang_rose_is_found_again() -> None:
    """A gang group runs one of its two gangs; the other, not running, gains a pending member of
    priority 20: the group's priority is 20, and a priority-10 preemptor may no longer take it,
    though none of its running pods changed."""
    one = cluster()
    grouped = dataclasses.replace(one.gangs[0], group="low/both")
    idle = Gang("low", "idle", min_member=1, group="low/both")
    snapshot = dataclasses.replace(
        one,
        gangs=(grouped, *one.gangs[1:], idle),
        gang_groups=(GangGroup("low/both", (grouped.key, idle.key)),),
    )
    carry = Carry()
    first = victims.candidates(Session(snapshot, 0.0, EngineConfig(), carry), 10).victims
    assert {victim.key for victim in first} == {"low/both", "low/g1", "low/g2", "low/g3"}
    late = Pod("low", "idle-0", {"cpu": 1000}, gang=idle.key, priority=20)
    later = dataclasses.replace(snapshot, pods=snapshot.pods + (late,))
    found = victims.candidates(Session(later, 1.0, EngineConfig(), carry), 10).victims
    assert {victim.key for victim in found} == {"low/g1", "low/g2", "low/g3"}
