"""Properties of whole scheduling cycles on random small clusters (hypothesis).

Every test draws a valid snapshot (no node over-committed, unique pod keys, gangs consistent with
their groups) and runs one or more cycles of the real engine, applying each result with
``apply_result`` and advancing ``now`` between cycles (pods whose declared duration has elapsed
complete and leave the snapshot). The invariants are the gang scheduler's promises:

1. no node is ever over-committed, by bound pods and held reservations together;
2. no gang binds with fewer than min_member members, and an unsatisfied gang binds nothing
   unless it becomes satisfied in that very cycle;
3. a gang group binds all or nothing;
4. the same input gives the same decisions;
5. reservations are held only by pending members of unsatisfied NonStrict gangs, or nominated
   by preemption;
6. preemption (``test_preemption_properties.py``) takes strictly lower-priority, preemptible
   work only, leaves no victim gang between 0 and min_member running, and takes no more than
   the preemptor's minimum needs;

and one that keeps the decisions consistent with each other: every bind is a pending pod, bound
once, on a ready node. The snapshots are drawn in ``strategies.py``.

The generated examples are derandomized (the same 200 every run); the minimal examples of the
failures hypothesis found are replayed first, with ``@example``.
"""

from __future__ import annotations

import copy
from collections import Counter

from hypothesis import example, given
from hypothesis import strategies as st

from scheduler_core.engine import (
    EngineConfig,
    Gang,
    GangGroup,
    GangMode,
    GangPhase,
    HeadOfLine,
    Node,
    Pod,
    Snapshot,
    TimeoutStyle,
    apply_result,
    run_cycle,
)
from scheduler_core.engine.config import permit_quorum

from .cycles import check_binds_sane, fell_back, overcommitted, satisfied_now, trajectory
from .strategies import SETTINGS, Scenario, configs, scenarios

# --------------------------------------------------------------------------------------------
# Minimal examples of failures hypothesis found, replayed first by the tests they broke
# (all fixed in the engine by 6b9056a; kept as regressions)
# --------------------------------------------------------------------------------------------


def _scenario(nodes, pods, gangs, groups=(), now: float = 100.0, config=None) -> Scenario:
    snapshot = Snapshot(tuple(nodes), tuple(pods), tuple(gangs), tuple(groups))
    return Scenario(snapshot, now, config or EngineConfig())


# A Soft gang of a gang group whose timeout sent its pods to pod-at-a-time scheduling.
FALLEN_BACK_A = Gang(
    "ns",
    "a",
    1,
    style=TimeoutStyle.SOFT,
    group="ns/group",
    wait_started=0.0,
    phase=GangPhase.SCHEDULING,
    fallen_back=True,
)

# A Soft gang that fell back stayed part of its gang group's unit while its pods were also lone
# units: the group bound ns/a-0, then its lone unit bound it a second time.
FALLEN_BACK_IN_GROUP = _scenario(
    nodes=[Node("node-0", {"cpu": 2000})],
    pods=[
        Pod("ns", "a-0", {"cpu": 250}, gang="ns/a", created=1.0),
        Pod("ns", "b-0", {"cpu": 250}, gang="ns/b"),
    ],
    gangs=[
        FALLEN_BACK_A,
        Gang("ns", "b", 1, group="ns/group"),
    ],
    groups=[GangGroup("ns/group", ("ns/a", "ns/b"))],
)

# The same, when the second placement did not fit: the lone unit of ns/a-0 (bound by its group a
# moment before) preempted the running gang ns/v and was nominated (Reserve) on its room.
FALLEN_BACK_IN_GROUP_PREEMPTS = _scenario(
    nodes=[Node("node-0", {"cpu": 1250})],
    pods=[
        Pod("ns", "v-0", {"cpu": 250}, gang="ns/v", node="node-0", started=0.0),
        Pod("ns", "a-0", {"cpu": 500}, gang="ns/a", priority=1, created=1.0),
        Pod("ns", "b-0", {"cpu": 250}, gang="ns/b", priority=1),
    ],
    gangs=[
        Gang("ns", "v", 1, satisfied=True, phase=GangPhase.RUNNING),
        FALLEN_BACK_A,
        Gang("ns", "b", 1, group="ns/group"),
    ],
    groups=[GangGroup("ns/group", ("ns/a", "ns/b"))],
)

# And with head_of_line "none": the group could not bind (ns/b fits nowhere), so its NonStrict
# gang ns/a kept a reservation for a-0 ("NonStrict: accumulating members"), which its lone unit
# then bound in the same cycle, after placing it a second time.
FALLEN_BACK_IN_GROUP_RESERVES = _scenario(
    nodes=[Node("node-0", {"cpu": 4000})],
    pods=[
        Pod("ns", "a-0", {"cpu": 250}, gang="ns/a", created=1.0),
        Pod("ns", "b-0", {"cpu": 250}, gang="ns/b", node_selector={"zone": "nowhere"}),
    ],
    gangs=[
        Gang(
            "ns",
            "a",
            1,
            mode=GangMode.NON_STRICT,
            style=TimeoutStyle.SOFT,
            group="ns/group",
            wait_started=0.0,
            phase=GangPhase.SCHEDULING,
            fallen_back=True,
        ),
        Gang("ns", "b", 1, group="ns/group"),
    ],
    groups=[GangGroup("ns/group", ("ns/a", "ns/b"))],
    config=EngineConfig(head_of_line=HeadOfLine.NONE),
)

# plan_head crashed (TypeError: cannot unpack non-iterable NoneType object): fits_on_empty said
# the group fits on an empty cluster, then _keep_reservations reserved a-0 on node-1, and the
# empty-cluster placement that plan_head redid (its own reservation not counted, binpack now
# preferring node-1 for the other two) no longer fitted gang b: _placement_on_empty gave None.
HEAD_NO_LONGER_FITS_ON_EMPTY = _scenario(
    nodes=[Node("node-1", {"cpu": 4000, "pods": 4}), Node("node-3", {"cpu": 8000, "pods": 5})],
    pods=[
        Pod("ns", "other", {"cpu": 250}, node="node-1"),
        *(Pod("ns", f"filler-{j}", {"cpu": 250}, node="node-3") for j in range(5)),
        *(Pod("ns", f"a-{j}", {"cpu": 2000}, gang="ns/a") for j in range(3)),
        *(Pod("ns", f"b-{j}", {"cpu": 500}, gang="ns/b") for j in range(6)),
    ],
    gangs=[Gang("ns", "a", 3, mode=GangMode.NON_STRICT, group="ns/g"), Gang("ns", "b", 6, group="ns/g")],
    groups=[GangGroup("ns/g", ("ns/a", "ns/b"))],
)


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

overcommit_configs = st.one_of(
    configs, st.builds(EngineConfig, gangs=st.just(False), head_of_line=st.sampled_from(HeadOfLine))
)


@SETTINGS
@given(scenarios(overcommit_configs))
def test_no_node_is_ever_overcommitted(scenario: Scenario) -> None:
    assert not overcommitted(scenario.snapshot), "the generator made an over-committed snapshot"
    for _before, _result, after, now in trajectory(scenario, cycles=5):
        problems = overcommitted(after)
        assert not problems, f"over-committed after the cycle at now={now}: {problems}"


@SETTINGS
@given(scenarios(overcommit_configs))
@example(FALLEN_BACK_IN_GROUP)
def test_each_bind_is_a_pending_pod_bound_once(scenario: Scenario) -> None:
    for before, result, _after, _now in trajectory(scenario, cycles=3):
        check_binds_sane(before, result)


@SETTINGS
@given(scenarios())
@example(HEAD_NO_LONGER_FITS_ON_EMPTY)
def test_no_gang_binds_below_min_member(scenario: Scenario) -> None:
    for before, result, _after, _now in trajectory(scenario, cycles=3):
        evicted = {evict.pod for evict in result.evictions}
        bound_now = Counter(bind.gang for bind in result.binds if bind.gang is not None)
        bound_pods = {bind.pod for bind in result.binds}
        declared = {gang.key for gang in before.gangs}
        for gang in before.gangs:
            if satisfied_now(result, gang.key):
                assert not gang.satisfied, f"{gang.key} satisfied twice"
                running = sum(
                    1
                    for pod in before.pods
                    if pod.gang == gang.key
                    and pod.node is not None
                    and not pod.terminating
                    and pod.key not in evicted
                )
                members = running + sum(
                    1 for pod in before.pods if pod.gang == gang.key and pod.key in bound_pods
                )
                assert members >= gang.min_member, (
                    f"{gang.key} SATISFIED with {members} members bound, min_member {gang.min_member}"
                )
            elif not gang.satisfied and not fell_back(gang, result):
                assert bound_now[gang.key] == 0, (
                    f"{gang.key} is not satisfied and did not become so, yet {bound_now[gang.key]} "
                    "members were bound"
                )
        for pod in before.pods:  # provisional pods wait for their gang to be declared
            if pod.gang is not None and pod.gang not in declared:
                assert pod.key not in bound_pods, f"provisional pod {pod.key} was bound"


@SETTINGS
@given(scenarios())
def test_gang_group_binds_all_or_nothing(scenario: Scenario) -> None:
    for before, result, _after, _now in trajectory(scenario, cycles=3):
        gangs = {gang.key: gang for gang in before.gangs}
        bound_gangs = {bind.gang for bind in result.binds}
        for group in before.gang_groups:
            unsatisfied = [
                gangs[key]
                for key in group.members
                if key in gangs and not gangs[key].satisfied and not fell_back(gangs[key], result)
            ]
            done = [gang.key for gang in unsatisfied if satisfied_now(result, gang.key)]
            if done:
                assert len(done) == len(unsatisfied), (
                    f"group {group.key}: only {done} of {[g.key for g in unsatisfied]} became satisfied"
                )
                assert all(key in gangs for key in group.members), (
                    f"group {group.key} bound although a member gang is missing"
                )
            else:
                partial = [gang.key for gang in unsatisfied if gang.key in bound_gangs]
                assert not partial, f"group {group.key}: {partial} bound members but no gang became satisfied"


@SETTINGS
@given(scenarios(overcommit_configs))
def test_cycle_is_deterministic(scenario: Scenario) -> None:
    snapshot = scenario.snapshot
    pristine = copy.deepcopy(snapshot)
    first = run_cycle(snapshot, scenario.now, scenario.config)
    assert snapshot == pristine, "run_cycle modified its input snapshot"
    second = run_cycle(copy.deepcopy(snapshot), scenario.now, scenario.config)
    for name in ("binds", "reservations", "releases", "evictions", "transitions", "explanations"):
        assert getattr(first, name) == getattr(second, name), f"{name} differ between identical runs"
    assert apply_result(snapshot, first, scenario.now) == apply_result(snapshot, second, scenario.now)


@SETTINGS
@given(scenarios())
@example(FALLEN_BACK_IN_GROUP_PREEMPTS)
@example(FALLEN_BACK_IN_GROUP_RESERVES)
def test_reservations_only_for_nonstrict_or_nominated(scenario: Scenario) -> None:
    for before, result, after, _now in trajectory(scenario, cycles=3):
        pods = {pod.key: pod for pod in before.pods}
        gangs = {gang.key: gang for gang in before.gangs}
        bound = {bind.pod for bind in result.binds}
        for reserve in result.reservations:
            pod = pods.get(reserve.pod)
            assert pod is not None and pod.pending, f"{reserve} is not for a pending pod"
            assert reserve.pod not in bound, f"{reserve} for a pod bound in the same cycle"
            if "nominated" in reserve.reason:
                continue
            gang = gangs.get(pod.gang) if pod.gang is not None else None
            assert gang is not None, f"{reserve} held by a pod without a gang, not nominated"
            mode = scenario.config.force_mode or gang.mode
            if mode == GangMode.STRICT and scenario.config.permit_hold > 0:
                assert "waiting at Permit" in reserve.reason, reserve
                kept = sum(1 for r in result.reservations if r.gang == gang.key)
                held = sum(1 for p in before.pods if p.gang == gang.key and (p.node or p.reserved_node))
                quorum = permit_quorum(gang.min_member, scenario.config.permit_hold)
                assert kept + held >= quorum, f"{gang.key} keeps {kept + held} at Permit, under {quorum}"
                continue
            assert mode == GangMode.NON_STRICT, f"{reserve} held by a {mode.value} gang, not nominated"
            assert not gang.satisfied, f"{reserve} held by a member of satisfied gang {gang.key}"
        for pod in after.pods:
            if pod.reserved_node is not None:
                assert pod.node is None, f"{pod.key} is bound and still holds a reservation"
