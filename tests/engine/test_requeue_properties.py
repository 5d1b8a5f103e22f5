"""The requeue book decides exactly what trying every unit decides (hypothesis).

A unit parked by the requeue book (``requeue.py``) is not tried: the book claims that trying it
would have bound nothing, reserved nothing and moved no gang, since nothing it waits for happened
since it failed behind the same head. Here random clusters of ``strategies.py`` (also with a
random queue tree, and with racks and topology constraints) live through random streams of
events, with short steps of time so that parked units stay parked: running pods end or start
terminating, nodes are added, relabelled, cordoned and uncordoned, gangs and lone pods arrive,
members join, pending pods are deleted or recreated smaller (a head that needs less leaves more
to backfill). Every cycle runs twice on the same snapshot, once with a carry (and its book) kept
across the cycles and once without, and binds, reservations, releases, evictions and transitions
must be the same, cycle by cycle.

``test_the_streams_park_units_and_wake_them`` checks that the streams reach what is claimed:
units parked, then woken by an event, then bound.
"""

from __future__ import annotations

import dataclasses

from hypothesis import find, given, settings
from hypothesis import strategies as st

from scheduler_core.engine import Carry, EngineConfig, Gang, Node, Pod, Snapshot, apply_result, run_cycle

from .cycles import advance
from .queues.test_queue_properties import queued
from .strategies import GI, GPU, SETTINGS, ZONES, Scenario, configs, request_shapes, scenarios
from .topology.tstrategies import topology_scenarios

#: The requeue book matters behind a head of the queue: EASY backfilling (the default) mostly.
CONFIGS = st.one_of(st.just(EngineConfig()), st.just(EngineConfig(preemption=False)), configs)

#: Steps of time between cycles: mostly shorter than the first backoffs, so units stay parked.
STEPS = st.sampled_from((0.25, 0.25, 0.5, 0.5, 1.0, 3.0, 40.0))

KINDS = (
    "nothing",
    "nothing",
    "nothing",
    "nothing",
    "pod ends",
    "pod ends",
    "pod terminates",
    "node added",
    "node relabelled",
    "node cordoned",
    "node uncordoned",
    "gang arrives",
    "pod arrives",
    "member joins",
    "member joins",
    "pending pod deleted",
    "pending pod shrinks",
)


@dataclasses.dataclass(frozen=True)
class Event:
    kind: str
    step: float
    pick: int  # which pod, node or gang, modulo how many there are
    zone: str
    shape: dict
    size: int


@st.composite
def events(draw) -> Event:
    return Event(
        kind=draw(st.sampled_from(KINDS)),
        step=draw(STEPS),
        pick=draw(st.integers(0, 63)),
        zone=draw(st.sampled_from(ZONES)),
        shape=draw(request_shapes()),
        size=draw(st.integers(1, 4)),
    )


@st.composite
def streams(draw, worlds=None) -> tuple[Scenario, list[Event]]:
    scenario = draw(worlds if worlds is not None else scenarios())
    scenario = dataclasses.replace(scenario, config=draw(CONFIGS))
    if draw(st.booleans()):
        scenario = dataclasses.replace(scenario, snapshot=with_big_gang(scenario.snapshot))
    return scenario, draw(st.lists(events(), min_size=3, max_size=12))


def with_big_gang(snapshot: Snapshot) -> Snapshot:
    """A gang of one 4-CPU member per node, first in the queue (of the first leaf queue, when
    there are queues): it waits for running pods to end, and the units behind it backfill, or
    fail and are parked."""
    leaves = [q.name for q in snapshot.queues if q.name.startswith("q")] or ["default"]
    gang = Gang(
        "team-b", "big", len(snapshot.nodes), priority=3, created=0.0, preemptible=False, queue=leaves[0]
    )
    members = tuple(
        Pod("team-b", f"big-{j}", {"cpu": 4000}, priority=3, gang=gang.key, duration=300.0)
        for j in range(len(snapshot.nodes))
    )
    return dataclasses.replace(snapshot, pods=snapshot.pods + members, gangs=snapshot.gangs + (gang,))


def _nth(items: list, pick: int):
    return items[pick % len(items)] if items else None


def happen(snapshot: Snapshot, event: Event, index: int) -> Snapshot:
    """``event`` on ``snapshot``: only the objects it changes are new (as the service's are)."""
    pods, nodes, gangs = list(snapshot.pods), list(snapshot.nodes), list(snapshot.gangs)
    running = [i for i, pod in enumerate(pods) if pod.node is not None and not pod.terminating]
    kind = event.kind
    if kind == "pod ends" and running:
        del pods[_nth(running, event.pick)]
    elif kind == "pod terminates" and running:
        at = _nth(running, event.pick)
        pods[at] = dataclasses.replace(pods[at], terminating=True)
    elif kind == "node added":
        allocatable = {"cpu": 8000, "memory": 16 * GI}
        labels = {"zone": event.zone}
        if event.size > 2:
            allocatable[GPU] = 4
            labels["gpu-model"] = "h100"
        nodes.append(Node(f"added-{index}", allocatable, labels))
    elif kind == "node relabelled" and nodes:
        at = event.pick % len(nodes)
        labels = {**nodes[at].labels, "zone": event.zone}
        if event.size > 2:
            labels["gpu-model"] = "a100" if labels.get("gpu-model") == "h100" else "h100"
        nodes[at] = dataclasses.replace(nodes[at], labels=labels)
    elif kind in ("node cordoned", "node uncordoned") and nodes:
        at = event.pick % len(nodes)
        nodes[at] = dataclasses.replace(nodes[at], unschedulable=kind == "node cordoned")
    elif kind == "gang arrives":
        gang = Gang("team-a", f"late-{index}", event.size, created=float(index), priority=event.pick % 3)
        gangs.append(gang)
        pods.extend(
            Pod("team-a", f"{gang.name}-{j}", event.shape, gang=gang.key, created=gang.created, duration=60.0)
            for j in range(event.size)
        )
    elif kind == "member joins":
        waiting = [g for g in gangs if not g.satisfied]
        gang = _nth(waiting, event.pick)
        if gang is not None:
            like = next((p for p in pods if p.gang == gang.key), None)
            requests = like.requests if like is not None else event.shape
            pods.append(Pod(gang.namespace, f"{gang.name}-joined-{index}", requests, gang=gang.key))
    elif kind == "pod arrives":  # alone, at any priority: it may preempt before the head
        priority = event.pick % 6
        pods.append(Pod("team-b", f"lone-late-{index}", event.shape, priority=priority, created=float(index)))
    elif kind in ("pending pod deleted", "pending pod shrinks"):
        pending = [i for i, pod in enumerate(pods) if pod.pending]
        if pending:
            at = _nth(pending, event.pick)
            if kind == "pending pod deleted":
                del pods[at]
            else:  # recreated asking for half
                half = {name: amount // 2 for name, amount in pods[at].requests.items()}
                pods[at] = dataclasses.replace(pods[at], requests=half)
    return dataclasses.replace(snapshot, pods=tuple(pods), nodes=tuple(nodes), gangs=tuple(gangs))


def run(scenario: Scenario, stream: list[Event]) -> dict[str, int]:
    """Every cycle with the book and without; assert the same decisions. Returns counts of what
    the book did: units parked, and units bound in the cycle after they were parked."""
    carry = Carry()
    book = carry.requeue
    snapshot, now, config = scenario.snapshot, scenario.now, scenario.config
    seen = {"parked": 0, "bound after parked": 0}
    parked: list = []  # the entries of the units the last cycle parked
    for index, event in enumerate([None, *stream]):
        if event is not None:
            now += event.step
            snapshot = happen(advance(snapshot, now), event, index)
        expected = run_cycle(snapshot, now, config)
        entries = dict(book.entries)
        got = run_cycle(snapshot, now, config, carry)
        for name in ("binds", "reservations", "releases", "evictions", "transitions"):
            assert getattr(got, name) == getattr(expected, name), f"cycle {index}: {name} differ"
        assert got.pods_considered == expected.pods_considered
        assert expected.parked == 0
        bound = {bind.gang or bind.pod for bind in got.binds}
        seen["bound after parked"] += sum(1 for entry in parked if bound.intersection(entry.members))
        parked = [entry for key, entry in book.entries.items() if entries.get(key) is entry]
        assert len(parked) == got.parked
        seen["parked"] += got.parked
        snapshot = apply_result(snapshot, expected, now)
    return seen


@SETTINGS
@given(streams())
def test_the_book_decides_what_trying_every_unit_decides(stream) -> None:
    run(*stream)


@SETTINGS
@given(streams(queued()))
def test_the_book_decides_the_same_with_queues(stream) -> None:
    run(*stream)


@SETTINGS
@given(streams(topology_scenarios()))
def test_the_book_decides_the_same_with_topology(stream) -> None:
    """Racks and blocks, required, preferred and exclusive domains (``topology/tstrategies.py``)."""
    run(*stream)


def test_the_streams_park_units_and_wake_them() -> None:
    """Not vacuous: some stream parks a unit, and an event then lets a parked gang bind."""
    quick = settings(SETTINGS, max_examples=2000, phases=SETTINGS.phases[:3])
    found = find(streams(), lambda stream: run(*stream)["bound after parked"] > 0, settings=quick)
    assert run(*found)["parked"] > 0
