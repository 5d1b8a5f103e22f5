"""A web process takes its database connections from a pool (gangsched/web_pool.py): under
bench/load.py, opening a PostgreSQL connection per request was most of what a submission waited
for. Settings are read once per process, so each case runs in a fresh one."""

from __future__ import annotations

from django.conf import settings

from tests.security.processes import manage

SHOW = (
    "from django.db import close_old_connections, connection\n"
    "from gangsched.web_pool import pool_web_connections\n"
    "pooled = pool_web_connections()\n"
    "backends = set()\n"
    "for request in range(5):\n"
    "    with connection.cursor() as cursor:\n"
    "        cursor.execute('SELECT pg_backend_pid()')\n"
    "        backends.add(cursor.fetchone()[0])\n"
    "    close_old_connections()  # what Django does when a request ends\n"
    "s = connection.settings_dict\n"
    "size = s['OPTIONS'].get('pool', {}).get('max_size')\n"
    "print('@', pooled, s['CONN_MAX_AGE'], size, len(backends) <= 2)\n"
)


def web_process(**env: str) -> str:
    """What a web process's startup made of its connections: whether it pooled them, then
    ``CONN_MAX_AGE``, the pool's size and whether five requests shared PostgreSQL backends (at
    most two: the pool's first connection may still be opening when the first request asks)."""
    database = settings.DATABASES["default"]
    url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/postgres"
    result = manage("shell", "-c", SHOW, drop=("DATABASE_*",), DATABASE_URL=url, **env)
    assert result.returncode == 0, result.stderr
    return next(line for line in result.stdout.splitlines() if line.startswith("@"))


def test_a_web_process_reuses_pooled_connections_across_requests():
    assert web_process() == "@ True 0 10 True"


def test_a_configured_pool_or_kept_connections_are_left_as_they_are():
    assert web_process(DATABASE_POOL_MAX_SIZE="4") == "@ False 0 4 True"
    assert web_process(DATABASE_CONN_MAX_AGE="60") == "@ False 60 None True"
