"""Properties of preemption on random small clusters (hypothesis; see ``test_properties.py``).

1. Only running, preemptible work of strictly lower priority than the preemptor is evicted; a
   lone pod of a gang that already runs min_member members never preempts; a gang preempted
   whole loses all of its running members, and so does the rest of its gang group.
2. No victim gang is left between 0 and min_member running members (nor below its
   min_resources when it keeps running).
3. No more is evicted than the preemptor's minimum needs: with the victims gone its minimum
   fits, and giving back any single member taken from a gang that keeps running (or a lone pod),
   or a gang taken whole, would leave that minimum unplaceable.
4. A gang preempted in a cycle binds nothing in that cycle.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.engine import (
    EngineConfig,
    Gang,
    GangPhase,
    Placement,
    Pod,
    Snapshot,
    TransitionKind,
    run_cycle,
)
from scheduler_core.engine.model import INACTIVE_PHASES

from .cycles import gang_priority, satisfied_now, trajectory
from .strategies import (
    SETTINGS,
    Capacity,
    Scenario,
    chance,
    constraint_sets,
    ints,
    node_lists,
    pick,
    request_shapes,
    scenarios,
    snapshots,
)

_PREEMPTED_BY = re.compile(r"preempted by (\S+) \(priority")


def _preemptor(reason: str) -> str:
    match = _PREEMPTED_BY.search(reason)
    assert match, f"eviction reason does not name the preemptor: {reason!r}"
    return match.group(1)


def _priority(snapshot: Snapshot, key: str) -> int:
    """The priority of a unit (gang group, gang or lone pod) named by an Evict reason."""
    gangs = {gang.key: gang for gang in snapshot.gangs}
    groups = {group.key: group for group in snapshot.gang_groups}
    if key in groups:
        return max(gang_priority(snapshot, gangs[k]) for k in groups[key].members if k in gangs)
    if key in gangs:
        return gang_priority(snapshot, gangs[key])
    pods = {pod.key: pod for pod in snapshot.pods}
    assert key in pods, f"unknown preemptor {key}"
    return pods[key].priority


def _running(snapshot: Snapshot) -> Counter:
    """Running (bound, not terminating) members per gang."""
    return Counter(p.gang for p in snapshot.pods if p.gang and p.node is not None and not p.terminating)


@st.composite
def preemption_scenarios(draw) -> Scenario:
    """One pending gang, above every running priority, on a drawn cluster of running work.

    Only running pods stay besides it (no reservations, no other pending work, no gang groups),
    so that the cycle's state when it preempts is the snapshot itself and any eviction can be
    checked against a cycle without preemption on the snapshot minus some pods.
    """
    snapshot, now = draw(snapshots())
    pending = sorted(
        gang.key
        for gang in snapshot.gangs
        if not gang.settled
        and gang.phase not in INACTIVE_PHASES
        and any(pod.gang == gang.key and pod.pending for pod in snapshot.pods)
    )
    key = draw(pick(tuple(pending))) if pending else None
    pods = tuple(
        dataclasses.replace(pod, priority=4, reserved_node=None) if pod.pending else pod
        for pod in snapshot.pods
        if pod.node is not None or (key is not None and pod.gang == key and pod.pending)
    )
    gangs = tuple(
        dataclasses.replace(
            gang,
            group=None,
            **({"priority": 4, "phase": GangPhase.PENDING, "wait_seconds": None} if gang.key == key else {}),
        )
        for gang in snapshot.gangs
    )
    return Scenario(Snapshot(snapshot.nodes, pods, gangs), now, EngineConfig())


@st.composite
def busy_clusters(draw) -> Scenario:
    """A cluster full of lower-priority running work, much of it elastic, and one urgent gang.

    Running gangs have 0 to 4 members above their min_member (some with minResources, some
    members or gangs not preemptible); lone pods fill the rest; the urgent gang (priority 4) may
    have members beyond its own minimum, and constraints.
    """
    nodes = draw(node_lists())
    capacity = Capacity(nodes)
    now = 1000.0
    pods: list[Pod] = []
    gangs: list[Gang] = []
    for g in range(draw(ints(1, 8))):
        minimum, shape, priority = draw(ints(1, 3)), draw(request_shapes()), draw(ints(0, 3))
        gang = Gang(
            "team-a",
            f"run-{g}",
            minimum,
            priority=draw(pick((None, priority))),
            satisfied=True,
            phase=GangPhase.RUNNING,
            preemptible=not draw(chance(6)),
            created=float(g),
        )
        if draw(chance(5)):
            gang = dataclasses.replace(
                gang, min_resources={"cpu": (minimum + draw(ints(0, 1))) * shape["cpu"]}
            )
        before = copy.deepcopy(capacity.free)
        members = []
        for j in range(minimum + draw(ints(0, 4))):
            node = capacity.take(draw, dict(shape))
            if node is None:
                break
            started = now - draw(ints(1, 300))
            members.append(
                Pod(
                    "team-a",
                    f"run-{g}-{j}",
                    dict(shape),
                    priority=priority,
                    created=float(g),
                    gang=gang.key,
                    node=node,
                    started=started,
                    preemptible=not draw(chance(8)),
                )
            )
        if len(members) < minimum:  # it did not fit: it does not run
            capacity.free = before
            continue
        pods.extend(members)
        gangs.append(gang)
    for k in range(draw(ints(0, 16))):
        shape = draw(request_shapes())
        node = capacity.take(draw, shape)
        if node is not None:
            pods.append(
                Pod(
                    "team-b",
                    f"lone-{k}",
                    shape,
                    priority=draw(ints(0, 3)),
                    node=node,
                    started=now - draw(ints(1, 300)),
                    preemptible=not draw(chance(8)),
                )
            )
    minimum = draw(ints(1, 4))
    urgent = Gang("team-b", "urgent", minimum, priority=4, placement=draw(pick(Placement)), created=50.0)
    shape = draw(request_shapes())
    if draw(chance(5)):
        urgent = dataclasses.replace(urgent, min_resources={"cpu": (minimum + 1) * shape["cpu"]})
    constraints = draw(constraint_sets()) if draw(chance(3)) else {}
    pods.extend(
        Pod("team-b", f"urgent-{j}", dict(shape), priority=4, gang=urgent.key, created=50.0, **constraints)
        for j in range(minimum + draw(ints(0, 2)))
    )
    return Scenario(Snapshot(tuple(nodes), tuple(pods), (*gangs, urgent)), now, EngineConfig())


@SETTINGS
@given(scenarios())
def test_preemption_takes_only_lower_priority_preemptible_work(scenario: Scenario) -> None:
    for before, result, _after, _now in trajectory(scenario, cycles=3):
        if not result.evictions:
            continue
        pods = {pod.key: pod for pod in before.pods}
        gangs = {gang.key: gang for gang in before.gangs}
        groups = {group.key: group for group in before.gang_groups}
        evicted = {evict.pod for evict in result.evictions}
        assert len(evicted) == len(result.evictions), "a pod evicted twice"
        running = _running(before)
        for evict in result.evictions:
            pod = pods.get(evict.pod)
            assert pod is not None and pod.node == evict.node and not pod.terminating, (
                f"{evict} is not a running pod"
            )
            assert pod.preemptible, f"{evict}: the pod is not preemptible"
            preemptor = _preemptor(evict.reason)
            priority = _priority(before, preemptor)
            owner = pods[preemptor].gang if preemptor in pods else None
            if owner in gangs:  # a lone member preempts only for its gang's minimum
                left = running[owner] - sum(1 for key in evicted if pods[key].gang == owner)
                assert left < gangs[owner].min_member, f"{evict}: {preemptor} is above its gang's minimum"
            gang = gangs.get(pod.gang) if pod.gang is not None else None
            if gang is None:
                assert pod.priority < priority, f"{evict}: priority {pod.priority} >= {priority}"
                continue
            group = groups.get(gang.group) if gang.group is not None else None
            whole = [gangs[key] for key in (group.members if group else (gang.key,)) if key in gangs]
            assert gang.preemptible, f"{evict}: gang {gang.key} is not preemptible"
            victim = max(gang_priority(before, member) for member in whole)
            assert victim < priority, f"{evict}: victim priority {victim} >= preemptor's {priority}"
            if TransitionKind.PREEMPTED not in result.transitions_of(gang.key):
                continue
            for member in whole:
                missed = [
                    p.key
                    for p in before.pods
                    if p.gang == member.key
                    and p.node is not None
                    and not p.terminating
                    and p.key not in evicted
                ]
                assert not missed, f"{evict}: running members {missed} of {member.key} are not evicted"


@SETTINGS
@given(st.one_of(scenarios(), busy_clusters()))
def test_no_victim_gang_is_left_below_its_min_member(scenario: Scenario) -> None:
    for before, result, _after, _now in trajectory(scenario, cycles=3):
        pods = {pod.key: pod for pod in before.pods}
        gangs = {gang.key: gang for gang in before.gangs}
        running = _running(before)
        evicted = {evict.pod for evict in result.evictions}
        taken = Counter(pods[key].gang for key in evicted if pods[key].gang)
        for key, count in taken.items():
            gang, left = gangs.get(key), running[key] - count
            if gang is None:
                continue
            preempted = TransitionKind.PREEMPTED in result.transitions_of(key)
            assert left == 0 or left >= gang.min_member, (
                f"{key} left with {left} running members, min_member {gang.min_member}"
            )
            assert preempted == (left == 0), f"{key}: {left} left running, preempted whole: {preempted}"
            if left and gang.min_resources:
                kept = Counter()
                for pod in before.pods:
                    if (
                        pod.gang == key
                        and pod.node is not None
                        and not pod.terminating
                        and pod.key not in evicted
                    ):
                        kept.update(pod.requests)
                short = {name: amount for name, amount in gang.min_resources.items() if kept[name] < amount}
                assert not short, f"{key} keeps running below its minResources: short {short}"


def _placeable(scenario: Scenario, preemptor: str, gone: set[str]) -> bool:
    """Does the preemptor's minimum fit once the pods ``gone`` are gone (nothing else moving)?"""
    snapshot = scenario.snapshot
    world = dataclasses.replace(snapshot, pods=tuple(p for p in snapshot.pods if p.key not in gone))
    return satisfied_now(run_cycle(world, scenario.now, EngineConfig(preemption=False)), preemptor)


@SETTINGS
@given(st.one_of(busy_clusters(), preemption_scenarios()))
def test_preemption_evicts_no_more_than_the_preemptor_needs(scenario: Scenario) -> None:
    result = run_cycle(scenario.snapshot, scenario.now, scenario.config)
    if not result.evictions:
        return
    preemptors = {_preemptor(evict.reason) for evict in result.evictions}
    assert len(preemptors) == 1, f"one pending gang, several preemptors: {preemptors}"
    preemptor = preemptors.pop()
    evicted = {evict.pod for evict in result.evictions}
    assert _placeable(scenario, preemptor, evicted), "the victims do not make room for the preemptor"
    pods = {pod.key: pod for pod in scenario.snapshot.pods}
    running = _running(scenario.snapshot)
    by_gang: dict[str | None, set[str]] = {}
    for key in evicted:
        by_gang.setdefault(pods[key].gang, set()).add(key)
    for gang, taken in by_gang.items():
        if gang is not None and len(taken) == running[gang]:  # taken whole: give it all back
            assert not _placeable(scenario, preemptor, evicted - taken), f"{gang} was taken whole needlessly"
            continue
        for key in taken:  # elastic members (the gang keeps running) and lone pods, one by one
            assert not _placeable(scenario, preemptor, evicted - {key}), f"{key} was taken needlessly"


@SETTINGS
@given(scenarios())
def test_preempted_gang_binds_nothing_in_the_same_cycle(scenario: Scenario) -> None:
    """Whole-gang eviction: no member of a gang evicted whole in a cycle is bound in that cycle,
    or the next snapshot runs a part of a gang that is no longer satisfied."""
    for _before, result, after, _now in trajectory(scenario, cycles=3):
        preempted = {t.gang for t in result.transitions if t.kind == TransitionKind.PREEMPTED}
        bound = [bind for bind in result.binds if bind.gang in preempted]
        assert not bound, f"members of preempted gangs bound in the same cycle: {bound}"
        gangs = {gang.key: gang for gang in after.gangs}
        for pod in after.pods:
            if pod.gang in preempted:
                assert pod.node is None, f"{pod.key} runs while its gang {pod.gang} was preempted"
        for key in preempted:
            assert not gangs[key].satisfied
