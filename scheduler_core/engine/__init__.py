"""gangsched's scheduling engine: plain data in, plain decisions out, no Django, no cluster.

    result = run_cycle(snapshot, now, config)      # decide
    snapshot = apply_result(snapshot, result, now)  # what the next cycle will see

See ``model.py`` for the snapshot, ``decisions.py`` for the result and ``cycle.py`` for the order
of the actions.

Imports numpy and the standard library only: nothing of Django, nothing else of scheduler_core.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .apply import apply_result
    from .carry import Carry
    from .config import EngineConfig, HeadOfLine
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
        Gang,
        GangGroup,
        GangMode,
        GangPhase,
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

#: Each name this package offers -> the module that defines it. Imported on first use
#: (``__getattr__``), not with the package: the modules below need numpy, and whatever imports
#: one small module of the engine (``quantity``, ``model``: the settings, ``manage.py get``)
#: would otherwise load all of them.
_WHERE = {
    "apply_result": "apply",
    "Carry": "carry",
    "run_cycle": "cycle",
    "sweep_timeouts": "cycle",
    "Bind": "decisions",
    "CycleResult": "decisions",
    "Evict": "decisions",
    "Explanation": "decisions",
    "Reason": "decisions",
    "Release": "decisions",
    "Reserve": "decisions",
    "Transition": "decisions",
    "TransitionKind": "decisions",
    "EngineConfig": "config",
    "Gang": "model",
    "GangGroup": "model",
    "GangMode": "model",
    "GangPhase": "model",
    "HeadOfLine": "config",
    "MatchPolicy": "model",
    "Node": "model",
    "NodeSelectorRequirement": "model",
    "NodeSelectorTerm": "model",
    "Placement": "model",
    "Pod": "model",
    "Queue": "model",
    "Snapshot": "model",
    "Taint": "model",
    "TimeoutStyle": "model",
    "Toleration": "model",
    "Topology": "model",
    "TopologyConstraint": "model",
}


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


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
