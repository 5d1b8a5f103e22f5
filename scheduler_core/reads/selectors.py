"""Reads: queries the commands, the REST API and the pages share (``<noun>_<verb>``, keyword-only
where it helps). Nothing here writes."""

from __future__ import annotations

import math

from django.conf import settings
from django.db.models import Count, Max, Q, QuerySet
from django.db.models.functions import Coalesce

from scheduler_core.engine.queue import declared_work
from scheduler_core.models import Gang, GangEvent, Member, Node
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES
from scheduler_core.reads.node_usage import usage_by_node


def gang_list(*, namespace: str | None = None, phase: str | None = None) -> QuerySet[Gang]:
    """Gangs in creation order, with ``members_count``, ``bound_count`` and ``owner`` (the object
    that made its pods, ``kind.group/name`` as its pods' ``owner``; empty for bare pods and
    gangs of the API) annotated, in the one aggregate query."""
    gangs = Gang.objects.select_related("group").annotate(
        members_count=Count("members"),
        bound_count=Count("members", filter=Q(members__node__isnull=False)),
        owner=Max("members__owner"),
    )
    if namespace:
        gangs = gangs.filter(namespace=namespace)
    if phase:
        gangs = gangs.filter(phase=phase)
    return gangs.order_by("namespace", "name")


def gang_get(namespace: str, name: str) -> Gang:
    """The gang, or Gang.DoesNotExist."""
    return Gang.objects.select_related("group").get(namespace=namespace, name=name)


def gang_state(gang: Gang) -> str:
    """The phase, or ``Provisional`` for a gang whose declaration has not arrived."""
    return "Provisional" if gang.provisional else gang.phase


def gang_progress(gang: Gang) -> dict[str, int]:
    """Members in all, bound, reserved and pending (active pods), against min_member."""
    counts = gang.members.aggregate(
        members=Count("id"),
        bound=Count("id", filter=Q(node__isnull=False)),
        reserved=Count("id", filter=Q(reserved_node__isnull=False, phase__in=ACTIVE_MEMBER_PHASES)),
        pending=Count("id", filter=Q(node__isnull=True, phase__in=ACTIVE_MEMBER_PHASES)),
    )
    return {**counts, "min_member": gang.min_member}


def gang_group_progress(gang: Gang) -> list[dict]:
    """Each gang of the gang's group (listed ones not submitted yet too): bound vs min_member."""
    if gang.group is None:
        return []
    rows = {
        row["key"]: row
        for row in (
            {"key": g.key, "state": gang_state(g), "min_member": g.min_member, "bound": g.bound_count}
            for g in gang_list().filter(group=gang.group)
        )
    }
    keys = list(gang.group.members) + sorted(set(rows) - set(gang.group.members))
    return [
        rows.get(key, {"key": key, "state": "NotSubmitted", "min_member": None, "bound": 0}) for key in keys
    ]


def gang_queue_rank(gang: Gang) -> dict:
    """How least-work-first places the gang (engine/queue.py), for the gang page.

    ``work``: device-seconds its unit is expected to take (GPUs, else CPU cores, x a pod's declared
    duration, else its gang's runtime estimate, over the active members of the gang and of its
    gang group), None when a member has neither;
    ``shift_s``: how much later than its creation it is queued (at most ``limit_s``); a limit of
    0 is FIFO. The engine computes the same from the snapshot; this is its explanation.
    """
    limit = settings.GANGSCHED_OVERTAKE_LIMIT_S
    gangs = Gang.objects.filter(group=gang.group) if gang.group is not None else [gang]
    members = Member.objects.filter(gang__in=gangs, phase__in=ACTIVE_MEMBER_PHASES)
    # A pod's own declared duration, else its gang's estimate: what the snapshot gives the engine.
    work = declared_work(
        members.values_list("requests", Coalesce("duration_seconds", "gang__runtime_estimate_s"))
    )
    shift = min(limit, work) if limit > 0 else 0.0
    return {
        "limit_s": limit,
        "work": None if math.isinf(work) else work,
        "shift_s": shift,
        "capped": limit > 0 and math.isfinite(work) and work > limit,
    }


def gang_members(gang: Gang) -> QuerySet[Member]:
    return gang.members.order_by("name")


def gang_events(gang: Gang, *, limit: int = 10) -> list[GangEvent]:
    """The latest ``limit`` history events, oldest first."""
    return list(reversed(gang.events.order_by("-created", "-id")[:limit]))


def pod_list(*, namespace: str | None = None) -> QuerySet[Member]:
    """Pods (members of a gang or on their own) by namespace and name, with their gang."""
    pods = Member.objects.select_related("gang")
    if namespace:
        pods = pods.filter(namespace=namespace)
    return pods.order_by("namespace", "name")


def node_usage() -> list[dict]:
    """Each node with what its active pods request (``used``, canonical units, plus ``pods``),
    the number of those pods, and its allocatable, labels, taints, cordon and ready state. The
    use is the one the database keeps per node (``scheduler_core.reads.node_usage``), not a scan of
    the members."""
    used = usage_by_node()
    nodes = Node.objects.order_by("name")
    return [{"node": node, "used": {"pods": 0, **used.get(node.name, {})}} for node in nodes]
