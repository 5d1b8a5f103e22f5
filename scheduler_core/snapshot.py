"""From database rows to the engine's Snapshot, and the JSON <-> engine dataclass conversions.

Conventions at this boundary:
- datetimes become float seconds since the epoch (``to_epoch``), None stays None;
- JSON fields keep Kubernetes' spelling (``matchExpressions``); the engine's dataclasses use
  Python names (``match_expressions``); ``*_from_json`` / ``*_to_json`` convert, and
  ``x_from_json(x_to_json(v)) == v`` for every engine value (tests/service/test_snapshot.py);
- the snapshot is deterministic: nodes, pods and gangs are ordered by name, so two builds over
  the same rows are equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from django.db.models import Q

from scheduler_core.engine import model as engine
from scheduler_core.engine.model import GangMode, GangPhase, Placement, TimeoutStyle
from scheduler_core.models import Gang, GangGroup, Member, Node
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES

#: Gang phases after which a gang is history, not work: the snapshot leaves such a gang out
#: unless it still has pods that hold capacity (then the engine needs it to account for them).
#: TimedOut is not here: a timed-out gang still shows up so the engine can explain it.
DONE_PHASES = (GangPhase.FINISHED.value, GangPhase.FAILED.value, GangPhase.KILLED.value)


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


def _ints(data: Mapping[str, Any]) -> dict[str, int]:
    return {name: int(amount) for name, amount in data.items()}


# ---------------------------------------------------------------- rows -> engine objects


def node_to_engine(node: Node) -> engine.Node:
    return engine.Node(
        name=node.name,
        allocatable=_ints(node.allocatable),
        labels=dict(node.labels),
        taints=tuple(taint_from_json(t) for t in node.taints),
        unschedulable=node.unschedulable,
        ready=node.ready,
    )


def member_to_engine(member: Member, gang_key: str | None) -> engine.Pod:
    return engine.Pod(
        namespace=member.namespace,
        name=member.name,
        requests=_ints(member.requests),
        priority=member.priority,
        created=member.created.timestamp(),
        gang=gang_key,
        node=member.node or None,
        reserved_node=member.reserved_node or None,
        node_selector=dict(member.node_selector),
        tolerations=tuple(toleration_from_json(t) for t in member.tolerations),
        affinity=tuple(term_from_json(t) for t in member.affinity),
        started=to_epoch(member.started_at),
        duration=member.duration_seconds,
        preemptible=member.preemptible,
        terminating=member.terminating,
    )


def gang_to_engine(gang: Gang, group_key: str | None) -> engine.Gang:
    return engine.Gang(
        namespace=gang.namespace,
        name=gang.name,
        min_member=gang.min_member,
        min_resources=_ints(gang.min_resources),
        total_number=gang.total_number,
        mode=GangMode(gang.mode),
        wait_seconds=gang.wait_seconds,
        style=TimeoutStyle(gang.style),
        group=group_key,
        created=gang.created.timestamp(),
        phase=GangPhase(gang.phase),
        priority=gang.priority,
        placement=Placement(gang.placement),
        preemptible=gang.preemptible,
        queue=gang.queue,
        satisfied=gang.satisfied,
        wait_started=to_epoch(gang.wait_started),
        fallen_back=gang.fallen_back,
    )


def group_to_engine(group: GangGroup) -> engine.GangGroup:
    return engine.GangGroup(key=group.key, members=tuple(group.members))


# ---------------------------------------------------------------- the snapshot


def build_snapshot() -> engine.Snapshot:
    """The cluster and its work as the engine sees it, read in four queries.

    Pods: every member that holds or wants capacity (Pending, Running). Gangs: every gang not
    done, plus done gangs that still have such pods. Groups and nodes: all of them. Call it inside
    a REPEATABLE READ transaction (or accept that rows may move between the queries).
    """
    gangs = list(
        Gang.objects.filter(~Q(phase__in=DONE_PHASES) | Q(members__phase__in=ACTIVE_MEMBER_PHASES))
        .select_related("group")
        .distinct()
        .order_by("namespace", "name")
    )
    # The gang key comes from the member's own join, not from the gang list above: a pod must
    # never lose its gang (and be scheduled alone) because the rows moved between two queries.
    members = Member.objects.filter(phase__in=ACTIVE_MEMBER_PHASES).select_related("gang")
    pods = [
        member_to_engine(member, member.gang.key if member.gang else None)
        for member in members.order_by("namespace", "name")
    ]
    return engine.Snapshot(
        nodes=tuple(node_to_engine(node) for node in Node.objects.order_by("name")),
        pods=tuple(pods),
        gangs=tuple(gang_to_engine(gang, gang.group.key if gang.group else None) for gang in gangs),
        gang_groups=tuple(group_to_engine(group) for group in GangGroup.objects.order_by("key")),
    )
