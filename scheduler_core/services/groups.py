"""Gang groups: gangs (in any namespaces) that must all be satisfied before any of them binds."""

from __future__ import annotations

import functools
import hashlib
import logging
import operator

from django.db import transaction
from django.db.models import Q

from scheduler_core.models import Gang, GangGroup
from scheduler_core.specs.errors import DeclarationError

from .tenancy import Actor

logger = logging.getLogger(__name__)


def gang_group_key(members: list[str]) -> str:
    """A group is named by its members, as the Koordinator loader names it (declarations/
    koordinator.py): every gang that lists the same set joins the same row, whichever way it came."""
    key = ",".join(sorted(set(members)))
    if len(key) > GangGroup._meta.get_field("key").max_length:
        key = "group-" + hashlib.sha256(key.encode()).hexdigest()[:32]
    return key


@transaction.atomic
def gang_group_join(*, gang: Gang, members: list[str], actor: Actor | None = None) -> GangGroup:
    """Put ``gang`` in the group of ``members`` (``namespace/name`` keys; the gang's own key is
    added if missing), creating the group on first use. Listed gangs not submitted yet hold the
    group back until they arrive (GangGroup's docstring).

    With ``actor`` (a submission through the API), every other member must be a gang already
    submitted that the actor may change, in no other group: it joins the group too, so the
    group is whole at once. A key that names no gang and one that names another's gang are
    refused alike (``gang X not found``, naming the list item), so the list never tells whether
    another tenant holds a key; nothing is written."""
    keys = sorted(set(members) | {gang.key})
    group_key = gang_group_key(keys)
    listed = _listed_gangs(actor, gang, members, group_key) if actor is not None else []
    group, _created = GangGroup.objects.get_or_create(key=group_key, defaults={"members": keys})
    Gang.objects.filter(pk__in=[gang.pk, *(other.pk for other in listed)]).update(group=group)
    gang.group = group
    logger.info("gang %s joined gang group %s", gang.key, group.key, extra={"gang": gang.key})
    return group


def _listed_gangs(actor: Actor, gang: Gang, members: list[str], group_key: str) -> list[Gang]:
    others = [key for key in members if key != gang.key]
    if not others:
        return []
    wanted = functools.reduce(
        operator.or_, (Q(namespace=key.partition("/")[0], name=key.partition("/")[2]) for key in others)
    )
    found = {
        other.key: other
        for other in Gang.objects.select_for_update(of=("self",)).select_related("group").filter(wanted)
    }
    for index, key in enumerate(members):
        if key == gang.key:
            continue
        other = found.get(key)
        field = f"groups[{index}]"
        if other is None or not actor.may_change(other.submitter):
            raise DeclarationError(field, f"gang {key} not found")
        if other.group is not None and other.group.key != group_key:
            raise DeclarationError(field, f"gang {key} is already in gang group {other.group.key}")
    return [found[key] for key in others]
