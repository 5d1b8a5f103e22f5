"""JSON <-> engine dataclasses, and times, as the database stores the engine's values.

- datetimes become float seconds since the epoch (``to_epoch``), None stays None;
- JSON fields keep Kubernetes' spelling (``matchExpressions``); the engine's dataclasses use
  Python names (``match_expressions``); ``*_from_json`` / ``*_to_json`` convert, and
  ``x_from_json(x_to_json(v)) == v`` for every engine value (tests/service/test_snapshot.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from scheduler_core.engine import model as engine

# ---------------------------------------------------------------- times


def to_epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def from_epoch(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)


# ---------------------------------------------------------------- JSON <-> engine dataclasses


def taint_from_json(data: Mapping[str, Any]) -> engine.Taint:
    return engine.Taint(key=data["key"], value=data.get("value", ""), effect=data.get("effect", "NoSchedule"))


def taint_to_json(taint: engine.Taint) -> dict[str, str]:
    return {"key": taint.key, "value": taint.value, "effect": taint.effect}


def toleration_from_json(data: Mapping[str, Any]) -> engine.Toleration:
    return engine.Toleration(
        key=data.get("key", ""),
        operator=data.get("operator", "Equal"),
        value=data.get("value", ""),
        effect=data.get("effect", ""),
    )


def toleration_to_json(toleration: engine.Toleration) -> dict[str, str]:
    return {
        "key": toleration.key,
        "operator": toleration.operator,
        "value": toleration.value,
        "effect": toleration.effect,
    }


def term_from_json(data: Mapping[str, Any]) -> engine.NodeSelectorTerm:
    return engine.NodeSelectorTerm(
        match_expressions=tuple(
            engine.NodeSelectorRequirement(
                key=requirement["key"],
                operator=requirement["operator"],
                values=tuple(requirement.get("values", ())),
            )
            for requirement in data.get("matchExpressions", ())
        )
    )


def term_to_json(term: engine.NodeSelectorTerm) -> dict[str, Any]:
    return {
        "matchExpressions": [
            {"key": r.key, "operator": r.operator, "values": list(r.values)} for r in term.match_expressions
        ]
    }


def ints(data: Mapping[str, Any]) -> dict[str, int]:
    return {name: int(amount) for name, amount in data.items()}
