"""Exclusive domains: each exclusive gang alone in its required domain among exclusive gangs.

Re-expresses what JobSet's and LeaderWorkerSet's pod webhooks ask of kube-scheduler: every pod of
one child Job (one group) an affinity to its own pods and an anti-affinity to the pods of any
other at the exclusive topology key (kubernetes-sigs/jobset pkg/webhooks/pod_webhook.go
``setExclusiveAffinities``, its test pkg/webhooks/pod_webhook_test.go "leader pod with exclusive
placement"; kubernetes-sigs/lws pkg/webhooks/pod_webhook.go ``SetExclusiveAffinities``), so that
one Job (group) lands per domain ("1:1 job to topology placement", jobset
site/content/en/docs/concepts/_index.md).
"""

from __future__ import annotations

import dataclasses

from scheduler_core.engine import EngineConfig, GangMode, HeadOfLine, Reason, TopologyConstraint, run_cycle

from ..world import NOW, bound_of, gang, group, members, pod
from .tworld import BLOCK, RACK, domains_of, fleet, required, world


def exclusive(level: str = RACK) -> TopologyConstraint:
    return TopologyConstraint(required=level, exclusive=True)


def _racks(snap, result, *keys) -> list[set]:
    return [domains_of(snap, result, key, RACK) for key in keys]


def test_two_exclusive_gangs_take_a_rack_each_though_one_node_holds_both():
    nodes = fleet("b0:r0=2,r1=2", cpu=8, gpu=0)
    gangs = [gang(f"t/{n}", 2, topology=exclusive(), created=float(i)) for i, n in enumerate("ab")]
    snap = world(nodes, (*members("t/a", 2), *members("t/b", 2)), gangs)
    result = run_cycle(snap, NOW)
    a, b = _racks(snap, result, "t/a", "t/b")
    assert len(a) == len(b) == 1 and a != b
    shared = [dataclasses.replace(g, topology=required(RACK)) for g in gangs]
    result = run_cycle(dataclasses.replace(snap, gangs=tuple(shared)), NOW)
    a, b = _racks(snap, result, "t/a", "t/b")
    assert a == b  # not exclusive: bin-packing puts both on one node


def test_a_third_exclusive_gang_on_two_racks_waits_saying_every_rack_is_held():
    nodes = fleet("b0:r0=2,r1=2", cpu=8, gpu=0)
    gangs = [gang(f"t/{n}", 2, topology=exclusive(), created=float(i)) for i, n in enumerate("abc")]
    pods = (*members("t/a", 2), *members("t/b", 2), *members("t/c", 2))
    result = run_cycle(world(nodes, pods, gangs), NOW)
    assert len(bound_of(result, "t/a")) == len(bound_of(result, "t/b")) == 2
    assert bound_of(result, "t/c") == []
    why = result.explanations["t/c"]
    assert why.reason == Reason.NO_DOMAIN_FITS
    assert "in one rack of its own" in why.message
    assert "every rack holds another exclusive gang (all 2: r0 by t/" in why.message
    assert why.details["exclusive"]["domains"] == why.details["exclusive"]["held"] == 2
    assert {h["gang"] for h in why.details["exclusive"]["held_by"]} == {"t/a", "t/b"}
    # The node counts name the same cause: room, but in racks other exclusive gangs hold.
    [shape] = why.details["shapes"]
    assert [(row["reason"], row["detail"]) for row in shape["reasons"]] == [("ExclusiveDomain", "rack")]


def test_a_running_exclusive_gang_keeps_other_exclusive_gangs_out_but_not_other_work():
    nodes = fleet("b0:r0=2,r1=1", cpu=8, gpu=0)
    running = members("t/a", 1, node="r0-h0", started=NOW - 5)
    gangs = [
        gang("t/a", 1, topology=exclusive(), satisfied=True),
        gang("t/plain", 2, topology=required(RACK), created=0.0),
        gang("t/excl", 2, topology=exclusive(), created=1.0),
    ]
    # Two 7-CPU members fit only r0 (two nodes); r1 has one.
    pods = (*running, *members("t/plain", 2, cpu=7), *members("t/excl", 2, cpu=7))
    result = run_cycle(world(nodes, pods, gangs), NOW, EngineConfig(head_of_line=HeadOfLine.NONE))
    assert len(bound_of(result, "t/plain")) == 2  # not exclusive: shares t/a's rack
    assert bound_of(result, "t/excl") == []
    why = result.explanations["t/excl"].message
    assert "other exclusive gangs hold 1 of 2 racks (r0 by t/a)" in why


def test_a_gang_group_of_exclusive_gangs_spreads_one_gang_per_rack_or_binds_nothing():
    """A JobSet with exclusive placement: its child Jobs are one gang group, tried in one trial,
    and each Job must see the racks its siblings took in that trial."""
    nodes = fleet("b0:r0=2,r1=2", cpu=8, gpu=0)
    keys = ("t/js-w-0", "t/js-w-1")
    gangs = [gang(key, 2, group="t/js", topology=exclusive()) for key in keys]
    pods = tuple(pod for key in keys for pod in members(key, 2))
    result = run_cycle(world(nodes, pods, gangs, [group("t/js", *keys)]), NOW)
    a, b = _racks(world(nodes), result, *keys)
    assert len(a) == len(b) == 1 and a != b
    three = (*keys, "t/js-w-2")
    gangs = [gang(key, 2, group="t/js", topology=exclusive()) for key in three]
    pods = tuple(pod for key in three for pod in members(key, 2))
    result = run_cycle(world(nodes, pods, gangs, [group("t/js", *three)]), NOW)
    assert result.binds == []
    reasons = {why.reason for why in result.explanations.values()}
    assert Reason.NO_DOMAIN_FITS in reasons


def test_a_reservation_holds_its_domain():
    """A NonStrict gang's reserved member holds its rack as a bound one does."""
    nodes = fleet("b0:r0=2,r1=2", cpu=8, gpu=0)
    held = members("t/a", 1, reserved_node="r0-h0")
    stuck = members("t/a", 1, cpu=100, start=1)  # never fits: t/a keeps its reservation
    gangs = [
        gang("t/a", 2, topology=exclusive(), mode=GangMode.NON_STRICT, created=0.0),
        gang("t/b", 2, topology=exclusive(), created=1.0),
    ]
    snap = world(nodes, (*held, *stuck, *members("t/b", 2)), gangs)
    result = run_cycle(snap, NOW, EngineConfig(head_of_line=HeadOfLine.NONE))
    assert {b.node.split("-")[0] for b in result.binds if b.gang == "t/b"} == {"r1"}


def test_gangs_exclusive_at_another_level_do_not_meet():
    nodes = fleet("b0:r0=1,r1=1", cpu=8, gpu=0)
    running = members("t/block", 1, node="r0-h0", started=NOW - 5)
    gangs = [
        gang("t/block", 1, topology=exclusive(BLOCK), satisfied=True),
        gang("t/rack", 1, topology=exclusive(RACK)),
    ]
    result = run_cycle(world(nodes, (*running, *members("t/rack", 1, cpu=7.5)), gangs), NOW)
    assert len(bound_of(result, "t/rack")) == 1  # r1, or r0 beside t/block: either is allowed


def test_preemption_does_not_evict_an_exclusive_gang_to_free_its_rack():
    """Victims are taken in a rack no other exclusive gang holds, never the holder itself."""
    nodes = fleet("b0:r0=2,r1=2", cpu=8, gpu=0)
    holder = members("t/low", 2, cpu=8, node=None, priority=1)
    holder = tuple(dataclasses.replace(p, node=f"r0-h{i}", started=NOW - 9) for i, p in enumerate(holder))
    busy = [pod(f"x/busy-{i}", cpu=8, node=f"r1-h{i}", started=NOW - 9, priority=5) for i in range(2)]
    gangs = [
        gang("t/low", 2, topology=exclusive(), priority=1, satisfied=True),
        gang("t/high", 2, topology=exclusive(), priority=10),
    ]
    snap = world(nodes, (*holder, *busy, *members("t/high", 2, cpu=8, priority=10)), gangs)
    result = run_cycle(snap, NOW)
    evicted = {e.pod for e in result.evictions}
    # t/low is the cheaper victim, but evicting it frees a rack t/high may not take while
    # t/low's pods are there: the priority-5 pods of r1 go instead.
    assert evicted == {"x/busy-0", "x/busy-1"}


def test_exclusive_without_a_required_level_waits_saying_so():
    nodes = fleet("b0:r0=1", cpu=8, gpu=0)
    lone = TopologyConstraint(preferred=RACK, exclusive=True)
    result = run_cycle(world(nodes, members("t/a", 1), [gang("t/a", 1, topology=lone)]), NOW)
    assert result.binds == []
    why = result.explanations["t/a"]
    assert why.reason == Reason.TOPOLOGY_UNKNOWN
    assert "exclusive placement names no required level" in why.message


def test_a_gang_waiting_for_a_held_rack_is_planned_as_the_head_not_said_never_to_fit():
    """Backfilling's what-ifs take the holder's pods away with their usage: the exclusive gang
    fits once t/a ends (its shadow time), so a gang behind it backfills where it does not delay
    it, and nothing says it could never run."""
    nodes = fleet("b0:r0=2", cpu=8, gpu=0)
    holder = members("t/a", 1, node="r0-h0", started=NOW - 10, duration=100, priority=9)
    gangs = [
        gang("t/a", 1, topology=exclusive(), satisfied=True, priority=9),
        gang("t/b", 2, topology=exclusive(), created=0.0),
        gang("t/c", 1, created=1.0),
    ]
    pods = (*holder, *members("t/b", 2), *members("t/c", 1, cpu=8))
    result = run_cycle(world(nodes, pods, gangs), NOW)
    assert bound_of(result, "t/b") == []
    why = result.explanations["t/b"]
    assert "every rack holds another exclusive gang" in why.message
    assert "empty cluster" not in why.message and "fits_on_empty_cluster" not in why.details
    assert bound_of(result, "t/c") == ["t/c-0"]  # r0-h1: t/b fits r0-h0 once t/a ends


def test_exclusive_gangs_of_one_group_that_no_cluster_could_hold_are_said_never_to_fit():
    nodes = fleet("b0:r0=2,r1=2", cpu=8, gpu=0)
    keys = ("t/js-w-0", "t/js-w-1", "t/js-w-2")
    gangs = [gang(key, 2, group="t/js", topology=exclusive()) for key in keys]
    pods = tuple(pod for key in keys for pod in members(key, 2))
    result = run_cycle(world(nodes, pods, gangs, [group("t/js", *keys)]), NOW)
    assert any("cannot fit even on an empty cluster" in why.message for why in result.explanations.values())
