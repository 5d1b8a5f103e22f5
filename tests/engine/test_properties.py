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
6. preemption evicts whole gangs (and whole gang groups) of strictly lower priority only, and
   never a non-preemptible pod or gang;

and two that keep the decisions consistent with each other: every bind is a pending pod, bound
once, on a ready node; and a gang preempted in a cycle has nothing bound in that cycle.

The generated examples are derandomized (the same 200 every run); the minimal examples of the
failures hypothesis found are replayed first, with ``@example``.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import os
import re
from collections import Counter, defaultdict

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from scheduler_core.engine import (
    EngineConfig,
    Gang,
    GangGroup,
    GangMode,
    GangPhase,
    HeadOfLine,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Placement,
    Pod,
    Snapshot,
    Taint,
    TimeoutStyle,
    Toleration,
    TransitionKind,
    apply_result,
    run_cycle,
)
from scheduler_core.engine.model import permit_quorum

GI = 2**30
NAMESPACES = ("team-a", "team-b")
ZONES = ("z1", "z2", "z3")
GPU_MODELS = ("a100", "h100")
GPU = "nvidia.com/gpu"
GPU_TAINT = Taint(GPU, "present", "NoSchedule")

# Derandomized, so that a run passes or fails the same way every time;
# ENGINE_PROPERTY_EXAMPLES=5000 explores with that many fresh random examples instead.
_EXPLORE = int(os.environ.get("ENGINE_PROPERTY_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=_EXPLORE or 200,
    deadline=None,
    derandomize=not _EXPLORE,
    # The explain phase traces every line (sys.settrace) and multiplies shrinking time many times.
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------


# Strategies are built once and reused: building one per draw (and hypothesis validating it) was
# most of these tests' time.
@functools.cache
def ints(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


@functools.cache
def pick(values) -> st.SearchStrategy:
    """sampled_from, for a tuple or an enum class."""
    return st.sampled_from(values)


@functools.cache
def chance(one_in: int) -> st.SearchStrategy[bool]:
    """True about once in ``one_in`` draws (shrinks towards False)."""
    return ints(0, one_in - 1).map(lambda value: value == one_in - 1)


BOOLS = st.booleans()
ZONE_SETS = st.lists(pick(ZONES), min_size=1, max_size=2, unique=True)
WAIT_SECONDS = st.one_of(st.none(), ints(10, 300).map(float))


@st.composite
def node_lists(draw) -> list[Node]:
    nodes = []
    for i in range(draw(ints(1, 8))):
        allocatable = {
            "cpu": draw(pick((4000, 8000, 16000))),
            "memory": draw(pick((8, 16, 32))) * GI,
        }
        labels = {"zone": draw(pick(ZONES))}
        taints: list[Taint] = []
        if draw(BOOLS):
            allocatable[GPU] = draw(ints(1, 8))
            labels["gpu-model"] = draw(pick(GPU_MODELS))
            if draw(chance(3)):
                taints.append(GPU_TAINT)
        if draw(BOOLS):  # without ``pods`` a node is not limited by pod count
            allocatable["pods"] = draw(ints(2, 16))
        if draw(chance(8)):
            effect = draw(pick(("NoSchedule", "NoExecute", "PreferNoSchedule")))
            taints.append(Taint("maintenance", "", effect))
        nodes.append(
            Node(
                name=f"node-{i}",
                allocatable=allocatable,
                labels=labels,
                taints=tuple(taints),
                unschedulable=draw(chance(8)),
                ready=not draw(chance(8)),
            )
        )
    return nodes


@st.composite
def constraint_sets(draw) -> dict:
    """node_selector, tolerations and affinity shared by the members of a gang (or a lone pod)."""
    selector: dict[str, str] = {}
    affinity: tuple[NodeSelectorTerm, ...] = ()
    kind = draw(ints(0, 7))
    if kind == 1:
        selector = {"zone": draw(pick(ZONES))}
    elif kind == 2:
        selector = {"gpu-model": draw(pick(GPU_MODELS))}
    elif kind == 3:
        zones = tuple(draw(ZONE_SETS))
        affinity = (NodeSelectorTerm((NodeSelectorRequirement("zone", "In", zones),)),)
    tolerations: tuple[Toleration, ...] = ()
    kind = draw(ints(0, 5))
    if kind == 1:
        tolerations = (Toleration(GPU, "Exists"),)
    elif kind == 2:
        tolerations = (Toleration(operator="Exists"),)  # tolerates everything, cordons included
    return {"node_selector": selector, "tolerations": tolerations, "affinity": affinity}


@st.composite
def request_shapes(draw) -> dict[str, int]:
    return dict(draw(SHAPE_CHOICES))


# One draw per shape (drawing is most of these tests' time): cpu x memory, and one in five with
# GPUs; the first is the smallest, where shrinking goes.
SHAPES = tuple(
    {"cpu": cpu, "memory": memory}
    for cpu in (250, 500, 1000, 2000)
    for memory in (GI // 2, GI, 2 * GI, 4 * GI)
) * 2 + tuple(
    {"cpu": cpu, "memory": memory, GPU: gpus}
    for cpu in (500, 1000)
    for memory in (GI, 2 * GI)
    for gpus in (1, 2)
)
SHAPE_CHOICES = st.sampled_from(SHAPES)
durations = pick((None, 30.0, 60.0, 200.0, 600.0))


class Capacity:
    """What is left on each node while the generator binds and reserves pods (only where it fits)."""

    def __init__(self, nodes: list[Node]) -> None:
        self.nodes = nodes
        self.free = [
            {**node.allocatable, "pods": node.allocatable.get("pods", 1 << 50)} for node in nodes
        ]

    def fits(self, index: int, requests: dict[str, int]) -> bool:
        free = self.free[index]
        return free["pods"] >= 1 and all(free.get(name, 0) >= amount for name, amount in requests.items())

    def take(self, draw, requests: dict[str, int]) -> str | None:
        """A node where ``requests`` fits, scanning from a drawn start; None if it fits nowhere."""
        start = draw(ints(0, len(self.nodes) - 1))
        for offset in range(len(self.nodes)):
            index = (start + offset) % len(self.nodes)
            if self.fits(index, requests):
                free = self.free[index]
                for name, amount in requests.items():
                    free[name] -= amount
                free["pods"] -= 1
                return self.nodes[index].name
        return None


@dataclasses.dataclass
class Scenario:
    snapshot: Snapshot
    now: float
    config: EngineConfig


@st.composite
def snapshots(draw) -> tuple[Snapshot, float]:
    nodes = draw(node_lists())
    capacity = Capacity(nodes)
    now = float(draw(ints(100, 1000)))

    # Gangs first, without pods, so that groups can be drawn and made consistent.
    specs = []
    for g in range(draw(ints(1, 6))):
        namespace = draw(pick(NAMESPACES))
        min_member = draw(ints(1, 6))
        priority = draw(ints(0, 3))
        # What an unsatisfied gang has been through: nothing yet, a running timeout clock, a Soft
        # timeout (its pods now go one by one) or a Hard one (it waits for a retry).
        lifecycle = draw(pick(("fresh",) * 4 + ("waiting", "fallen_back", "timed_out")))
        style = draw(pick(TimeoutStyle))
        if lifecycle == "fallen_back":
            style = TimeoutStyle.SOFT
        wait_started = None
        if lifecycle != "fresh":
            wait_started = now - draw(ints(0, 400))
        shape = draw(request_shapes())
        gang = Gang(
            namespace=namespace,
            name=f"gang-{g}",
            min_member=min_member,
            mode=draw(pick(GangMode)),
            wait_seconds=draw(WAIT_SECONDS),
            style=style,
            created=float(draw(ints(0, 99))),
            priority=draw(pick((None, priority))),
            placement=draw(pick(Placement)),
            preemptible=not draw(chance(5)),
            wait_started=wait_started,
        )
        if draw(chance(6)):
            extra = draw(pick((0, 1000)))
            gang = dataclasses.replace(gang, min_resources={"cpu": min_member * shape["cpu"] + extra})
        specs.append(
            {
                "gang": gang,
                "priority": priority,
                "lifecycle": lifecycle,
                "satisfied": draw(ints(0, 4)) < 2,
                "members": min_member + draw(ints(0, 2)) - (1 if draw(chance(8)) else 0),
                "shapes": [shape] + ([draw(request_shapes())] if draw(chance(3)) else []),
                "constraints": draw(constraint_sets()),
            }
        )

    groups: list[GangGroup] = []
    free = list(range(len(specs)))
    while len(free) >= 2 and len(groups) < 2 and draw(BOOLS):
        a = free.pop(draw(ints(0, len(free) - 1)))
        b = free.pop(draw(ints(0, len(free) - 1)))
        first = specs[a]["gang"]
        key = f"{first.namespace}/group-{len(groups)}"
        members = [specs[a]["gang"].key, specs[b]["gang"].key]
        ghost = draw(chance(5))
        if ghost:  # a member whose gang is not declared yet holds the whole group back
            members.append(f"{draw(pick(NAMESPACES))}/ghost-{len(groups)}")
        groups.append(GangGroup(key, tuple(members)))
        satisfied = specs[a]["satisfied"] and not ghost
        for index in (a, b):
            specs[index]["satisfied"] = satisfied
            specs[index]["gang"] = dataclasses.replace(specs[index]["gang"], group=key)

    running_pods: list[Pod] = []
    pending_pods: list[Pod] = []
    gangs: list[Gang] = []
    for spec in specs:
        gang: Gang = spec["gang"]
        duration = draw(durations)  # the members of a gang share a template
        members = [
            Pod(
                namespace=gang.namespace,
                name=f"{gang.name}-{j}",
                requests=dict(spec["shapes"][j % len(spec["shapes"])]),
                priority=spec["priority"],
                created=gang.created,
                gang=gang.key,
                duration=duration,
                preemptible=gang.preemptible,
                **spec["constraints"],
            )
            for j in range(max(spec["members"], 0))
        ]
        satisfied = spec["satisfied"] and len(members) >= gang.min_member
        bound: list[Pod] = []
        if satisfied:  # at least min_member members run; the rest are replacements still pending
            count = draw(ints(gang.min_member, len(members)))
            snapshot_of_capacity = copy.deepcopy(capacity.free)
            started = float(now - draw(ints(0, 300)))  # bound together
            for pod in members[:count]:
                node = capacity.take(draw, dict(pod.requests))
                if node is None:
                    break
                bound.append(dataclasses.replace(pod, node=node, started=started))
            if len(bound) < count:  # did not fit: the gang is not running after all
                capacity.free = snapshot_of_capacity
                bound = []
                satisfied = False
        pending = members[len(bound) :]
        mode_non_strict = gang.mode == GangMode.NON_STRICT
        if not satisfied and mode_non_strict:  # NonStrict: some members hold partial reservations
            pending = [
                dataclasses.replace(pod, reserved_node=capacity.take(draw, dict(pod.requests)))
                if draw(chance(3))
                else pod
                for pod in pending
            ]
        lifecycle = "running" if satisfied else spec["lifecycle"]
        phase = {
            "running": GangPhase.RUNNING,
            "fresh": GangPhase.PENDING,
            "waiting": GangPhase.SCHEDULING,
            "fallen_back": GangPhase.SCHEDULING,
            "timed_out": GangPhase.TIMED_OUT,
        }[lifecycle]
        gangs.append(
            dataclasses.replace(
                gang,
                satisfied=satisfied,
                phase=phase,
                fallen_back=lifecycle == "fallen_back",
                wait_started=None if satisfied else gang.wait_started,
            )
        )
        running_pods.extend(bound)
        pending_pods.extend(pending)

    # Lone running pods (plain pods, another scheduler's); a busy cluster is full of low-priority ones,
    # which is where preemption has work to do.
    busy = draw(chance(3))
    for k in range(draw(ints(4, 24) if busy else ints(0, 6))):
        requests = draw(request_shapes())
        node = capacity.take(draw, requests)
        if node is None:
            continue
        # mostly plain; some not preemptible, some already being deleted
        kind = draw(pick(("plain",) * 6 + ("pinned", "terminating")))
        running_pods.append(
            Pod(
                namespace=NAMESPACES[k % 2],
                name=f"run-{k}",
                requests=requests,
                priority=draw(ints(0, 1 if busy else 3)),
                created=float(k),
                node=node,
                started=float(now - draw(ints(0, 300))),
                duration=draw(durations),
                preemptible=kind != "pinned",
                terminating=kind == "terminating",
            )
        )
    for k in range(draw(ints(0, 4))):  # lone pending pods
        pending_pods.append(
            Pod(
                namespace=NAMESPACES[k % 2],
                name=f"lone-{k}",
                requests=draw(request_shapes()),
                priority=draw(ints(0, 3)),
                created=float(draw(ints(0, 99))),
                duration=draw(durations),
                **draw(constraint_sets()),
            )
        )
    for k in range(draw(ints(0, 2))):  # provisional pods: their gang is not declared yet
        namespace = draw(pick(NAMESPACES))
        pending_pods.append(
            Pod(
                namespace=namespace,
                name=f"provisional-{k}",
                requests=draw(request_shapes()),
                priority=draw(ints(0, 3)),
                gang=f"{namespace}/undeclared-{k}",
            )
        )
    snapshot = Snapshot(
        nodes=tuple(nodes),
        pods=tuple(running_pods + pending_pods),
        gangs=tuple(gangs),
        gang_groups=tuple(groups),
    )
    return snapshot, now


configs = st.one_of(
    st.just(EngineConfig()),
    st.builds(
        EngineConfig,
        head_of_line=st.sampled_from(HeadOfLine),
        preemption=st.booleans(),
        deadlock_resolution=st.booleans(),
        timeouts=st.booleans(),
        gangs=st.just(True),
        force_mode=st.sampled_from((None, GangMode.STRICT, GangMode.NON_STRICT)),
        permit_hold=st.sampled_from((0.0, 0.1, 0.5)),
    ),
)


@st.composite
def scenarios(draw, config_strategy=configs) -> Scenario:
    snapshot, now = draw(snapshots())
    return Scenario(snapshot, now, draw(config_strategy))


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def overcommitted(snapshot: Snapshot) -> list[str]:
    """Every (node, resource) where bound pods plus held reservations exceed allocatable."""
    used: dict[str, Counter] = defaultdict(Counter)
    for pod in snapshot.pods:
        where = pod.node if pod.node is not None else (pod.reserved_node if pod.pending else None)
        if where is None:
            continue
        used[where].update(pod.requests)
        used[where]["pods"] += 1
    problems = []
    for node in snapshot.nodes:
        for resource, amount in used[node.name].items():
            if resource == "pods" and "pods" not in node.allocatable:
                continue
            allocatable = node.allocatable.get(resource, 0)
            if amount > allocatable:
                problems.append(f"{node.name} {resource}: {amount} > {allocatable}")
    return problems


def advance(snapshot: Snapshot, now: float) -> Snapshot:
    """Pods whose declared duration has elapsed complete and leave the snapshot."""
    pods = tuple(
        pod
        for pod in snapshot.pods
        if not (pod.node is not None and pod.started is not None and pod.duration is not None
                and pod.started + pod.duration <= now)
    )
    return dataclasses.replace(snapshot, pods=pods)


def trajectory(scenario: Scenario, cycles: int, step: float = 37.0):
    """Yield (snapshot before, result, snapshot after, now) for consecutive cycles."""
    snapshot, now = scenario.snapshot, scenario.now
    for _ in range(cycles):
        result = run_cycle(snapshot, now, scenario.config)
        after = apply_result(snapshot, result, now)
        yield snapshot, result, after, now
        now += step
        snapshot = advance(after, now)


def gang_priority(snapshot: Snapshot, gang: Gang) -> int:
    if gang.priority is not None:
        return gang.priority
    return max((pod.priority for pod in snapshot.pods if pod.gang == gang.key), default=0)


def satisfied_now(result, key: str) -> bool:
    return TransitionKind.SATISFIED in result.transitions_of(key)


def fell_back(gang: Gang, result) -> bool:
    return gang.fallen_back or TransitionKind.FELL_BACK in result.transitions_of(gang.key)


def check_binds_sane(before: Snapshot, result) -> None:
    pods = {pod.key: pod for pod in before.pods}
    nodes = {node.name: node for node in before.nodes}
    counts = Counter(bind.pod for bind in result.binds)
    assert not [key for key, n in counts.items() if n > 1], f"pods bound twice in one cycle: {counts}"
    for bind in result.binds:
        assert bind.pod in pods and pods[bind.pod].pending, f"{bind} is not a pending pod"
        assert bind.node in nodes and nodes[bind.node].ready, f"{bind} is not on a ready node"


# --------------------------------------------------------------------------------------------
# Minimal examples of failures hypothesis found, replayed first by the tests they broke
# (all fixed in the engine by 6b9056a; kept as regressions)
# --------------------------------------------------------------------------------------------


def _scenario(nodes, pods, gangs, groups=(), now: float = 100.0, config=None) -> Scenario:
    snapshot = Snapshot(tuple(nodes), tuple(pods), tuple(gangs), tuple(groups))
    return Scenario(snapshot, now, config or EngineConfig())


# A Soft gang that fell back stayed part of its gang group's unit while its pods were also lone
# units: the group bound ns/a-0, then its lone unit bound it a second time.
FALLEN_BACK_IN_GROUP = _scenario(
    nodes=[Node("node-0", {"cpu": 2000})],
    pods=[
        Pod("ns", "a-0", {"cpu": 250}, gang="ns/a", created=1.0),
        Pod("ns", "b-0", {"cpu": 250}, gang="ns/b"),
    ],
    gangs=[
        Gang("ns", "a", 1, style=TimeoutStyle.SOFT, group="ns/group", wait_started=0.0,
             phase=GangPhase.SCHEDULING, fallen_back=True),
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
        Gang("ns", "a", 1, style=TimeoutStyle.SOFT, group="ns/group", wait_started=0.0,
             phase=GangPhase.SCHEDULING, fallen_back=True),
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
        Gang("ns", "a", 1, mode=GangMode.NON_STRICT, style=TimeoutStyle.SOFT, group="ns/group",
             wait_started=0.0, phase=GangPhase.SCHEDULING, fallen_back=True),
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
                    if pod.gang == gang.key and pod.node is not None
                    and not pod.terminating and pod.key not in evicted
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


@SETTINGS
@given(scenarios())
def test_preemption_evicts_whole_lower_priority_gangs(scenario: Scenario) -> None:
    for before, result, _after, _now in trajectory(scenario, cycles=3):
        if not result.evictions:
            continue
        pods = {pod.key: pod for pod in before.pods}
        gangs = {gang.key: gang for gang in before.gangs}
        groups = {group.key: group for group in before.gang_groups}
        evicted = {evict.pod for evict in result.evictions}
        assert len(evicted) == len(result.evictions), "a pod evicted twice"
        for evict in result.evictions:
            pod = pods.get(evict.pod)
            assert pod is not None and pod.node == evict.node and not pod.terminating, (
                f"{evict} is not a running pod"
            )
            assert pod.preemptible, f"{evict}: the pod is not preemptible"
            preemptor = _preemptor_priority(before, evict.reason)
            gang = gangs.get(pod.gang) if pod.gang is not None else None
            if gang is None:
                assert pod.priority < preemptor, f"{evict}: priority {pod.priority} >= {preemptor}"
                continue
            group = groups.get(gang.group) if gang.group is not None else None
            whole = [gangs[key] for key in (group.members if group else (gang.key,)) if key in gangs]
            for member in whole:
                assert member.preemptible, f"{evict}: gang {member.key} is not preemptible"
                running = [
                    p.key
                    for p in before.pods
                    if p.gang == member.key and p.node is not None and not p.terminating
                ]
                missed = [key for key in running if key not in evicted]
                assert not missed, f"{evict}: running members {missed} of {member.key} are not evicted"
                assert TransitionKind.PREEMPTED in result.transitions_of(member.key)
            priority = max(gang_priority(before, member) for member in whole)
            assert priority < preemptor, f"{evict}: victim priority {priority} >= preemptor's {preemptor}"


@SETTINGS
@given(scenarios())
def test_preempted_gang_binds_nothing_in_the_same_cycle(scenario: Scenario) -> None:
    """Whole-gang eviction: no member of a gang evicted in a cycle is bound in that cycle, or
    the next snapshot runs a part of a gang that is no longer satisfied."""
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


_PREEMPTED_BY = re.compile(r"preempted by (\S+) \(priority")


def _preemptor_priority(snapshot: Snapshot, reason: str) -> int:
    """The priority of the unit named in an Evict reason, computed from the snapshot."""
    match = _PREEMPTED_BY.search(reason)
    assert match, f"eviction reason does not name the preemptor: {reason!r}"
    key = match.group(1)
    gangs = {gang.key: gang for gang in snapshot.gangs}
    groups = {group.key: group for group in snapshot.gang_groups}
    if key in groups:
        return max(gang_priority(snapshot, gangs[k]) for k in groups[key].members if k in gangs)
    if key in gangs:
        return gang_priority(snapshot, gangs[key])
    pods = {pod.key: pod for pod in snapshot.pods}
    assert key in pods, f"unknown preemptor {key}"
    return pods[key].priority
