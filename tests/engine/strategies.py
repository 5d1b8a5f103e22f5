"""Random small clusters for the engine's property tests (hypothesis): nodes, gangs, groups, pods.

``scenarios()`` draws a valid snapshot (no node over-committed, unique pod keys, gangs consistent
with their groups), a ``now`` and an engine configuration; ``SETTINGS`` are the tests' shared
hypothesis settings.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import os

from hypothesis import HealthCheck, Phase, settings
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
)

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
        self.free = [{**node.allocatable, "pods": node.allocatable.get("pods", 1 << 50)} for node in nodes]

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
