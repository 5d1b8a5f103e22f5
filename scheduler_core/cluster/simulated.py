"""The simulated cluster: the embedded default backend, whose state *is* the database.

Nodes are Node rows and pods are Member rows, so the web process and every worker see one
cluster without talking to each other. The kubelet's side (pods starting, finishing, failing) is
``scheduler_core/services/kubelet.py``; this module is only what a scheduler may ask of a cluster.

Faults can be injected for tests and demos: ``GANGSCHED_SIM_FAILURE_RATE`` (0..1) makes that
share of binds fail with "injected failure" and of deletes raise ``ClusterError``, drawn from a
``random.Random`` seeded with ``GANGSCHED_SIM_SEED`` so a failing run can be replayed.
``GANGSCHED_SIM_LIST_FAILURE_RATE`` makes that share of ``sync()`` calls (the backend's list of
the cluster) fail, so the cycle skips, as it does while a real cluster has not been read yet.
"""

from __future__ import annotations

import json
import logging
import random
from collections import defaultdict
from collections.abc import Sequence
from decimal import Decimal
from typing import NamedTuple

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.db.models import F, Func, JSONField, Value
from django.utils import timezone

from scheduler_core.db.arrays import UNPACK, packed
from scheduler_core.engine.quantity import format_amount
from scheduler_core.models import Member, MemberPhase, Node
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES

from . import ClusterError
from .base import BindOutcome, BindRequest, BindResult

logger = logging.getLogger(__name__)

#: Why a pod was deleted, kept on the Member row (which stays, Failed, as history).
DELETED_REASON = "gangsched.io/deleted-reason"
INJECTED = "injected failure"

_ACTIVE = tuple(phase.value for phase in ACTIVE_MEMBER_PHASES)


class JSONMerge(Func):
    """``column || value`` on jsonb: merge keys into an object column inside one UPDATE."""

    arg_joiner = " || "
    template = "(%(expressions)s)"
    output_field = JSONField()


def json_merge(column: str, values: dict[str, str]) -> JSONMerge:
    return JSONMerge(F(column), Value(values, output_field=JSONField()))


class SimulatedCluster:
    name = "simulated"

    def __init__(
        self,
        *,
        failure_rate: float | None = None,
        seed: int | None = None,
        list_failure_rate: float | None = None,
    ) -> None:
        self.failure_rate = _rate("GANGSCHED_SIM_FAILURE_RATE", failure_rate)
        self.list_failure_rate = _rate("GANGSCHED_SIM_LIST_FAILURE_RATE", list_failure_rate)
        self._random = random.Random(getattr(settings, "GANGSCHED_SIM_SEED", None) if seed is None else seed)

    def _injected(self, rate: float | None = None) -> bool:
        rate = self.failure_rate if rate is None else rate
        return rate > 0 and self._random.random() < rate

    # ------------------------------------------------------------ the Protocol

    def sync(self) -> bool:
        """In step (the database is the cluster), unless a list failure is injected."""
        if self._injected(self.list_failure_rate):
            logger.warning("simulated list of the cluster: %s", INJECTED)
            return False
        return True

    def bind(self, requests: Sequence[BindRequest]) -> list[BindResult]:
        """Bind pods in one transaction: lock the target nodes, check, then one bulk UPDATE.

        The nodes are locked (SELECT ... FOR UPDATE, in name order so two binds cannot deadlock)
        before their usage is summed, so two concurrent binds onto one node are serialised and
        the second sees the first's pods: a node is never over-committed. Only bound pods count
        as usage, as in a kubelet's admission: reservations are the scheduler's own bookkeeping,
        and binding onto a cordoned node is allowed, as Kubernetes' binding API allows it.
        """
        results: list[BindResult | None] = [None] * len(requests)
        todo: list[int] = []
        for index, request in enumerate(requests):
            if self._injected():
                results[index] = BindResult(request, BindOutcome.FAILED, INJECTED)
            else:
                todo.append(index)
        if todo:
            with transaction.atomic():
                self._bind_locked(requests, todo, results)
        return results  # type: ignore[return-value]

    def _bind_locked(self, requests: Sequence[BindRequest], todo: list[int], results: list) -> None:
        node_names = sorted({requests[i].node for i in todo})
        nodes = {
            name: _NodeRow(name, allocatable, ready)
            for name, allocatable, ready in Node.objects.select_for_update()
            .filter(name__in=node_names)
            .order_by("name")
            .values_list("name", "allocatable", "ready")
        }
        used = _usage(list(nodes))
        # The pods are locked too: their state read here is the state the UPDATE changes.
        pods = _pods_locked({requests[i].namespace for i in todo}, {requests[i].name for i in todo})
        updates: list[tuple[int, str]] = []
        for index in todo:
            request = requests[index]
            pod = pods.get((request.namespace, request.name))
            outcome, error = _decide(request, pod, nodes.get(request.node), used[request.node])
            if outcome is BindOutcome.BOUND and pod[1] is None:
                pod[1] = request.node  # a second request for this pod in the same call sees it bound
                updates.append((pod[0], request.node))
                _add(used[request.node], pod[3])
            results[index] = BindResult(request, outcome, error)
        if updates:
            changed = _bulk_bind(updates)
            if changed != len(updates):  # impossible while the rows are locked; say so loudly
                raise ClusterError(f"bound {changed} of {len(updates)} pods: rows changed under a lock")
        logger.debug("simulated bind: %d requests, %d newly bound", len(todo), len(updates))

    def delete_pod(self, namespace: str, name: str, reason: str) -> bool:
        """Terminate a pod: it becomes Failed at once (no grace period) and frees its node.

        The row stays, with its node and ``gangsched.io/deleted-reason``, so history survives;
        recreating it is the restart policy's business (services/lifecycle.py).
        """
        if self._injected():
            raise ClusterError(f"deleting {namespace}/{name}: {INJECTED}")
        changed = Member.objects.filter(namespace=namespace, name=name, phase__in=_ACTIVE).update(
            phase=MemberPhase.FAILED,
            finished_at=timezone.now(),
            reserved_node=None,
            annotations=json_merge("annotations", {DELETED_REASON: reason}),
            updated=timezone.now(),
        )
        return changed == 1

    def annotate_pod(self, namespace: str, name: str, annotations: dict[str, str]) -> None:
        """Merge annotations; a pod that no longer exists is left alone (calls are idempotent)."""
        Member.objects.filter(namespace=namespace, name=name).update(
            annotations=json_merge("annotations", dict(annotations)), updated=timezone.now()
        )

    def hold(self, requests: Sequence[BindRequest]) -> None:
        """Nothing to do: no other scheduler shares this cluster; reservations live in Member rows."""

    def unhold(self, requests: Sequence[BindRequest]) -> None:
        """Nothing to do, see ``hold``."""


# ---------------------------------------------------------------- helpers


def _rate(setting: str, value: float | None) -> float:
    rate = float(getattr(settings, setting, 0.0)) if value is None else value
    if not 0.0 <= rate <= 1.0:
        raise ImproperlyConfigured(f"{setting}={rate!r} must be between 0 and 1")
    return rate


class _NodeRow(NamedTuple):
    """What a bind needs of a Node row (read as a tuple: thousands per cycle)."""

    name: str
    allocatable: dict[str, int]
    ready: bool


def _pods_locked(namespaces: set[str], names: set[str]) -> dict[tuple[str, str], list]:
    """``(namespace, name) -> [id, node, phase, requests]`` of those pods, locked FOR UPDATE in id
    order; one query with array parameters, and each distinct requests JSON decoded once."""
    sql = f"""
        SELECT id, namespace, name, node, phase, requests::text FROM {Member._meta.db_table}
         WHERE namespace = ANY({UNPACK}) AND name = ANY({UNPACK})
         ORDER BY id
           FOR UPDATE
    """
    decoded: dict[str, dict[str, int]] = {}
    pods: dict[tuple[str, str], list] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, [packed(sorted(namespaces)), packed(sorted(names))])
        for pk, namespace, name, node, phase, text in cursor.fetchall():
            requests = decoded.get(text)
            if requests is None:
                requests = decoded[text] = json.loads(text)
            pods[(namespace, name)] = [pk, node, phase, requests]
    return pods


def _decide(request: BindRequest, pod: list | None, node: _NodeRow | None, used: dict[str, int]):
    """The outcome of one bind, in the order a real API server would check."""
    if pod is None or pod[2] not in _ACTIVE:
        return BindOutcome.GONE, f"pod {request.namespace}/{request.name} does not exist"
    if pod[1] == request.node:
        return BindOutcome.BOUND, ""
    if pod[1] is not None:
        return BindOutcome.CONFLICT, f"already bound to {pod[1]}"
    if node is None:
        return BindOutcome.FAILED, f"node {request.node} does not exist"
    if not node.ready:
        return BindOutcome.FAILED, f"node {request.node} is not ready"
    shortfall = _shortfall(node, used, pod[3])
    if shortfall:
        return BindOutcome.FAILED, f"node {request.node} would be over-committed: {shortfall}"
    return BindOutcome.BOUND, ""


def _shortfall(node: _NodeRow, used: dict[str, int], requests: dict[str, int]) -> str:
    """'' if the pod fits beside the node's bound pods, else which resource is short."""
    wanted = dict(requests)
    if "pods" in node.allocatable:  # every pod takes one pod slot, as in the engine
        wanted["pods"] = wanted.get("pods", 0) + 1
    for resource, amount in sorted(wanted.items()):
        if amount <= 0:
            continue
        free = int(node.allocatable.get(resource, 0)) - used.get(resource, 0)
        if amount > free:
            return (
                f"{resource} requested {format_amount(resource, amount)}, "
                f"free {format_amount(resource, max(free, 0))}"
            )
    return ""


def _add(used: dict[str, int], requests: dict[str, int]) -> None:
    for resource, amount in requests.items():
        used[resource] = used.get(resource, 0) + int(amount)
    used["pods"] = used.get("pods", 0) + 1


def _usage(node_names: list[str]) -> defaultdict[str, dict[str, int]]:
    """What the active pods bound to these nodes request, summed per node (plus a ``pods`` count),
    in one query: the database sums the JSON so 10,000 pods are not shipped to Python."""
    used: defaultdict[str, dict[str, int]] = defaultdict(dict)
    if not node_names:
        return used
    table = Member._meta.db_table
    sql = f"""
        SELECT m.node, r.key, SUM(r.value::numeric)
          FROM {table} m CROSS JOIN LATERAL jsonb_each_text(m.requests) r
         WHERE m.node = ANY(%s) AND m.phase = ANY(%s) AND r.key <> 'pods'
         GROUP BY m.node, r.key
        UNION ALL
        SELECT m.node, 'pods', COUNT(*) FROM {table} m
         WHERE m.node = ANY(%s) AND m.phase = ANY(%s)
         GROUP BY m.node
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [node_names, list(_ACTIVE), node_names, list(_ACTIVE)])
        for node, resource, amount in cursor.fetchall():
            used[node][resource] = int(Decimal(amount))
    return used


def _bulk_bind(updates: list[tuple[int, str]]) -> int:
    """One conditional UPDATE for every pod: only rows still unbound and Pending change."""
    table = Member._meta.db_table
    sql = f"""
        UPDATE {table} AS m SET node = v.node, reserved_node = NULL, updated = %s
          FROM unnest({UNPACK}::bigint[], {UNPACK}) AS v(id, node)
         WHERE m.id = v.id AND m.node IS NULL AND m.phase = %s
    """
    with connection.cursor() as cursor:
        ids, nodes = [pk for pk, _ in updates], [node for _, node in updates]
        cursor.execute(sql, [timezone.now(), packed(ids), packed(nodes), MemberPhase.PENDING.value])
        return cursor.rowcount
