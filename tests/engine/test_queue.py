"""QueueSort: priority, then creation of the gang (or the pod), then a stable key."""

from scheduler_core.engine import EngineConfig, Snapshot
from scheduler_core.engine.queue import build_units, pods_by_gang

from .world import gang, members, pod, snapshot


def order(world: Snapshot) -> list[str]:
    gangs = {g.key: g for g in world.gangs}
    return [unit.key for unit in build_units(world, EngineConfig(), gangs, pods_by_gang(world))]


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
