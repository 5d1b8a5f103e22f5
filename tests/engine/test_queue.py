"""QueueSort: priority, then rank (creation plus bounded work), creation, then a stable key."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.engine import EngineConfig, Snapshot
from scheduler_core.engine.model import Gang
from scheduler_core.engine.queue import build_units, devices, pods_by_gang, work

from .world import gang, group, members, pod, snapshot


def order(world: Snapshot, config: EngineConfig | None = None) -> list[str]:
    gangs = {g.key: g for g in world.gangs}
    units = build_units(world, config or EngineConfig(), gangs, pods_by_gang(world))
    return [unit.key for unit in units]


def test_priority_first_then_creation_then_key():
    world = snapshot(
        pods=(
            *members("ns/old-low", 2, priority=0),
            *members("ns/new-high", 2, priority=5),
            *members("ns/b-same", 1, priority=0),
            *members("ns/a-same", 1, priority=0),
            pod("ns/loner", priority=0, created=15.0),
        ),
        gangs=[
            gang("ns/old-low", 2, created=10.0),
            gang("ns/new-high", 2, created=50.0),
            gang("ns/b-same", 1, created=20.0),
            gang("ns/a-same", 1, created=20.0),
        ],
    )
    assert order(world) == ["ns/new-high", "ns/old-low", "ns/loner", "ns/a-same", "ns/b-same"]


def test_members_of_two_gangs_never_interleave():
    pods = []
    for i in range(3):  # created alternately, as a Job controller racing another would
        pods += members("ns/a", 1, start=i, created=float(2 * i))
        pods += members("ns/b", 1, start=i, created=float(2 * i + 1))
    world = snapshot(pods=pods, gangs=[gang("ns/a", 3, created=1.0), gang("ns/b", 3, created=2.0)])
    assert order(world) == ["ns/a", "ns/b"]


def test_the_gang_priority_is_its_highest_member_unless_declared():
    world = snapshot(
        pods=(*members("ns/a", 1, priority=1), *members("ns/a", 1, start=1, priority=9), *members("ns/b", 1)),
        gangs=[gang("ns/a", 2, created=5.0), gang("ns/b", 1, created=1.0, priority=10)],
    )
    units = build_units(world, EngineConfig(), {g.key: g for g in world.gangs}, pods_by_gang(world))
    assert [(u.key, u.priority) for u in units] == [("ns/b", 10), ("ns/a", 9)]


# Least work first, bounded: rank = created + min(overtake_limit_s, device-seconds).


def test_a_small_short_gang_passes_a_big_long_one_created_before_it():
    world = snapshot(
        pods=(
            *members("ns/big", 8, gpu=1, duration=600.0),  # 4,800 GPU-s: capped at 3,600
            *members("ns/small", 1, gpu=1, duration=60.0),  # 60 GPU-s
            *members("ns/mid", 2, gpu=1, duration=300.0),  # 600 GPU-s
        ),
        gangs=[
            gang("ns/big", 8, created=0.0),
            gang("ns/small", 1, created=100.0),
            gang("ns/mid", 2, created=50.0),
        ],
    )
    assert order(world) == ["ns/small", "ns/mid", "ns/big"]  # ranks 160, 650, 3600
    assert order(world, EngineConfig(overtake_limit_s=0)) == ["ns/big", "ns/mid", "ns/small"]


def test_nothing_created_more_than_the_limit_later_passes():
    world = snapshot(
        pods=(*members("ns/big", 1, gpu=8, duration=1e6), *members("ns/tiny", 1, gpu=1, duration=1.0)),
        gangs=[gang("ns/big", 1, created=0.0), gang("ns/tiny", 1, created=3600.5)],
    )
    assert order(world) == ["ns/big", "ns/tiny"]
    assert order(world, EngineConfig(overtake_limit_s=7200)) == ["ns/tiny", "ns/big"]


def test_priority_still_comes_first():
    world = snapshot(
        pods=(
            *members("ns/long-high", 1, gpu=8, duration=1e5, priority=10),
            *members("ns/short-low", 1, gpu=1, duration=1.0),
        ),
        gangs=[gang("ns/long-high", 1, created=5.0), gang("ns/short-low", 1, created=0.0)],
    )
    assert order(world) == ["ns/long-high", "ns/short-low"]


def test_an_undeclared_duration_counts_as_the_largest_work():
    world = snapshot(
        pods=(
            *members("ns/unknown", 1, gpu=1),  # no duration: rank 0 + 3600
            *members("ns/declared", 1, gpu=1, duration=100.0),  # rank 50 + 100
            *members("ns/huge", 1, gpu=8, duration=1e6),  # rank 1 + 3600: capped, after unknown
            pod("ns/loner", gpu=1, created=2.0),  # a pod without a gang: rank 3602
        ),
        gangs=[
            gang("ns/unknown", 1, created=0.0),
            gang("ns/declared", 1, created=50.0),
            gang("ns/huge", 1, created=1.0),
        ],
    )
    assert order(world) == ["ns/declared", "ns/unknown", "ns/huge", "ns/loner"]


def test_a_gang_group_counts_the_work_of_all_its_gangs():
    world = snapshot(
        pods=(
            *members("a/ps", 1, gpu=1, duration=100.0),
            *members("b/worker", 4, gpu=1, duration=100.0),  # the group: 500 GPU-s
            *members("ns/other", 1, gpu=1, duration=300.0),  # 300 GPU-s
        ),
        gangs=[
            gang("a/ps", 1, created=0.0, group="g"),
            gang("b/worker", 4, created=0.0, group="g"),
            gang("ns/other", 1, created=0.0),
        ],
        groups=[group("g", "a/ps", "b/worker")],
    )
    assert order(world) == ["ns/other", "g"]


@pytest.mark.parametrize(
    ("requests", "expected"),
    [
        ({"cpu": 4000, "nvidia.com/gpu": 2}, 2.0),  # GPUs when it asks for any
        ({"cpu": 4000, "amd.com/gpu": 1}, 1.0),
        ({"cpu": 2500, "memory": 1 << 30}, 2.5),  # else CPU cores
        ({}, 0.0),
    ],
)
def test_work_is_counted_in_gpus_else_cpu_cores(requests, expected):
    assert devices(requests) == expected


def test_work_is_infinite_when_a_pod_declares_no_duration():
    assert work(members("ns/a", 2, gpu=1, duration=10.0)) == 20.0
    assert work((*members("ns/a", 1, gpu=1, duration=10.0), *members("ns/a", 1, start=1, gpu=1))) == math.inf


_JOBS = st.lists(
    st.tuples(
        st.floats(0, 10_000, allow_nan=False),  # created
        st.integers(1, 4),  # members
        st.integers(0, 8),  # GPUs each
        st.one_of(st.none(), st.floats(0, 1e6, allow_nan=False)),  # declared duration
        st.integers(0, 2),  # priority
    ),
    min_size=2,
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(jobs=_JOBS, limit=st.sampled_from([0.0, 60.0, 3600.0]))
def test_no_unit_is_passed_by_one_created_more_than_the_limit_after_it(jobs, limit):
    pods, gangs = [], []
    for i, (created, count, gpus, duration, priority) in enumerate(jobs):
        key = f"ns/job-{i:02d}"
        pods += members(key, count, gpu=gpus, duration=duration, priority=priority)
        gangs.append(gang(key, count, created=created))
    world = snapshot(pods=pods, gangs=gangs)
    position = {key: i for i, key in enumerate(order(world, EngineConfig(overtake_limit_s=limit)))}
    by_key: dict[str, Gang] = {g.key: g for g in gangs}
    priority = {f"ns/job-{i:02d}": job[4] for i, job in enumerate(jobs)}
    for a in by_key.values():
        for b in by_key.values():
            if priority[a.key] == priority[b.key] and b.created > a.created + limit:
                assert position[a.key] < position[b.key]
            if priority[a.key] > priority[b.key]:
                assert position[a.key] < position[b.key]
