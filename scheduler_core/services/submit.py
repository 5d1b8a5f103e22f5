"""The minimal submission path: a gang and its pods (or a pod alone) from plain dicts.

The demo, the tests and later the manifest formats and the REST API all come through here, so
every check that protects the scheduler from a bad submission lives here once. Each error is a
ValueError that names what is wrong (the gang, the pod, the resource), because its text goes
straight back to whoever submitted.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction

from scheduler_core.db.rows import rows_insert
from scheduler_core.engine.model import GangMode, Placement, TimeoutStyle
from scheduler_core.engine.quantity import QuantityError, parse_resources
from scheduler_core.models import Gang, GangEvent, GangEventKind, Member, RestartPolicy

# Up a layer on purpose: cycle_trigger lives in tasks.py beside the Celery task it queues
# (schedule); tasks.py imports the services, so the services ask for a cycle through it.
from scheduler_core.tasks import cycle_trigger
from scheduler_core.validators import (
    validate_affinity,
    validate_string_map,
    validate_tolerations,
)

from .queues import queue_require
from .runtimes import gang_estimates_refresh
from .tenancy import CLI, Actor
from .topology import constraint_check, known_topologies

logger = logging.getLogger(__name__)

#: The keys a pod dict may have; anything else is a typo the submitter wants to hear about.
POD_FIELDS = frozenset(
    {
        "name",
        "requests",
        "priority",
        "preemptible",
        "node_selector",
        "tolerations",
        "affinity",
        "duration_seconds",
        "deadline_seconds",
        "labels",
        "annotations",
    }
)
#: Gang fields a submission may set; scheduling state (phase, counts...) is the scheduler's.
GANG_FIELDS = frozenset(
    {
        "total_number",
        "min_resources",
        "mode",
        "style",
        "wait_seconds",
        "priority",
        "placement",
        "preemptible",
        "queue",
        "restart_policy",
        "submitter",
        "declaration",
        "source_format",
        "topology_required",
        "topology_preferred",
        "topology_name",
    }
)
_CHOICES = {
    "mode": [m.value for m in GangMode],
    "style": [s.value for s in TimeoutStyle],
    "placement": [p.value for p in Placement],
    "restart_policy": list(RestartPolicy.values),
}
_JSON_CHECKS = {
    "node_selector": validate_string_map,
    "labels": validate_string_map,
    "annotations": validate_string_map,
    "tolerations": validate_tolerations,
    "affinity": validate_affinity,
}


@transaction.atomic
def gang_submit(
    *, namespace: str, name: str, min_member: int, pods: list[dict], actor: Actor = CLI, **gang_fields: Any
) -> Gang:
    """Create a gang and its pods in one transaction, with a ``created`` event.

    A key or pod name another tenant holds is refused as by ``actor.taken`` (tenancy.py): a
    submitter is not told what others hold. A queue they may not submit to is refused as a
    missing one (``queue_require``: a DeclarationError naming ``queue``).

    Two submissions racing under one name are settled by the unique constraints (the loser gets
    an IntegrityError); the checks here give everyone else a readable error first.
    """
    key = f"{namespace}/{name}"
    fields = _gang_fields(key, min_member, len(pods), gang_fields)
    members = _members(namespace, pods, where=f"gang {key}")
    holder, pod = taken(namespace, name, [member.name for member in members])
    if holder is not None:
        actor.refuse_taken(holder, f"gang {key}")
    if pod is not None:
        actor.refuse_taken(pod[1], f"pod {namespace}/{pod[0]}")
    # A queue the submitter may not use answers as a missing one (services/queues.py).
    queue_require(actor, namespace, fields.get("queue", "default"), "queue")
    _topology_check(fields)
    # The rows go in through rows_insert (db/rows.py): the ORM's INSERT compiler cost more than
    # the rest of a one-pod submission. No signal listens to these models' saves.
    gang = Gang(namespace=namespace, name=name, min_member=min_member, **fields)
    rows_insert(Gang, [gang])
    for member in members:
        # Its pods are the gang's: its policy recreates them.
        member.gang, member.submitter, member.owner = gang, gang.submitter, f"gang/{name}"
    rows_insert(Member, members)
    gang_estimates_refresh([gang.pk])
    reason = f"{len(members)} pods, min_member {min_member}"
    rows_insert(GangEvent, [GangEvent(gang=gang, kind=GangEventKind.CREATED, reason=reason, details={})])
    logger.info(
        "gang %s submitted: %d pods, min_member %d", key, len(members), min_member, extra={"gang": key}
    )
    transaction.on_commit(cycle_trigger)  # work arrived: schedule now, not at the next beat
    return gang


@transaction.atomic
def pod_submit(*, namespace: str, actor: Actor = CLI, **pod: Any) -> Member:
    """Create a pod scheduled on its own (no gang); ``pod`` takes the keys of ``POD_FIELDS``."""
    (member,) = _members(namespace, [pod], where=f"namespace {namespace}")
    member.submitter = actor.username
    _refuse_existing(namespace, [member], actor)
    member.save()
    logger.info("pod %s submitted", member.key)
    transaction.on_commit(cycle_trigger)
    return member


def _gang_fields(key: str, min_member: int, pods: int, fields: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(fields) - GANG_FIELDS)
    if unknown:
        raise ValueError(f"gang {key}: unknown field(s) {', '.join(unknown)}")
    if not isinstance(min_member, int) or isinstance(min_member, bool) or min_member < 1:
        raise ValueError(f"gang {key}: min_member must be a positive integer, not {min_member!r}")
    total = fields.get("total_number")
    if total is not None and total < min_member:
        raise ValueError(f"gang {key}: total_number {total} is below min_member {min_member}")
    if total is not None and pods > total:
        raise ValueError(f"gang {key}: {pods} pods submitted but total_number is {total}")
    if total is None and pods < min_member:
        raise ValueError(
            f"gang {key}: min_member {min_member} but only {pods} pods "
            "(set total_number if more members will come)"
        )
    result = dict(fields)
    for field, allowed in _CHOICES.items():
        value = result.get(field)
        if isinstance(value, (GangMode, TimeoutStyle, Placement)):
            value = result[field] = value.value
        if value is not None and value not in allowed:
            raise ValueError(f"gang {key}: {field} {value!r} is not one of {', '.join(allowed)}")
    if result.get("wait_seconds") is not None and result["wait_seconds"] < 0:
        raise ValueError(f"gang {key}: wait_seconds must not be negative")
    if "min_resources" in result:
        try:
            result["min_resources"] = parse_resources(result["min_resources"])
        except QuantityError as error:
            raise ValueError(f"gang {key}: min_resources: {error}") from None
    return result


def _topology_check(fields: Mapping[str, Any]) -> None:
    """A constraint naming a topology or a level that does not exist is refused naming the API's
    field (``services/topology.constraint_check``)."""
    required, preferred, name = (fields.get(f"topology_{k}") or "" for k in ("required", "preferred", "name"))
    if not (required or preferred or name):
        return
    known = known_topologies()
    constraint_check("", "", name, "topologyName", known)
    constraint_check(required, "", name, "topologyRequired", known)
    constraint_check(required, preferred, name, "topologyPreferred", known)


def _members(namespace: str, pods: list[dict], *, where: str) -> list[Member]:
    members, seen = [], set()
    for index, pod in enumerate(pods):
        name = pod.get("name")
        if not name or not isinstance(name, str):
            raise ValueError(f"{where}: pod #{index + 1} needs a name")
        if name in seen:
            raise ValueError(f"{where}: pod name {name} is used twice")
        seen.add(name)
        members.append(_member(namespace, pod, where=f"{where}: pod {name}"))
    return members


def _member(namespace: str, pod: Mapping[str, Any], *, where: str) -> Member:
    unknown = sorted(set(pod) - POD_FIELDS)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)}")
    try:
        requests = parse_resources(pod.get("requests"))
    except QuantityError as error:
        raise ValueError(f"{where}: {error}") from None
    spec = {field: pod[field] for field in _JSON_CHECKS if pod.get(field) is not None}
    if "affinity" in spec:
        spec["affinity"] = _selector_terms(spec["affinity"])
    for field, value in spec.items():  # an absent field gets the model's empty default: valid
        try:
            _JSON_CHECKS[field](value)
        except ValidationError as error:
            raise ValueError(f"{where}: {field}: {'; '.join(error.messages)}") from None
    duration = pod.get("duration_seconds")
    if duration is not None and (not isinstance(duration, (int, float)) or duration < 0):
        raise ValueError(f"{where}: duration_seconds must be a non-negative number, not {duration!r}")
    deadline = pod.get("deadline_seconds")
    if deadline is not None and (not isinstance(deadline, (int, float)) or deadline < 0):
        raise ValueError(f"{where}: deadline_seconds must be a non-negative number, not {deadline!r}")
    return Member(
        namespace=namespace,
        name=pod["name"],
        requests=requests,
        priority=int(pod.get("priority") or 0),
        preemptible=bool(pod.get("preemptible", True)),
        duration_seconds=duration,
        deadline_seconds=deadline,
        **spec,
    )


def _selector_terms(affinity: Any) -> Any:
    """Accept a pod's whole ``affinity`` object too: its required node selector terms are what
    the scheduler stores (``Member.affinity`` is the list of terms)."""
    if isinstance(affinity, dict) and "nodeAffinity" in affinity:
        required = affinity["nodeAffinity"].get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        return list(required.get("nodeSelectorTerms", []))
    return affinity


def _refuse_existing(namespace: str, members: list[Member], actor: Actor) -> None:
    _, pod = taken(namespace, None, [m.name for m in members])
    if pod is not None:
        actor.refuse_taken(pod[1], f"pod {namespace}/{pod[0]}")


def taken(namespace: str, gang: str | None, pods: list[str]) -> tuple[str | None, tuple[str, str] | None]:
    """Who holds the gang ``namespace/gang`` (None: nobody), and the first of ``pods`` (by name)
    that exists in the namespace with its submitter (None: none); one query."""
    with connection.cursor() as cursor:
        cursor.execute(_taken_sql(), {"namespace": namespace, "gang": gang, "pods": pods})
        rows = cursor.fetchall()
    holder = next((submitter for kind, _, submitter in rows if kind == "gang"), None)
    pod = min(((name, submitter) for kind, name, submitter in rows if kind == "pod"), default=None)
    return holder, pod


@functools.cache
def _taken_sql() -> str:
    """Each pod is looked up by the whole (namespace, name) key, one index probe per pod (the
    ``OFFSET 0`` keeps the subquery apart). Asked as ``name = ANY(pods)``, or with ``ORDER BY name
    LIMIT 1``, PostgreSQL walked the namespace's part of the index and filtered whenever its
    statistics were missing or old (a new installation, a burst of submissions before
    autovacuum's first ANALYZE): 0.9 ms a submission under bench/load.py, growing with the
    namespace. Only the pods that exist (normally none) come back; ``taken`` picks the first."""
    gangs, members = Gang._meta.db_table, Member._meta.db_table
    return (
        f"(SELECT 'gang', name, submitter FROM {gangs} WHERE namespace = %(namespace)s AND name = %(gang)s) "
        "UNION ALL (SELECT 'pod', m.name, m.submitter FROM unnest(%(pods)s::text[]) AS p(name) "
        f"CROSS JOIN LATERAL (SELECT name, submitter FROM {members} "
        "WHERE namespace = %(namespace)s AND name = p.name OFFSET 0) AS m)"
    )
