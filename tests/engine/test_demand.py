"""Pending demand: what each cycle considered for placement and left unbound, summed per resource
(the overview's "Pending demand" chart is drawn from it)."""

import dataclasses

from scheduler_core.engine import GangMode, GangPhase, TimeoutStyle, apply_result, run_cycle, sweep_timeouts

from .world import GI, NOW, gang, members, node, nodes, pod, snapshot


def test_a_gang_that_binds_leaves_no_demand_and_one_too_big_leaves_all_its_requests():
    world = snapshot(
        nodes(2, cpu=8, memory=32),
        (*members("ml/fits", 2, cpu=4, memory=8), *members("ml/huge", 4, cpu=8, memory=16, gpu=2)),
        [gang("ml/fits", 2), gang("ml/huge", 4)],
    )

    result = run_cycle(world, NOW)

    assert sorted(bind.pod for bind in result.binds) == ["ml/fits-0", "ml/fits-1"]
    # Kubernetes would write it cpu 32, memory 64Gi, nvidia.com/gpu 8.
    assert result.pending_demand == {"cpu": 32_000, "memory": 64 * GI, "nvidia.com/gpu": 8}
    assert result.pods_considered == 6


def test_bound_pods_and_an_empty_queue_are_no_demand():
    world = snapshot(nodes(1), (pod("ml/running", cpu=2, node="n0", started=0.0),))

    assert run_cycle(world, NOW).pending_demand == {}


def test_lone_pods_count_one_by_one_only_those_left_over():
    world = snapshot((node("n0", cpu=4, memory=16),), tuple(pod(f"web/p{i}", cpu=3) for i in range(3)))

    result = run_cycle(world, NOW)

    assert len(result.binds) == 1
    assert result.pending_demand == {"cpu": 6000, "memory": 2 * GI}


def test_members_holding_a_reservation_are_still_demand():
    """A NonStrict gang keeps what it placed as reservations: nothing is bound, all of it waits."""
    world = snapshot(
        nodes(3, cpu=4),
        (pod("other/busy", cpu=4, node="n2", started=0.0), *members("ml/partial", 3, cpu=4)),
        [gang("ml/partial", 3, mode=GangMode.NON_STRICT)],
    )

    result = run_cycle(world, NOW)

    assert len(result.reservations) == 2 and result.binds == []
    assert result.pending_demand == {"cpu": 12_000, "memory": 3 * GI}


def test_timed_out_and_inactive_gangs_are_not_demand():
    waiting = members("ml/late", 3, cpu=4)
    stopped = members("ml/stopped", 2, cpu=4)
    world = snapshot(
        nodes(2, cpu=4),
        (*waiting, *stopped),
        [
            gang("ml/late", 3, wait_seconds=60.0, wait_started=NOW - 120.0, style=TimeoutStyle.HARD),
            gang("ml/stopped", 2, phase=GangPhase.TIMED_OUT),
        ],
    )

    result = run_cycle(world, NOW)  # ml/late times out in this very cycle

    assert result.pending_demand == {}
    assert result.pods_considered == 0


def test_a_soft_gang_that_fell_back_is_demand_pod_by_pod():
    world = snapshot(
        nodes(1, cpu=4),
        (pod("other/busy", cpu=4, node="n0", started=0.0), *members("ml/soft", 2, cpu=2)),
        [gang("ml/soft", 2, wait_seconds=60.0, wait_started=NOW - 120.0, style=TimeoutStyle.SOFT)],
    )

    result = run_cycle(world, NOW)

    assert result.pending_demand == {"cpu": 4000, "memory": 2 * GI}


def test_the_timeout_sweep_reports_what_stays_queued():
    """The sweep binds nothing: its demand is every queued pod, without the gangs it timed out."""
    world = snapshot(
        nodes(1, cpu=4),
        (*members("ml/late", 2, cpu=4), *members("ml/next", 2, cpu=1)),
        [
            gang("ml/late", 2, wait_seconds=60.0, wait_started=NOW - 120.0),
            gang("ml/next", 2),
        ],
    )

    result = sweep_timeouts(world, NOW)

    assert result.pending_demand == {"cpu": 2000, "memory": 2 * GI}
    assert result.binds == []


def test_demand_follows_the_queue_across_cycles():
    world = snapshot(
        nodes(1, cpu=4),
        (pod("other/busy", cpu=4, node="n0", started=0.0, duration=30.0), *members("ml/job", 2, cpu=2)),
        [gang("ml/job", 2)],
    )
    first = run_cycle(world, NOW)
    assert first.pending_demand == {"cpu": 4000, "memory": 2 * GI}

    freed = dataclasses.replace(
        apply_result(world, first, NOW), pods=tuple(p for p in world.pods if p.name != "busy")
    )
    second = run_cycle(freed, NOW + 60)

    assert len(second.binds) == 2 and second.pending_demand == {}
