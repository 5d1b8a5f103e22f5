"""Gang groups: gangs (in any namespaces) that must all be satisfied before any of them binds."""

from __future__ import annotations

import hashlib
import logging

from django.db import transaction

from scheduler_core.models import Gang, GangGroup

logger = logging.getLogger(__name__)


def gang_group_key(members: list[str]) -> str:
    """A group is named by its members, as the Koordinator loader names it (declarations/
    koordinator.py): every gang that lists the same set joins the same row, whichever way it came."""
    key = ",".join(sorted(set(members)))
    if len(key) > GangGroup._meta.get_field("key").max_length:
        key = "group-" + hashlib.sha256(key.encode()).hexdigest()[:32]
    return key


@transaction.atomic
def gang_group_join(*, gang: Gang, members: list[str]) -> GangGroup:
    """Put ``gang`` in the group of ``members`` (``namespace/name`` keys; the gang's own key is
    added if missing), creating the group on first use. Listed gangs not submitted yet hold the
    group back until they arrive (GangGroup's docstring)."""
    keys = sorted(set(members) | {gang.key})
    group, _created = GangGroup.objects.get_or_create(key=gang_group_key(keys), defaults={"members": keys})
    Gang.objects.filter(pk=gang.pk).update(group=group)
    gang.group = group
    logger.info("gang %s joined gang group %s", gang.key, group.key, extra={"gang": gang.key})
    return group
