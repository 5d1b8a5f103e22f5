"""The API's reads: which gangs a user may see, and the cluster figures the API reports.

Visibility is decided here once (``gang_visible``), and every gang read of the API starts from it,
so a list, a detail page and an event feed can never disagree about who sees what.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from django.db.models import Count, Q, QuerySet
from django.http import Http404

from scheduler_core.models import Gang, GangEvent, Member, Node
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES

from .permissions import sees_all_gangs

HISTORY_LIMIT = 50


def gang_visible(*, user) -> QuerySet[Gang]:
    """Every gang for users with ``view_gang`` (operators), otherwise the user's own."""
    gangs = Gang.objects.select_related("group")
    if sees_all_gangs(user):
        return gangs
    return gangs.filter(submitter=user.get_username())


def gang_get(*, user, namespace: str, name: str) -> Gang:
    """The gang, or 404 when it does not exist *or* the user may not see it (same answer)."""
    gang = gang_visible(user=user).filter(namespace=namespace, name=name).first()
    if gang is None:
        raise Http404(f"gang {namespace}/{name} not found")
    return gang


def gang_progress(*, gang: Gang) -> dict[str, int]:
    """Members bound / reserved / pending (active pods) and done, against minMember."""
    counts = gang.members.aggregate(
        total=Count("id"),
        bound=Count("id", filter=Q(node__isnull=False, phase__in=ACTIVE_MEMBER_PHASES)),
        reserved=Count("id", filter=Q(reserved_node__isnull=False, phase__in=ACTIVE_MEMBER_PHASES)),
        pending=Count("id", filter=Q(node__isnull=True, phase__in=ACTIVE_MEMBER_PHASES)),
    )
    return {**counts, "minMember": gang.min_member}


def gang_group_progress(*, gang: Gang) -> list[dict]:
    """For a gang in a gang group: each listed gang, whether it is submitted, its phase and its
    bound members against its minMember (a listed gang not submitted holds the group back)."""
    if gang.group is None:
        return []
    keys = list(gang.group.members)
    rows = {
        f"{ns}/{name}": (phase, min_member, bound)
        for ns, name, phase, min_member, bound in Gang.objects.filter(group=gang.group)
        .annotate(bound=Count("members", filter=Q(members__node__isnull=False)))
        .values_list("namespace", "name", "phase", "min_member", "bound")
    }
    progress = []
    for key in keys + sorted(set(rows) - set(keys)):
        phase, min_member, bound = rows.get(key, (None, None, 0))
        progress.append(
            {"gang": key, "submitted": key in rows, "phase": phase, "minMember": min_member, "bound": bound}
        )
    return progress


def gang_history(*, gang: Gang, limit: int = HISTORY_LIMIT) -> list[GangEvent]:
    """The gang's latest events, oldest first."""
    latest = GangEvent.objects.filter(gang=gang).select_related("gang").order_by("-created", "-id")[:limit]
    return list(reversed(latest))


def event_visible(*, user) -> QuerySet[GangEvent]:
    events = GangEvent.objects.select_related("gang").order_by("-created", "-id")
    if sees_all_gangs(user):
        return events
    return events.filter(gang__submitter=user.get_username())


def node_usage() -> list[dict]:
    """Every node with what its bound active pods request (``used``) and how many there are.

    Requests are JSON objects, summed here rather than in SQL: a cluster has few distinct
    request shapes, and this stays one query over the active pods.
    """
    used: dict[str, Counter] = defaultdict(Counter)
    pods: Counter = Counter()
    bound = Member.objects.filter(node__isnull=False, phase__in=ACTIVE_MEMBER_PHASES)
    for node, requests in bound.values_list("node", "requests"):
        used[node].update(requests or {})
        pods[node] += 1
    return [
        {
            "name": node.name,
            "allocatable": node.allocatable,
            "used": dict(used.get(node.name, {})),
            "pods": pods.get(node.name, 0),
            "labels": node.labels,
            "taints": node.taints,
            "unschedulable": node.unschedulable,
            "ready": node.ready,
        }
        for node in Node.objects.order_by("name")
    ]


def cluster_summary() -> dict:
    """Capacity (schedulable nodes: ready and not cordoned), used and free per resource, and the
    number of gangs in each phase. Used counts every bound active pod, wherever it runs."""
    nodes = node_usage()
    capacity, used = Counter(), Counter()
    for node in nodes:
        if node["ready"] and not node["unschedulable"]:
            capacity.update(node["allocatable"])
        used.update(node["used"])
    resources = sorted(set(capacity) | set(used))
    phases = dict(
        Gang.objects.order_by().values_list("phase").annotate(n=Count("id")).values_list("phase", "n")
    )
    return {
        "nodes": {
            "total": len(nodes),
            "ready": sum(1 for n in nodes if n["ready"]),
            "schedulable": sum(1 for n in nodes if n["ready"] and not n["unschedulable"]),
        },
        "resources": {
            r: {"capacity": capacity[r], "used": used[r], "free": max(capacity[r] - used[r], 0)}
            for r in resources
        },
        "gangsByPhase": phases,
        "pods": sum(n["pods"] for n in nodes),
    }
