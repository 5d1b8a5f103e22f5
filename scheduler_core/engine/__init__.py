"""gangsched's scheduling engine: plain data in, plain decisions out, no Django, no cluster.

    result = run_cycle(snapshot, now, config)      # decide
    snapshot = apply_result(snapshot, result, now)  # what the next cycle will see

See ``model.py`` for the snapshot, ``decisions.py`` for the result and ``cycle.py`` for the order
of the actions.

Imports numpy and the standard library only: nothing of Django, nothing else of scheduler_core.
"""

from .apply import apply_result
from .carry import Carry
from .cycle import run_cycle, sweep_timeouts
from .decisions import (
    Bind,
    CycleResult,
    Evict,
    Explanation,
    Reason,
    Release,
    Reserve,
    Transition,
    TransitionKind,
)
from .model import (
    EngineConfig,
    Gang,
    GangGroup,
    GangMode,
    GangPhase,
    HeadOfLine,
    MatchPolicy,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Placement,
    Pod,
    Queue,
    Snapshot,
    Taint,
    TimeoutStyle,
    Toleration,
    Topology,
    TopologyConstraint,
)

__all__ = [
    "Carry",
    "Bind",
    "CycleResult",
    "EngineConfig",
    "Evict",
    "Explanation",
    "Gang",
    "GangGroup",
    "GangMode",
    "GangPhase",
    "HeadOfLine",
    "MatchPolicy",
    "Node",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "Placement",
    "Pod",
    "Queue",
    "Reason",
    "Release",
    "Reserve",
    "Snapshot",
    "Taint",
    "TimeoutStyle",
    "Toleration",
    "Topology",
    "TopologyConstraint",
    "Transition",
    "TransitionKind",
    "apply_result",
    "run_cycle",
    "sweep_timeouts",
]
