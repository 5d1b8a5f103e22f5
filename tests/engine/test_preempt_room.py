"""The room of pods evicted in a cycle stays theirs until they are gone.

A kubelet admits no pod onto room a terminating pod still uses, and a cycle's binds are sent
before its evictions; so a cycle that preempts must not bind anybody else onto its victims'
room, and a second preemptor that would fit once they are gone must not count on room the
first one already spoke for. kube-scheduler keeps victims in its cache until they are deleted
and lets only the nominated pod wait for their room (kubernetes
``pkg/scheduler/framework/preemption`` tests: ``TestPrepareCandidate``, and
``test/integration/scheduler/preemption``: ``TestNominatedNodeCleanUp``).
"""

import dataclasses

from scheduler_core.engine import Reason, apply_result, run_cycle

from .world import NOW, gang, members, node, pod, snapshot


def _running_low(node_name: str = "n0"):
    pods = members("batch/low", 2, cpu=2, node=node_name, started=NOW - 10, priority=0)
    return pods, gang("batch/low", 2, satisfied=True, priority=0)


def test_nothing_else_binds_onto_the_room_of_pods_evicted_in_the_same_cycle():
    low_pods, low = _running_low()
    urgent = members("prod/urgent", 1, cpu=2, priority=10)
    filler = pod("batch/filler", cpu=2, priority=1)  # fits in the half urgent does not take
    world = snapshot((node("n0"),), (*low_pods, *urgent, filler), [low, gang("prod/urgent", 1)])

    result = run_cycle(world, NOW)

    assert {evict.pod for evict in result.evictions} == {"batch/low-0", "batch/low-1"}
    assert [(r.pod, r.node) for r in result.reservations] == [("prod/urgent-0", "n0")]
    assert result.binds == []  # batch/filler waits: batch/low still holds n0

    # Once the victims are gone, the nominated gang binds, and the filler takes the rest.
    after = apply_result(world, result, NOW)
    gone = dataclasses.replace(after, pods=tuple(p for p in after.pods if not p.key.startswith("batch/low")))
    second = run_cycle(gone, NOW + 5)
    assert sorted(b.pod for b in second.binds) == ["batch/filler", "prod/urgent-0"]


def test_a_second_preemptor_does_not_count_on_room_the_first_one_waits_for():
    leaving = pod("batch/leaving", cpu=4, node="n0", started=NOW - 10, priority=0, terminating=True)
    other = pod("batch/other", cpu=4, node="n1", started=NOW - 10, priority=0)
    first = members("prod/first", 1, cpu=4, priority=10, created=1.0)
    second = members("prod/second", 1, cpu=4, priority=10, created=2.0)
    world = snapshot(
        (node("n0"), node("n1")),
        (leaving, other, *first, *second),
        [gang("prod/first", 1, created=1.0), gang("prod/second", 1, created=2.0)],
    )

    result = run_cycle(world, NOW)

    explanations = result.explanations
    assert explanations["prod/first"].reason == Reason.PREEMPTING
    assert explanations["prod/first"].message == "waiting for evicted pods to terminate"
    # n0's room is the first one's once batch/leaving is gone: the second one makes its own.
    assert [evict.pod for evict in result.evictions] == ["batch/other"]
    assert [(r.pod, r.node) for r in result.reservations] == [("prod/second-0", "n1")]
