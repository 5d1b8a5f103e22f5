"""Applying decisions gives the snapshot the next cycle sees."""

from scheduler_core.engine import GangMode, GangPhase, apply_result, run_cycle

from .world import NOW, gang, members, nodes, pod, snapshot


def test_binds_reservations_and_transitions_land_in_the_next_snapshot():
    busy = pod("x/busy", cpu=4, node="n1", started=0.0)
    world = snapshot(
        nodes(2),
        (busy, *members("a/ok", 1, cpu=1), *members("b/wait", 4, cpu=2)),
        [gang("a/ok", 1, created=1.0), gang("b/wait", 4, mode=GangMode.NON_STRICT, created=2.0)],
    )
    result = run_cycle(world, NOW)
    after = apply_result(world, result, NOW)
    pods = {p.key: p for p in after.pods}
    gangs = {g.key: g for g in after.gangs}
    assert pods["a/ok-0"].node == "n0" and pods["a/ok-0"].started == NOW
    assert gangs["a/ok"].satisfied and gangs["a/ok"].phase == GangPhase.RUNNING
    assert [p.reserved_node for p in after.pods if p.gang == "b/wait"].count("n0") == 1
    assert gangs["b/wait"].wait_started == NOW and gangs["b/wait"].phase == GangPhase.SCHEDULING
    # Reservations count as used: the same cycle again places nothing new.
    assert run_cycle(after, NOW + 1).binds == []
