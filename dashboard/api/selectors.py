"""The API's reads: which gangs a user may see, and the cluster figures the API reports.
Per-gang figures (progress, group progress, history) come from ``scheduler_core.reads.selectors``,
which the commands and pages share.

Visibility is decided here once (``gang_visible``), and every gang read of the API starts from it,
so a list, a detail page and an event feed can never disagree about who sees what.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from django.db.models import Count, QuerySet
from django.http import Http404

from scheduler_core.models import Gang, GangEvent, Node, SchedulingCycle
from scheduler_core.reads.node_usage import usage_by_node
from scheduler_core.reads.topology import domains_by_node, level_keys, topologies

from .gang_rows import GangRows
from .permissions import sees_all_gangs
from .serializers import GANG_OUTPUT_COLUMNS


def gang_visible(*, user) -> QuerySet[Gang]:
    """Every gang for users with ``view_gang`` (operators), otherwise the user's own; each with
    its group and its forecast joined in."""
    gangs = Gang.objects.select_related("group", "forecast")
    if sees_all_gangs(user):
        return gangs
    return gangs.filter(submitter=user.get_username())


def gang_list(*, user, plain: bool) -> QuerySet[Gang] | GangRows:
    """``gang_visible``'s gangs as the list reads them, newest first (the (created, id) and
    (submitter, created, id) indexes): with ``plain`` (no filter to apply) in one hand-written
    query (dashboard/api/gang_rows.py), otherwise a queryset for the filters."""
    if plain:
        return GangRows(None if sees_all_gangs(user) else user.get_username())
    return gang_visible(user=user).only(*GANG_OUTPUT_COLUMNS).order_by("-created", "-id")


def gang_find(*, user, namespace: str, name: str) -> Gang | None:
    """The gang if it exists and the user may see it. A NUL character (``%00`` in a URL or a
    form) is never in a name, and PostgreSQL would refuse the query: no gang, not a 500."""
    if "\x00" in namespace or "\x00" in name:
        return None
    return gang_visible(user=user).filter(namespace=namespace, name=name).first()


def gang_get(*, user, namespace: str, name: str) -> Gang:
    """The gang, or 404 when it does not exist *or* the user may not see it (same answer)."""
    gang = gang_find(user=user, namespace=namespace, name=name)
    if gang is None:
        raise Http404(f"gang {namespace}/{name} not found")
    return gang


def event_visible(*, user) -> QuerySet[GangEvent]:
    events = GangEvent.objects.select_related("gang").order_by("-created", "-id")
    if sees_all_gangs(user):
        return events
    return events.filter(gang__submitter=user.get_username())


def node_usage(*, domains: bool = False) -> list[dict]:
    """Every node with what its bound active pods request (``used``) and how many there are;
    with ``domains``, its domain at each level of every topology (the node list shows them, the
    cluster summary has no use for them).

    On a real cluster ``used`` also counts what other schedulers' pods request there
    (``external``, kept by the Kubernetes backend's watch): that room is taken too.
    The use is what the database keeps per node (``scheduler_core.reads.node_usage``): one aggregate
    over its rows, whatever the number of pods.
    """
    used: dict[str, Counter] = defaultdict(Counter, usage_by_node())
    pods = Counter({node: amounts.pop("pods", 0) for node, amounts in used.items()})
    nodes = list(Node.objects.order_by("name"))
    # Each node's domain at every level of every topology (one query for the levels).
    where = domains_by_node(nodes, level_keys(topologies())) if domains else {}
    return [
        {
            "name": node.name,
            "allocatable": node.allocatable,
            "used": dict(
                pods_counted(node, used[node.name], pods[node.name]) + Counter(node.external_usage or {})
            ),
            "external": dict(node.external_usage or {}),
            "pods": pods.get(node.name, 0),
            "labels": node.labels,
            **({"domains": where[node.name]} if domains else {}),
            "taints": node.taints,
            "unschedulable": node.unschedulable,
            "ready": node.ready,
        }
        for node in nodes
    ]


def pods_counted(node: Node, used: Counter, pods: int) -> Counter:
    """Each pod takes one of a node's ``pods`` (Kubernetes' pod-count resource), which no pod
    lists among its requests: counted here where the node has that resource."""
    if "pods" in (node.allocatable or {}):
        used = used + Counter({"pods": pods})
    return used


def cluster_summary(*, user) -> dict:
    """Capacity (schedulable nodes: ready and not cordoned), used and free per resource, and the
    number of the gangs the user may see in each phase (a submitter: their own). Used counts
    every bound active pod, wherever it runs: the room is taken whoever holds it. Pending
    demand is the latest scheduling cycle's (what it left pending, per resource): cluster-wide,
    like capacity, whoever submitted the pods."""
    nodes = node_usage()
    capacity, used = Counter(), Counter()
    for node in nodes:
        if node["ready"] and not node["unschedulable"]:
            capacity.update(node["allocatable"])
        used.update(node["used"])
    # Every resource any node has, so "0 GPUs schedulable" shows when the GPU nodes are all down.
    resources = sorted({r for node in nodes for r in node["allocatable"]} | set(used))
    phases = dict(
        gang_visible(user=user)
        .order_by()
        .values_list("phase")
        .annotate(n=Count("id"))
        .values_list("phase", "n")
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
        "pendingDemand": SchedulingCycle.objects.values_list("pending_demand", flat=True).first() or {},
    }
