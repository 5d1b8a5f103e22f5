"""Properties of cycles with queues (hypothesis), on the random clusters of ``strategies.py``
given a random queue tree, and on random reclaim scenarios.

1. one ``default`` queue changes no decision: queues cost nothing when they say nothing;
2. no queue ever goes over its max in a cycle (one already over does not grow);
3. the earlier gang promises hold with queues (no over-commit, sane binds, no gang bound
   below min_member, determinism);
4. a queue with demand within its guarantee, whose capacity is held by reclaimable queues
   over their share, reaches its demand within one cycle plus the eviction (apply_result and a
   second cycle);
5. with steady demand, no gang is evicted twice by reclaim over many cycles (no ping-pong).
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict

from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.engine import EngineConfig, Gang, Pod, Queue, Snapshot, run_cycle

from ..cycles import check_binds_sane, fell_back, overcommitted, satisfied_now, trajectory
from ..strategies import SETTINGS, Scenario, scenarios
from ..world import nodes
from .qworld import GPU, cycles, usage

DECISIONS = ("binds", "reservations", "releases", "evictions", "transitions", "explanations")


@st.composite
def trees(draw) -> tuple[Queue, ...]:
    """Up to two inner queues and two to four leaves, with random cpu guarantees and maxes."""
    inner = [Queue(f"p{i}", weight=draw(st.sampled_from((1.0, 2.0)))) for i in range(draw(st.integers(0, 2)))]
    leaves = []
    for i in range(draw(st.integers(2, 4))):
        parent = draw(st.sampled_from([None] + [q.name for q in inner]))
        guarantee = {"cpu": draw(st.sampled_from((0, 1000, 2000, 4000)))}
        top = draw(st.sampled_from((None, 2000, 4000, 8000)))
        maximum = {"cpu": max(top, guarantee["cpu"])} if top is not None else {}
        leaves.append(
            Queue(
                f"q{i}",
                parent,
                guarantee=guarantee,
                max=maximum,
                weight=draw(st.sampled_from((1.0, 3.0))),
                reclaimable=draw(st.booleans()),
                open=draw(st.integers(0, 9)) > 0,
            )
        )
    used = {q.parent for q in leaves}
    return tuple(q for q in inner if q.name in used) + tuple(leaves)


@st.composite
def queued(draw) -> Scenario:
    scenario = draw(scenarios())
    tree = draw(trees())
    names = [q.name for q in tree if q.name.startswith("q")] + ["default"]
    gangs = tuple(dataclasses.replace(g, queue=draw(st.sampled_from(names))) for g in scenario.snapshot.gangs)
    pods = tuple(
        dataclasses.replace(p, queue=draw(st.sampled_from(names))) if p.gang is None else p
        for p in scenario.snapshot.pods
    )
    snapshot = dataclasses.replace(scenario.snapshot, gangs=gangs, pods=pods, queues=tree)
    return Scenario(snapshot, scenario.now, scenario.config)


def queue_usage(snapshot: Snapshot) -> dict[str, Counter]:
    """Per queue (with its subtree), what bound and reserved pods request."""
    parents = {q.name: q.parent for q in snapshot.queues}
    gangs = {g.key: g for g in snapshot.gangs}
    out: dict[str, Counter] = defaultdict(Counter)
    for pod in snapshot.pods:
        if pod.node is None and pod.reserved_node is None:
            continue
        gang = gangs.get(pod.gang) if pod.gang is not None else None
        name = gang.queue if gang is not None else pod.queue
        while name is not None:
            out[name].update(pod.requests)
            name = parents.get(name)
    return out


@SETTINGS
@given(scenarios())
def test_one_default_queue_changes_no_decision(scenario: Scenario) -> None:
    plain = run_cycle(scenario.snapshot, scenario.now, scenario.config)
    queued_world = dataclasses.replace(scenario.snapshot, queues=(Queue("default"),))
    with_queue = run_cycle(queued_world, scenario.now, scenario.config)
    for name in DECISIONS:
        assert getattr(plain, name) == getattr(with_queue, name), f"{name} differ with one default queue"


@SETTINGS
@given(queued())
def test_no_queue_goes_over_its_max(scenario: Scenario) -> None:
    limits = {q.name: q.max for q in scenario.snapshot.queues}
    for before, _result, after, now in trajectory(scenario, cycles=3):
        was, now_used = queue_usage(before), queue_usage(after)
        for name, limit in limits.items():
            for resource, most in limit.items():
                got = now_used[name][resource]
                assert got <= max(most, was[name][resource]), (
                    f"queue {name} over its max at now={now}: {resource} {got} > {most}"
                )


@SETTINGS
@given(queued())
def test_gang_promises_hold_with_queues(scenario: Scenario) -> None:
    for before, result, after, _now in trajectory(scenario, cycles=3):
        assert not overcommitted(after)
        check_binds_sane(before, result)
        bound_gangs = {bind.gang for bind in result.binds}
        for gang in before.gangs:
            if not gang.satisfied and not fell_back(gang, result) and gang.key in bound_gangs:
                assert satisfied_now(result, gang.key), f"{gang.key} bound members without being satisfied"
    first = run_cycle(scenario.snapshot, scenario.now, scenario.config)
    second = run_cycle(scenario.snapshot, scenario.now, scenario.config)
    for name in (*DECISIONS, "queues"):
        assert getattr(first, name) == getattr(second, name)


@st.composite
def reclaim_worlds(draw) -> Snapshot:
    """Two nodes of 4 GPUs filled by reclaimable queue a's one-GPU gangs; b, guaranteed ``g``,
    submits gangs of 1 to 3 GPUs adding up to at most ``g``; a keeps wanting more."""
    g = draw(st.integers(1, 6))
    sizes = []
    while sum(sizes) < g:
        sizes.append(draw(st.integers(1, min(3, g - sum(sizes)))))
    a_running = draw(st.integers(g, 8))
    gangs, pods = [], []
    for i in range(a_running):
        key = f"ns/a{i}"
        gangs.append(
            Gang(
                "ns",
                f"a{i}",
                1,
                queue="a",
                created=float(i),
                satisfied=True,
                priority=draw(st.integers(0, 2)),
            )
        )
        pods.append(Pod("ns", f"a{i}-0", {GPU: 1}, gang=key, node=f"n{i // 4}", started=float(i)))
    for i in range(4):  # a's steady extra demand
        gangs.append(Gang("ns", f"more{i}", 1, queue="a", created=50.0 + i))
        pods.append(Pod("ns", f"more{i}-0", {GPU: 1}, gang=f"ns/more{i}"))
    for i, size in enumerate(sizes):
        gangs.append(Gang("ns", f"b{i}", size, queue="b", created=100.0 + i))
        pods.extend(Pod("ns", f"b{i}-{j}", {GPU: 1}, gang=f"ns/b{i}") for j in range(size))
    queues = (Queue("a", guarantee={GPU: 8 - g}), Queue("b", guarantee={GPU: g}))
    return Snapshot(nodes(2, cpu=64, memory=64, gpu=4), tuple(pods), tuple(gangs), (), queues)


@SETTINGS
@given(reclaim_worlds())
def test_a_queue_reaches_its_guarantee_within_one_cycle_and_the_eviction(world: Snapshot) -> None:
    wanted = sum(p.requests[GPU] for p in world.pods if p.gang.startswith("ns/b"))
    _results, final = cycles(world, 2, config=EngineConfig())
    assert usage(final, "b") == wanted


@SETTINGS
@given(reclaim_worlds())
def test_no_gang_is_evicted_twice_by_reclaim(world: Snapshot) -> None:
    results, _final = cycles(world, 8, config=EngineConfig())
    evicted = Counter(e.gang for r in results for e in r.evictions if e.reason.startswith("reclaimed"))
    assert not evicted or max(evicted.values()) == 1, evicted
