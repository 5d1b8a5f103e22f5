"""Preemption's candidates kept from cycle to cycle decide what candidates found afresh do.

The victim book (``victim_book.py``) keeps, per running gang, the victims found in an earlier
cycle while the gang and its running pods are the same objects. Each case runs its cycles with
a carry (and its book) and without, and every decision must be the same, while preemptors keep
arriving and the running gangs change in the ways that must make the book find them again: a
member started again (a new object), a gang respecified with a priority of its own, and a gang
whose priority is its pods' gaining a pending member of a higher priority.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given

from scheduler_core.engine import Carry, EngineConfig, Gang, Node, Pod, Snapshot, run_cycle
from scheduler_core.engine.actions import victims
from scheduler_core.engine.session import Session

from .strategies import SETTINGS, Scenario, scenarios
from .test_carry import run_both

GI = 2**30


def cluster() -> Snapshot:
    """Four 8-CPU nodes, each filled by a running gang of priority 0 (two 4-CPU members; the
    gangs have no priority of their own)."""
    nodes = tuple(Node(f"n{i}", {"cpu": 8000, "memory": 32 * GI, "pods": 10}) for i in range(4))
    gangs = tuple(Gang("low", f"g{i}", min_member=2, satisfied=True) for i in range(4))
    pods = tuple(
        Pod("low", f"g{i}-{j}", {"cpu": 4000, "memory": GI}, gang=f"low/g{i}", node=f"n{i}", started=float(i))
        for i in range(4)
        for j in range(2)
    )
    return Snapshot(nodes=nodes, pods=pods, gangs=gangs)


def preemptor(index: int) -> tuple[Gang, tuple[Pod, ...]]:
    """A priority-10 gang of two 4-CPU pods (one node's worth), new in each cycle."""
    gang = Gang("high", f"p{index}", min_member=2, priority=10, created=100.0 + index)
    pods = tuple(
        Pod(
            "high",
            f"p{index}-{j}",
            {"cpu": 4000, "memory": GI},
            gang=gang.key,
            priority=10,
            created=gang.created,
        )
        for j in range(2)
    )
    return gang, pods


def change(snapshot: Snapshot, index: int) -> Snapshot:
    """A preemptor arrives; and one running gang changes, in turn, as the module says."""
    gang, pods = preemptor(index)
    running = [g for g in snapshot.gangs if g.namespace == "low"]
    gangs, all_pods = list(snapshot.gangs), list(snapshot.pods)
    if running and index % 4 == 1:  # a member started again: a new object, a later start
        at = next(i for i, p in enumerate(all_pods) if p.gang == running[0].key and p.node is not None)
        all_pods[at] = dataclasses.replace(all_pods[at], started=50.0 + index)
    elif running and index % 4 == 2:  # a priority of its own, above the preemptors'
        at = gangs.index(running[-1])
        gangs[at] = dataclasses.replace(running[-1], priority=20)
    elif running and index % 4 == 3:  # a pending member of priority 20: its gang's priority is 20
        target = running[0]
        all_pods.append(Pod("low", f"{target.name}-late{index}", {"cpu": 1000}, gang=target.key, priority=20))
    return dataclasses.replace(snapshot, gangs=tuple(gangs) + (gang,), pods=tuple(all_pods) + pods)


def test_running_gangs_that_change_are_found_again() -> None:
    carry = run_both(cluster(), 0.0, EngineConfig(), [change] * 8)
    assert carry.victim_book.used > 0  # unchanged gangs were taken from the book


def test_a_gang_whose_pods_priority_rose_is_no_victim_of_a_lower_preemptor() -> None:
    """Low gang g0 (no priority of its own) gains a pending member of priority 20; its
    running pods are the same objects, but the book finds it again: a priority-10 preemptor
    may no longer take it. The other gangs come from the book."""
    gang, pods = preemptor(0)
    first = dataclasses.replace(cluster(), gangs=cluster().gangs + (gang,))
    first = dataclasses.replace(first, pods=first.pods + pods)
    carry = Carry()
    run_cycle(first, 0.0, EngineConfig(), carry)
    assert {key: entry.priority for key, entry in carry.victim_book.entries.items()} == {
        f"low/g{i}": 0 for i in range(4)
    }
    used = carry.victim_book.used
    late = Pod("low", "g0-late", {"cpu": 1000}, gang="low/g0", priority=20)
    session = Session(dataclasses.replace(first, pods=first.pods + (late,)), 1.0, EngineConfig(), carry)
    taken = {victim.key for victim in victims.candidates(session, 10).victims}
    assert taken == {"low/g1", "low/g2", "low/g3"}
    # g1 and g2 from the book; g0 (a new pod) and g3 (preempted in the first cycle, which wrote
    # it a new Gang object) found again; g0 is no victim now.
    assert carry.victim_book.used == used + 2
    assert carry.victim_book.entries["low/g0"].priority == 20
    # The book's g0 is found with its priority of 20: a preemptor above 20 takes it from the book.
    session = Session(dataclasses.replace(first, pods=first.pods + (late,)), 2.0, EngineConfig(), carry)
    assert {victim.key for victim in victims.candidates(session, 30).victims} == {
        f"low/g{i}" for i in range(4)
    }
    assert carry.victim_book.entries["low/g0"].priority == 20


@SETTINGS
@given(scenarios())
def test_random_scenarios_decide_the_same_with_the_book(scenario: Scenario) -> None:
    """As ``test_carry``'s random scenarios, with a preemptor arriving every cycle."""

    def arriving(snapshot: Snapshot, index: int) -> Snapshot:
        gang, pods = preemptor(index)
        return dataclasses.replace(snapshot, gangs=snapshot.gangs + (gang,), pods=snapshot.pods + pods)

    run_both(scenario.snapshot, scenario.now, scenario.config, [arriving] * 4)


def test_without_a_carry_there_is_no_book() -> None:
    session = Session(cluster(), 0.0, EngineConfig())
    assert session.victim_book is None
    assert len(victims.candidates(session, 10).victims) == 4  # the four low gangs, whole
