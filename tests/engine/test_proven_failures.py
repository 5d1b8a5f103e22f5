"""A unit failed by an earlier one behind the head decides and says what its trial would have.

Behind the head of the queue a lone pod or one-shape gang whose request is at least that of a
unit that already failed there, on the same nodes and the same capacity, and that needs more
copies than that unit could place, is failed without a trial (``actions/proven_failures.py``).
Every cycle of random scenarios (``strategies.py``, also with a queue tree and with topology)
runs twice, with that shortcut and with a trial for every unit, and everything the cycle decides
and says must be the same. Counting (``counted.py``), which settles one-shape gangs first on
clusters as small as these, is turned off in both, so that the shortcut meets them.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from scheduler_core.engine import EngineConfig, Gang, Node, Pod, Snapshot, TransitionKind, run_cycle
from scheduler_core.engine.actions import allocate
from scheduler_core.engine.actions.proven_failures import ProvenFailures

from .cycles import both_ways as cycles_both_ways
from .queues.test_queue_properties import queued
from .strategies import SETTINGS, Scenario, scenarios
from .topology.tstrategies import topology_scenarios


def both_ways(scenario: Scenario, monkeypatch: pytest.MonkeyPatch, cycles: int = 4) -> int:
    """Run ``cycles`` cycles with and without the shortcut; the number of units it failed."""
    monkeypatch.setattr(allocate, "counted_failure", lambda *args: None)
    return cycles_both_ways(
        scenario, monkeypatch, ProvenFailures, "settled", lambda self, *args: None, cycles
    )


@SETTINGS
@given(scenarios())
def test_proven_failures_decide_and_explain_as_trials_do(scenario: Scenario) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        both_ways(scenario, monkeypatch)


@SETTINGS
@given(queued())
def test_proven_failures_decide_as_trials_do_with_queues(scenario: Scenario) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        both_ways(scenario, monkeypatch)


@SETTINGS
@given(topology_scenarios())
def test_proven_failures_decide_as_trials_do_with_topology(scenario: Scenario) -> None:
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
    settled, result = settled_keys(scenario, monkeypatch)
    assert settled == ["ml/long-1cpu", "ml/long-2cpu"]
    assert [bind.pod for bind in result.binds] == ["ml/short-2cpu"]
    assert both_ways(scenario, monkeypatch, cycles=1) == 2


def gangs_behind_the_head() -> Snapshot:
    """The same two nodes and head; behind it two gangs of two pods that run past the head's
    start, least work first: of 0.5 CPU each, then of 1 CPU each."""
    base = lone_pods_behind_the_head()
    pods = tuple(pod for pod in base.pods if pod.gang == "ml/head" or pod.node is not None)
    gangs = base.gangs
    for name, cpu, created in (("small", 500, 2.0), ("big", 1000, 3.0)):
        pods += tuple(
            Pod("ml", f"{name}-{i}", {"cpu": cpu}, gang=f"ml/{name}", created=created, duration=3600.0)
            for i in range(2)
        )
        gangs += (Gang("ml", name, min_member=2, created=created),)
    return Snapshot(nodes=base.nodes, pods=pods, gangs=gangs)


def test_a_larger_gang_behind_the_head_fails_without_a_trial(monkeypatch: pytest.MonkeyPatch) -> None:
    """The small gang places no copy within the room the head leaves; the big one, asking more
    of every resource, is failed without a trial and told the same as its trial would tell it."""
    scenario = Scenario(gangs_behind_the_head(), 100.0, EngineConfig())
    assert both_ways(scenario, monkeypatch, cycles=1) == 1
    explanation = run_cycle(scenario.snapshot, scenario.now, scenario.config).explanations["ml/big"]
    assert explanation.details["head"] == "ml/head"


def short_gangs_behind_the_head(*gangs: tuple[str, int, int, int, float | None]) -> Snapshot:
    """The same two nodes and head; behind it gangs that end before the head starts (free to use
    the free room: 2 CPU on each node), each (name, priority, pods, CPU each, wait clock)."""
    base = lone_pods_behind_the_head()
    pods = tuple(pod for pod in base.pods if pod.gang == "ml/head" or pod.node is not None)
    more = []
    for name, priority, count, cpu, clock in gangs:
        pods += tuple(
            Pod("ml", f"{name}-{i}", {"cpu": cpu}, gang=f"ml/{name}", priority=priority, duration=100.0)
            for i in range(count)
        )
        more.append(Gang("ml", name, min_member=count, priority=priority, wait_started=clock))
    return Snapshot(nodes=base.nodes, pods=pods, gangs=base.gangs + tuple(more))


def settled_keys(scenario: Scenario, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], object]:
    """The units one cycle failed without a trial, and the cycle's result (counting off)."""
    monkeypatch.setattr(allocate, "counted_failure", lambda *args: None)
    settled: list[str] = []
    real = ProvenFailures.settled

    def watching(self, session, unit, limit):
        found = real(self, session, unit, limit)
        if found is not None:
            settled.append(unit.key)
        return found

    monkeypatch.setattr(ProvenFailures, "settled", watching)
    result = run_cycle(scenario.snapshot, scenario.now, scenario.config)
    monkeypatch.setattr(ProvenFailures, "settled", real)
    return settled, result


def test_a_failure_proves_nothing_of_a_unit_that_needs_no_more_than_it_placed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three 1.5-CPU pods place two (one per node) and fail; two 1.5-CPU pods after them ask as
    much but need only the two the nodes took: they are tried (their clock runs already, so
    only the count could excuse the trial), and bind."""
    snapshot = short_gangs_behind_the_head(("three", 5, 3, 1500, None), ("two", 4, 2, 1500, 50.0))
    scenario = Scenario(snapshot, 100.0, EngineConfig())
    assert settled_keys(scenario, monkeypatch)[0] == []
    assert both_ways(scenario, monkeypatch, cycles=1) == 0
    binds = run_cycle(scenario.snapshot, scenario.now, scenario.config).binds
    assert sorted(bind.pod for bind in binds) == ["ml/two-0", "ml/two-1"]


def test_a_gang_whose_clock_would_start_is_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the three 1.5-CPU pods failed placing two, a gang of four 2-CPU pods is short too,
    but its trial places two, which starts its wait clock: it is tried. The same gang with its
    clock already running is failed without a trial."""
    snapshot = short_gangs_behind_the_head(
        ("three", 5, 3, 1500, None), ("four", 4, 4, 2000, None), ("four-waiting", 3, 4, 2000, 50.0)
    )
    scenario = Scenario(snapshot, 100.0, EngineConfig())
    assert settled_keys(scenario, monkeypatch)[0] == ["ml/four-waiting"]
    assert both_ways(scenario, monkeypatch, cycles=1) == 1
    result = run_cycle(scenario.snapshot, scenario.now, scenario.config)
    started = [t.gang for t in result.transitions if t.kind == TransitionKind.WAIT_STARTED]
    assert started == ["ml/three", "ml/four"]
