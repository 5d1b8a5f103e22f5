"""The scheduler's and the web processes' database sessions carry their own application names.

PostgreSQL shows them in ``pg_stat_activity`` (whose sessions are whose), and the API's
read-cache triggers read them (dashboard/migrations/0009): a change the scheduler made (a bind,
a start, a finish, a timeout) may reach an API poller up to a second late, while any other
change reaches it at once (dashboard/api/read_cache.py); and a web process knows the
notifications of its own writes, which it has applied already. The Celery worker, which runs the
scheduling cycle, the kubelet ticks and the sweeps, names its sessions when it starts, and each
web process when the ASGI server starts it (gangsched/asgi.py, the lifespan startup); any other
process keeps the default name, so its changes are never shown late.
"""

from __future__ import annotations

import os

SCHEDULER_APPLICATION_NAME = "gangsched-scheduler"
WEB_APPLICATION_PREFIX = "gangsched-web-"


def web_application_name(pid: int | None = None) -> str:
    return f"{WEB_APPLICATION_PREFIX}{os.getpid() if pid is None else pid}"


def name_sessions(name: str) -> None:
    """Give this process's next database sessions ``name``. Connections opened before (and the
    pool that made them) are closed, so none keeps the old name."""
    from django.db import connections

    connection = connections["default"]
    connection.settings_dict.setdefault("OPTIONS", {})["application_name"] = name
    connection.close()
    if hasattr(connection, "close_pool"):
        connection.close_pool()


def name_scheduler_sessions(**_signal) -> None:
    name_sessions(SCHEDULER_APPLICATION_NAME)


def name_web_sessions() -> None:
    name_sessions(web_application_name())


def connect_signals() -> None:
    """Name the sessions when a Celery worker starts, before it forks its pool's processes."""
    from celery.signals import worker_init

    worker_init.connect(name_scheduler_sessions, weak=False, dispatch_uid="gangsched-session-names")
