"""Adding, removing, cordoning nodes of the simulated cluster (on Kubernetes the watch does this).

Each change is logged with the node's name: in a simulation, "why did my gang restart" is most
often "because someone removed its node", and the log is where an operator looks.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from scheduler_core.engine.quantity import QuantityError, parse_resources
from scheduler_core.models import Member, Node
from scheduler_core.validators import validate_string_map, validate_taints

from . import lifecycle

logger = logging.getLogger(__name__)

NODE_REMOVED = "node removed"


def _checked(name: str, allocatable, labels, taints) -> tuple[dict[str, int], dict, list]:
    if not name:
        raise ValueError("a node needs a name")
    try:
        resources = parse_resources(allocatable)
        labels, taints = dict(labels or {}), list(taints or [])
        validate_string_map(labels)
        validate_taints(taints)
    except QuantityError as error:
        raise ValueError(f"node {name}: allocatable: {error}") from None
    except ValidationError as error:
        raise ValueError(f"node {name}: {'; '.join(error.messages)}") from None
    return resources, labels, taints


@transaction.atomic
def node_add(
    *,
    name: str,
    allocatable: Mapping[str, str | int | float],
    labels: Mapping[str, str] | None = None,
    taints: list[dict] | None = None,
) -> Node:
    """A new node; ``allocatable`` in Kubernetes quantities ({"cpu": "64", "memory": "256Gi"})."""
    resources, labels, taints = _checked(name, allocatable, labels, taints)
    if Node.objects.filter(name=name).exists():
        raise ValueError(f"node {name} already exists")
    node = Node.objects.create(name=name, allocatable=resources, labels=labels, taints=taints)
    logger.info("node %s added: %s", name, dict(allocatable))
    return node


@transaction.atomic
def node_apply(
    *,
    name: str,
    allocatable: Mapping[str, str | int | float],
    labels: Mapping[str, str] | None = None,
    taints: list[dict] | None = None,
    unschedulable: bool = False,
) -> tuple[Node, str]:
    """Create or update a node from its manifest, as ``kubectl apply`` of a ``v1 Node`` would:
    labels, taints, cordon (``unschedulable``) and capacity all take the manifest's values.
    Returns the node and ``created``, ``configured`` or ``unchanged``. Pods already bound stay
    where they are, even if the node shrank or was cordoned (as on Kubernetes)."""
    resources, labels, taints = _checked(name, allocatable, labels, taints)
    fields = {"allocatable": resources, "labels": labels, "taints": taints, "unschedulable": unschedulable}
    node = Node.objects.select_for_update().filter(name=name).first()
    if node is None:
        node = Node.objects.create(name=name, **fields)
        logger.info("node %s added: %s", name, dict(allocatable))
        return node, "created"
    changed = [key for key, value in fields.items() if getattr(node, key) != value]
    if not changed:
        return node, "unchanged"
    for key in changed:
        setattr(node, key, fields[key])
    node.save(update_fields=[*changed, "updated"])
    logger.info("node %s configured: %s", name, ", ".join(changed))
    return node, "configured"


@transaction.atomic
def node_remove(*, name: str) -> int:
    """Remove a node: its pods fail ("node removed") and their gangs' restart policies run;
    pending pods holding a reservation there lose it. Returns how many pods failed."""
    node = _locked(name)
    now = timezone.now()
    failed, reasons = lifecycle.members_fail(Member.objects.filter(node=name), reason=NODE_REMOVED, now=now)
    Member.objects.filter(reserved_node=name).update(reserved_node=None, updated=now)
    node.delete()
    handled = lifecycle.failures_handle(now=now, reasons=reasons)
    lifecycle.gangs_refresh(now=now, gang_ids=handled)
    logger.info("node %s removed: %d pods failed", name, failed)
    return failed


@transaction.atomic
def node_cordon(*, name: str, cordon: bool = True) -> Node:
    """Cordoned: the scheduler places nothing new there; what runs there keeps running."""
    node = _locked(name)
    node.unschedulable = cordon
    node.save(update_fields=["unschedulable", "updated"])
    logger.info("node %s %s", name, "cordoned" if cordon else "uncordoned")
    return node


@transaction.atomic
def node_set_ready(*, name: str, ready: bool) -> Node:
    """A node that is not ready loses its pods at the next kubelet tick ("node lost")."""
    node = _locked(name)
    node.ready = ready
    node.save(update_fields=["ready", "updated"])
    logger.info("node %s is %s", name, "ready" if ready else "not ready")
    return node


def _locked(name: str) -> Node:
    try:
        return Node.objects.select_for_update().get(name=name)
    except Node.DoesNotExist:
        raise ValueError(f"node {name} does not exist") from None
