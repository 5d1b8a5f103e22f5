"""The scheduler's database sessions carry their own application name.

PostgreSQL shows it in ``pg_stat_activity`` (which sessions are the scheduler's), and the API's
read-cache triggers read it (dashboard/migrations/0009): a change the scheduler made (a bind, a
start, a finish, a timeout) may reach an API poller up to a second late, while any other change
reaches it at once (dashboard/api/read_cache.py). The Celery worker, which runs the scheduling
cycle, the kubelet ticks and the sweeps, names its sessions when it starts; any other process
keeps the default name, so its changes are never shown late.
"""

from __future__ import annotations

SCHEDULER_APPLICATION_NAME = "gangsched-scheduler"


def name_scheduler_sessions(**_signal) -> None:
    """Give this process's next database sessions the scheduler's name. Connections opened
    before (and the pool that made them) are closed, so none keeps the old name."""
    from django.db import connections

    connection = connections["default"]
    connection.settings_dict.setdefault("OPTIONS", {})["application_name"] = SCHEDULER_APPLICATION_NAME
    connection.close()
    if hasattr(connection, "close_pool"):
        connection.close_pool()


def connect_signals() -> None:
    """Name the sessions when a Celery worker starts, before it forks its pool's processes."""
    from celery.signals import worker_init

    worker_init.connect(name_scheduler_sessions, weak=False, dispatch_uid="gangsched-session-names")
