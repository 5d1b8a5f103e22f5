"""Writing the gangs a plan declares (``apply.py``'s step 3): created, configured or unchanged,
compared field by field so that re-applying a manifest changes nothing; gang groups; the gangs
of upstream replica keys; provisional gangs for pods that name a gang nobody declared yet.
Each change of an existing gang is recorded with who made it (``changes.py``)."""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import timedelta
from functools import reduce
from operator import or_

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from scheduler_core.engine.decisions import Reason
from scheduler_core.models import Gang, GangEventKind, GangGroup
from scheduler_core.services.history import event_record
from scheduler_core.services.tenancy import Actor

from .changes import configured_record
from .spec import GangRef, GangSpec

# Under apply's name: the "gang ... configured" lines operators grep for stay where they were.
logger = logging.getLogger("scheduler_core.declarations.apply")

DEFAULT_PROVISIONAL_GRACE_S = 60
CREATED, CONFIGURED, UNCHANGED = "created", "configured", "unchanged"


def keys_q(keys) -> Q:
    by_namespace: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        namespace, name = key.split("/", 1)
        by_namespace[namespace].append(name)
    return reduce(or_, (Q(namespace=ns, name__in=names) for ns, names in by_namespace.items()), Q(pk__in=[]))


def gang_line(gang: Gang, status: str) -> str:
    line = f"gang {gang.key} {status}"
    if gang.provisional:
        line += f" (provisional: {waiting(gang)})"
    return line


def waiting(gang: Gang) -> str:
    if gang.provisional_until is None:
        return gang.message or "waiting for its declaration"
    return f"waiting for its declaration until {gang.provisional_until:%Y-%m-%dT%H:%M:%SZ}" + (
        f" ({gang.message})" if gang.message else ""
    )


def groups_write(specs) -> dict[str, GangGroup]:
    wanted = {spec.group_key: spec.group for spec in specs if spec.group_key}
    groups = {group.key: group for group in GangGroup.objects.select_for_update().filter(key__in=wanted)}
    for key, members in wanted.items():
        group = groups.get(key)
        if group is None:
            groups[key] = GangGroup.objects.create(key=key, members=members)
        elif group.members != members:
            group.members = members
            group.save(update_fields=["members", "updated"])
    return groups


def gang_write(spec: GangSpec, gang: Gang | None, groups: dict[str, GangGroup], submitter: str, actor: Actor):
    fields = spec.settings()
    fields["group"] = groups.get(spec.group_key) if spec.group_key else None
    if gang is None:
        gang = Gang.objects.create(namespace=spec.namespace, name=spec.name, submitter=submitter, **fields)
        event_record(gang=gang, kind=GangEventKind.CREATED, reason=f"declared ({spec.source_format})")
        return gang, CREATED
    was_provisional = gang.provisional
    changed = [name for name, value in fields.items() if getattr(gang, name) != value]
    if not changed and not was_provisional:
        return gang, UNCHANGED
    before = {name: getattr(gang, name) for name in changed}
    for name, value in fields.items():
        setattr(gang, name, value)
    if was_provisional:
        gang.reason, gang.message = "", ""  # what it waited for has come
    gang.provisional, gang.provisional_until = False, None
    gang.save()
    if was_provisional:
        event_record(
            gang=gang,
            kind=GangEventKind.CREATED,
            reason=f"declared ({spec.source_format}); its waiting pods join",
        )
    elif changed:
        configured_record(gang, actor, f"{spec.source_format} declaration", before)
    logger.info("gang %s configured by %s: %s", gang.key, actor.who, ", ".join(changed) or "declared")
    return gang, CONFIGURED


def replica_write(ref: GangRef, gang: Gang | None, submitter: str, actor: Actor) -> Gang | None:
    """Upstream v1alpha1: a replica key's gang, from its pod group's gang applied earlier
    (the actor's own: another tenant's settings are not copied, as if it did not exist)."""
    namespace, name = ref.replica_of.split("/", 1)
    base = Gang.objects.filter(namespace=namespace, name=name, provisional=False).first()
    if base is None or not actor.may_change(base.submitter):
        return None
    fields = {f: getattr(base, f) for f in GangSpec(namespace, name, 1, "", {}, "").settings()}
    fields["declaration"] = {**base.declaration, "replicaOf": base.key}
    if gang is None:
        gang = Gang.objects.create(namespace=ref.namespace, name=ref.name, submitter=submitter, **fields)
    else:
        for field_name, value in fields.items():
            setattr(gang, field_name, value)
        gang.provisional, gang.provisional_until, gang.reason, gang.message = False, None, "", ""
        gang.save()
    event_record(gang=gang, kind=GangEventKind.CREATED, reason=f"declared (replica of {base.key})")
    return gang


def provisional_write(ref: GangRef, gang: Gang | None, pods: int, submitter: str):
    """A gang named by pods but not declared yet: min_member is the pods' min-available hint,
    or the number of pods present, until its declaration arrives."""
    if gang is None:
        grace = getattr(settings, "GANGSCHED_PROVISIONAL_GRACE_S", DEFAULT_PROVISIONAL_GRACE_S)
        gang = Gang.objects.create(
            namespace=ref.namespace,
            name=ref.name,
            min_member=max(1, ref.min_available or pods),
            provisional=True,
            provisional_until=None if ref.wait_forever else timezone.now() + timedelta(seconds=grace),
            source_format=ref.source_format,
            declaration={
                "provisional": {
                    "named_by": ref.field,
                    "min_available": ref.min_available,
                    "replica_of": ref.replica_of,
                }
            },
            submitter=submitter,
            queue=ref.queue or "default",
            reason=Reason.WAITING_FOR_MEMBERS.value if ref.waiting else "",
            message=ref.waiting,
        )
        event_record(
            gang=gang,
            kind=GangEventKind.EXPLAINED,
            reason=f"provisional: {pods} pods name this gang; they are {waiting(gang)}",
        )
        return gang, CREATED
    return gang, UNCHANGED  # the pods' count is updated once they are written (pods_write)
