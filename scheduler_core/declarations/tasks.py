"""Celery tasks of the declarations package (found by the worker: gangsched/celery.py)."""

from __future__ import annotations

from celery import shared_task

import gangsched.celery  # noqa: F401  (the app @shared_task binds to: gangsched/__init__.py)

from .provisional import provisional_gangs_promote


@shared_task(ignore_result=True)
def promote_provisional() -> int:
    """Provisional gangs past their grace period become real gangs (idempotent)."""
    return provisional_gangs_promote()
