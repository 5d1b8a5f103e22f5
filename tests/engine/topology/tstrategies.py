"""Random small clusters with racks and blocks, and gangs with topology constraints (hypothesis).

``topology_scenarios()`` draws a scenario of ``tests/engine/strategies.py`` (every kind of gang,
group, reservation and configuration the engine's other properties are checked on), then labels
its nodes with a block and a rack (now and then a node lacks one) and gives most gangs a
constraint: required or preferred rack or block, required block with preferred rack, an
exclusive rack or block, or (rarely) a level no topology has.
"""

from __future__ import annotations

import dataclasses

from hypothesis import strategies as st

from scheduler_core.engine import TopologyConstraint

from ..strategies import Scenario, chance, configs, pick, scenarios
from .tworld import BLOCK, RACK, TOPOLOGY

CONSTRAINTS = (
    None,
    None,
    TopologyConstraint(required=RACK),
    TopologyConstraint(required=RACK),
    TopologyConstraint(required=BLOCK),
    TopologyConstraint(preferred=RACK),
    TopologyConstraint(preferred=RACK),
    TopologyConstraint(preferred=BLOCK),
    TopologyConstraint(required=BLOCK, preferred=RACK),
    TopologyConstraint(required="example.com/unknown"),
    TopologyConstraint(required=RACK, exclusive=True),
    TopologyConstraint(required=RACK, exclusive=True),
    TopologyConstraint(required=BLOCK, exclusive=True),
)


@st.composite
def topology_scenarios(draw, config_strategy=configs) -> Scenario:
    base = draw(scenarios(config_strategy))
    nodes = []
    for node in base.snapshot.nodes:
        labels = dict(node.labels)
        if not draw(chance(12)):
            labels[BLOCK] = draw(pick(("b0", "b1")))
        if not draw(chance(12)):
            labels[RACK] = draw(pick(("r0", "r1", "r2")))
        nodes.append(dataclasses.replace(node, labels=labels))
    gangs = tuple(dataclasses.replace(gang, topology=draw(pick(CONSTRAINTS))) for gang in base.snapshot.gangs)
    snapshot = dataclasses.replace(base.snapshot, nodes=tuple(nodes), gangs=gangs, topologies=(TOPOLOGY,))
    return Scenario(snapshot, base.now, base.config)


def level_path(labels, level: str) -> tuple | None:
    """A node's domain at ``level`` as the engine names it: the label values from the widest
    level down to ``level``; None when the node lacks ``level``'s label."""
    depth = TOPOLOGY.levels.index(level)
    if labels.get(level) is None:
        return None
    return tuple(labels.get(key) for key in TOPOLOGY.levels[: depth + 1])


PREFERENCES = (
    TopologyConstraint(preferred=RACK),
    TopologyConstraint(preferred=BLOCK),
    TopologyConstraint(required=BLOCK, preferred=RACK),
)


@st.composite
def preferred_scenarios(draw) -> Scenario:
    """Fully labelled racks and blocks, lone pods already running here and there, and a few
    pending gangs of one shape each with a preferred level: what property 2 needs, often."""
    from scheduler_core.engine import EngineConfig, Gang, HeadOfLine, Node, Pod, Snapshot

    from ..strategies import GI, ints

    nodes = []
    for i in range(draw(ints(2, 10))):
        labels = {BLOCK: draw(pick(("b0", "b1"))), RACK: draw(pick(("r0", "r1", "r2")))}
        nodes.append(Node(f"node-{i}", {"cpu": draw(pick((4000, 8000))), "memory": 32 * GI}, labels))
    pods, free = [], {node.name: node.allocatable["cpu"] for node in nodes}
    for i in range(draw(ints(0, 8))):
        where = draw(pick(tuple(free)))
        cpu = draw(pick((1000, 2000, 3000)))
        if free[where] >= cpu:
            free[where] -= cpu
            pods.append(Pod("busy", f"p{i}", {"cpu": cpu}, node=where, started=0.0))
    gangs = []
    for g in range(draw(ints(1, 4))):
        size = draw(ints(1, 6))
        cpu = draw(pick((1000, 2000, 4000)))
        key = f"team/g{g}"
        gangs.append(
            Gang("team", f"g{g}", size, created=float(draw(ints(0, 5))), topology=draw(pick(PREFERENCES)))
        )
        pods.extend(Pod("team", f"g{g}-{j}", {"cpu": cpu}, gang=key) for j in range(size))
    config = EngineConfig(head_of_line=HeadOfLine.NONE)
    return Scenario(Snapshot(tuple(nodes), tuple(pods), tuple(gangs), topologies=(TOPOLOGY,)), 100.0, config)
