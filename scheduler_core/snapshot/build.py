"""From database rows to the engine's Snapshot.

Conventions at this boundary:
- datetimes, taints, tolerations and node selector terms convert as ``snapshot.json_fields`` says
  (re-exported here: ``snapshot.to_epoch``, ``snapshot.taint_from_json``, ...);
- the snapshot is deterministic: nodes, pods and gangs are ordered by name, so two builds over
  the same rows are equal.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from itertools import chain
from typing import Any

from django.db.models import Exists, F, FloatField, Func, OuterRef, Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.db.models.sql.constants import MULTI

from scheduler_core.engine import model as engine
from scheduler_core.engine.model import GangMode, GangPhase, MatchPolicy, Placement, TimeoutStyle
from scheduler_core.models import Gang, GangGroup, Member, Node
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES
from scheduler_core.snapshot.json_fields import (  # noqa: F401  (re-exported: callers and tests use snapshot.*)
    from_epoch,
    ints,
    taint_from_json,
    taint_to_json,
    term_from_json,
    term_to_json,
    to_epoch,
    toleration_from_json,
    toleration_to_json,
)
from scheduler_core.snapshot.queues import queues_read
from scheduler_core.snapshot.reuse import REUSE, SnapshotReuse
from scheduler_core.snapshot.runtimes import pod_duration
from scheduler_core.snapshot.topology import topologies_read, topology_constraint

#: Gang phases after which a gang is history, not work: the snapshot leaves such a gang out
#: unless it still has pods that hold capacity (then the engine needs it to account for them).
#: TimedOut is not here: a timed-out gang still shows up so the engine can explain it.
DONE_PHASES = (GangPhase.FINISHED.value, GangPhase.FAILED.value, GangPhase.KILLED.value)


# ---------------------------------------------------------------- rows -> engine objects


def available(allocatable: Mapping[str, int], external: Mapping[str, int]) -> dict[str, int]:
    """What gangsched may place on a node: its allocatable less what other schedulers' pods use
    (never below zero: a node other schedulers over-filled simply has no room)."""
    if not external:
        return dict(allocatable)
    return {name: max(0, amount - external.get(name, 0)) for name, amount in allocatable.items()}


def node_to_engine(node: Node) -> engine.Node:
    return engine.Node(
        name=node.name,
        allocatable=available(ints(node.allocatable), ints(node.external_usage)),
        labels=dict(node.labels),
        taints=tuple(taint_from_json(t) for t in node.taints),
        unschedulable=node.unschedulable,
        ready=node.ready,
    )


def member_to_engine(member: Member, gang_key: str | None) -> engine.Pod:
    return engine.Pod(
        namespace=member.namespace,
        name=member.name,
        requests=ints(member.requests),
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
        min_resources=ints(gang.min_resources),
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
        match_policy=MatchPolicy(gang.match_policy),
        topology=topology_constraint(
            gang.topology_required, gang.topology_preferred, gang.topology_name, gang.topology_exclusive
        ),
    )


def group_to_engine(group: GangGroup) -> engine.GangGroup:
    return engine.GangGroup(key=group.key, members=tuple(group.members))


# ---------------------------------------------------------------- the snapshot


def build_snapshot(now: float | None = None, *, reuse: SnapshotReuse = REUSE) -> engine.Snapshot:
    """The cluster and its work as the engine sees it, read in seven queries (the queue tree is
    one: ``snapshot/queues.py``; the topologies two: ``snapshot/topology.py``).

    Pods: every member that holds or wants capacity (Pending, Running). Gangs: every gang not
    done, plus done gangs that still have such pods. Groups and nodes: all of them. Call it inside
    a REPEATABLE READ transaction (or accept that rows may move between the queries).

    This runs at the start of every cycle over every live pod, so it reads plain tuples (no model
    instances) and decodes each distinct JSON text once: the members of a gang share their
    requests, selectors and tolerations, so 10,000 pods have a handful of distinct values. The
    result equals ``*_to_engine`` applied to the rows. The engine objects of rows that did not
    change since this process's last build are that build's objects (``snapshot/reuse.py``).
    A pod's duration is what the scheduler believes at ``now`` (default: the clock), as
    ``snapshot/runtimes.py`` says. ``reuse``: the caches to keep them in; a reader other than
    the cycle (the forecasts) passes its own, so that it never waits for the cycle's lock.
    """
    with reuse.lock:
        snapshot = _snapshot_read(time.time() if now is None else now, reuse)
        reuse.rotate()
    return snapshot


def _snapshot_read(now: float, reuse: SnapshotReuse) -> engine.Snapshot:
    decode = _JSONCache()
    queues, resolve = queues_read()
    has_live_pods = Exists(Member.objects.filter(gang=OuterRef("pk"), phase__in=ACTIVE_MEMBER_PHASES))
    gang_rows = (
        Gang.objects.filter(~Q(phase__in=DONE_PHASES) | Q(has_live_pods))
        # A provisional gang (pods before their PodGroup) stays out: the engine then holds its
        # pods back, as members of a gang it does not know yet.
        .exclude(provisional=True)
        .annotate(
            min_resources_text=_text("min_resources"),
            created_epoch=_epoch("created"),
            wait_started_epoch=_epoch("wait_started"),
        )
        .order_by("namespace", "name")
        .values_list(
            "namespace",
            "name",
            "min_member",
            "min_resources_text",
            "total_number",
            "mode",
            "wait_seconds",
            "style",
            "group__key",
            "created_epoch",
            "phase",
            "priority",
            "placement",
            "preemptible",
            "queue",
            "satisfied",
            "wait_started_epoch",
            "fallen_back",
            "match_policy",
            *("topology_required", "topology_preferred", "topology_name", "topology_exclusive"),
        )
    )
    gangs = tuple(
        reuse.gangs.get((row, resolve(row[0], row[14])), lambda row=row: _gang(row, decode, resolve))
        for row in _tuples(gang_rows)
    )
    # The gang key comes from the member's own join, not from the gang list above: a pod must
    # never lose its gang (and be scheduled alone) because the rows moved between two queries.
    member_rows = (
        Member.objects.filter(phase__in=ACTIVE_MEMBER_PHASES)
        .annotate(
            requests_text=_text("requests"),
            node_selector_text=_text("node_selector"),
            tolerations_text=_text("tolerations"),
            affinity_text=_text("affinity"),
            created_epoch=_epoch("created"),
            started_epoch=_epoch("started_at"),
        )
        .order_by("namespace", "name")
        .values_list(
            "namespace",
            "name",
            "requests_text",
            "priority",
            "created_epoch",
            "gang__namespace",
            "gang__name",
            "node",
            "reserved_node",
            "node_selector_text",
            "tolerations_text",
            "affinity_text",
            "started_epoch",
            "duration_seconds",
            "preemptible",
            "terminating",
            "queue",
            *("gang__runtime_estimate_s", "gang__runtime_source", "gang__runtime_limit_s"),
        )
    )
    # The duration the engine sees replaces the declared one (and the gang's estimate columns)
    # before the row keys the reuse: an estimate that grew makes a new pod object.
    believed = (
        (*row[:13], pod_duration(row[13], row[12], *row[17:20], now), *row[14:17])
        for row in _tuples(member_rows)
    )
    pods = tuple(
        reuse.pods.get(
            # A pod alone is charged to its own queue (Member.queue), a member to its gang's.
            (row, engine.DEFAULT_QUEUE if row[6] is not None else resolve(row[0], row[16])),
            lambda row=row: _pod(row, decode, resolve),
        )
        for row in believed
    )
    node_rows = (
        Node.objects.annotate(
            allocatable_text=_text("allocatable"),
            labels_text=_text("labels"),
            taints_text=_text("taints"),
            external_text=_text("external_usage"),
        )
        .order_by("name")
        .values_list(
            *("name", "allocatable_text", "labels_text", "taints_text"),
            *("unschedulable", "ready", "external_text"),
        )
    )
    nodes = tuple(reuse.nodes.get(row, lambda row=row: _node(row, decode)) for row in _tuples(node_rows))
    topologies, nodes = topologies_read(nodes)  # HyperNodes add their tiers' labels
    return engine.Snapshot(
        nodes=nodes,
        pods=pods,
        gangs=gangs,
        gang_groups=tuple(
            engine.GangGroup(key=key, members=tuple(members))
            for key, members in GangGroup.objects.order_by("key").values_list("key", "members")
        ),
        queues=queues,
        topologies=topologies,
    )


def _gang(row: tuple, decode: _JSONCache, resolve) -> engine.Gang:
    (namespace, name, min_member, min_resources, total_number, mode, wait_seconds, style, group_key,
     created, phase, priority, placement, preemptible, queue, satisfied, wait_started, fallen_back,
     match_policy, *topology) = row  # fmt: skip
    return engine.Gang(
        namespace=namespace,
        name=name,
        min_member=min_member,
        min_resources=dict(decode.ints(min_resources)),
        total_number=total_number,
        mode=GangMode(mode),
        wait_seconds=wait_seconds,
        style=TimeoutStyle(style),
        group=group_key,
        created=created,
        phase=GangPhase(phase),
        priority=priority,
        placement=Placement(placement),
        preemptible=preemptible,
        queue=resolve(namespace, queue),
        satisfied=satisfied,
        wait_started=wait_started,
        fallen_back=fallen_back,
        match_policy=MatchPolicy(match_policy),
        topology=topology_constraint(*topology),
    )


def _pod(row: tuple, decode: _JSONCache, resolve) -> engine.Pod:
    (namespace, name, requests, priority, created, gang_namespace, gang_name, node, reserved_node,
     node_selector, tolerations, affinity, started_at, duration, preemptible, terminating,
     own_queue) = row  # fmt: skip
    return engine.Pod(
        namespace=namespace,
        name=name,
        requests=dict(decode.ints(requests)),
        priority=priority,
        created=created,
        gang=None if gang_name is None else f"{gang_namespace}/{gang_name}",
        node=node or None,
        reserved_node=reserved_node or None,
        node_selector=dict(decode.json(node_selector)),
        tolerations=decode.tolerations(tolerations),
        affinity=decode.affinity(affinity),
        started=started_at,
        duration=duration,
        preemptible=preemptible,
        terminating=terminating,
        queue=engine.DEFAULT_QUEUE if gang_name is not None else resolve(namespace, own_queue),
    )


def _node(row: tuple, decode: _JSONCache) -> engine.Node:
    name, allocatable, labels, taints, unschedulable, ready, external = row
    return engine.Node(
        name=name,
        allocatable=available(decode.ints(allocatable), decode.ints(external)),
        labels=dict(decode.json(labels)),
        taints=decode.taints(taints),
        unschedulable=unschedulable,
        ready=ready,
    )


def _tuples(queryset: QuerySet) -> Iterable[tuple]:
    """A ``values_list`` query's rows as psycopg returns them, skipping Django's per-row
    converters when the only ones are FloatField's (``float()`` of a float8: the epochs), which
    cost a 12,000-pod build a tenth of its time; any other converter, and Django converts."""
    compiler = queryset.query.get_compiler(queryset.db)
    compiler.setup_query()
    fields = [column[0] for column in compiler.select[: compiler.col_count]]
    converters = compiler.get_converters(fields).values()
    if queryset.query.extra_select or not all(isinstance(e.output_field, FloatField) for _, e in converters):
        return compiler.results_iter(tuple_expected=True)
    return chain.from_iterable(compiler.execute_sql(MULTI))


def _epoch(column: str) -> Func:
    """A timestamp column as float seconds since the epoch, computed by PostgreSQL: the same
    float as ``to_epoch`` (both round the exact value once), without parsing 10,000 datetimes."""
    return Func(F(column), template="EXTRACT(EPOCH FROM %(expressions)s)::float8", output_field=FloatField())


def _text(column: str) -> Cast:
    """A JSON column as its text, so that ``_JSONCache`` decodes each distinct value once."""
    return Cast(column, output_field=TextField())


class _JSONCache:
    """Decoded JSON texts and the engine values built from them, for one snapshot build.

    Callers copy the dicts they hand to the engine (``dict(...)``), so no two engine objects share
    a mutable mapping; tuples of frozen dataclasses are shared as they are.
    """

    def __init__(self) -> None:
        self._json: dict[str, Any] = {}
        self._built: dict[tuple[str, str], Any] = {}

    def json(self, text: str) -> Any:
        try:
            return self._json[text]
        except KeyError:
            value = self._json[text] = json.loads(text)
            return value

    def _build(self, kind: str, text: str, build) -> Any:
        try:
            return self._built[kind, text]
        except KeyError:
            value = self._built[kind, text] = build(self.json(text))
            return value

    def ints(self, text: str) -> dict[str, int]:
        return self._build("ints", text, ints)

    def tolerations(self, text: str) -> tuple[engine.Toleration, ...]:
        return self._build("tolerations", text, lambda data: tuple(toleration_from_json(t) for t in data))

    def affinity(self, text: str) -> tuple[engine.NodeSelectorTerm, ...]:
        return self._build("affinity", text, lambda data: tuple(term_from_json(t) for t in data))

    def taints(self, text: str) -> tuple[engine.Taint, ...]:
        return self._build("taints", text, lambda data: tuple(taint_from_json(t) for t in data))
