"""Provisional gangs whose declaration never came: after the grace period they become real.

Koordinator holds pods that name a PodGroup which does not exist yet; gangsched does the same
(``apply.py`` creates a provisional gang the scheduler does not see) but does not hold them
forever: once ``provisional_until`` passes, the gang is promoted with ``min_member`` = the
pods' min-available hint (the older label form) or the number of pods present.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from scheduler_core.models import Gang, GangEventKind
from scheduler_core.services.history import event_record

logger = logging.getLogger(__name__)


def provisional_gangs_promote(now: datetime | None = None) -> int:
    """Promote every provisional gang whose grace period has passed; returns how many.

    Rows are locked with SKIP LOCKED: an apply that is declaring one of them right now wins,
    and two workers running this task at once promote each gang once.
    """
    now = now or timezone.now()
    promoted = 0
    with transaction.atomic():
        due = Gang.objects.select_for_update(skip_locked=True).filter(
            provisional=True, provisional_until__lte=now
        )
        for gang in due:
            hint = (gang.declaration.get("provisional") or {}).get("min_available")
            present = gang.members.count()
            gang.min_member = max(1, hint or present)
            if gang.total_number is not None and gang.total_number < gang.min_member:
                gang.total_number = gang.min_member
            gang.provisional, gang.provisional_until = False, None
            gang.reason, gang.message = "", ""
            gang.save(
                update_fields=[
                    *("min_member", "total_number", "provisional", "provisional_until"),
                    *("reason", "message", "updated"),
                ]
            )
            event_record(
                gang=gang,
                kind=GangEventKind.CREATED,
                reason=f"no declaration within the grace period: scheduled with min_member {gang.min_member} "
                f"({present} pods present)",
            )
            logger.info("provisional gang %s promoted: min_member %d", gang.key, gang.min_member)
            promoted += 1
        if promoted:
            transaction.on_commit(_wake_scheduler)
    return promoted


def _wake_scheduler() -> None:
    from scheduler_core.tasks import cycle_trigger

    try:
        cycle_trigger()
    except Exception:
        logger.exception("could not trigger a scheduling cycle after promoting provisional gangs")
