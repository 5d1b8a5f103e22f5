"""Celery tasks of the declarations package (imported by SchedulerCoreConfig.ready())."""

from __future__ import annotations

from celery import shared_task

from .provisional import provisional_gangs_promote


@shared_task(ignore_result=True)
def promote_provisional() -> int:
    """Provisional gangs past their grace period become real gangs (idempotent)."""
    return provisional_gangs_promote()
