"""Celery tasks of the dashboard: trace replay runs (found by ``app.autodiscover_tasks()``).

A replay of 10,000 jobs takes minutes, longer than the project's default task time limit, so
this task has its own limits, still below the broker's visibility timeout (3,600 s) so that an
acknowledged-late task is never redelivered while it runs. A redelivered task (the worker died)
finds its run already ended, or starts it over.
"""

from __future__ import annotations

from celery import shared_task

import gangsched.celery  # noqa: F401  (the app @shared_task binds to: gangsched/__init__.py)

from .simulations import simulation_run_execute


@shared_task(ignore_result=True, time_limit=3300, soft_time_limit=3240)
def run_simulation(run_id: int) -> None:
    simulation_run_execute(run_id)
