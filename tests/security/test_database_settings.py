"""Database connections under ASGI: none kept per request thread by default (daphne runs each
request in a thread of its own, and kept connections exhausted PostgreSQL under bench/load.py),
and an opt-in psycopg pool (``DATABASE_POOL_MAX_SIZE``) that bounds them per process."""

from .processes import manage

SHOW = (
    "from django.db import connection; s = connection.settings_dict; "
    "print('@', s['CONN_MAX_AGE'], s.get('OPTIONS', {}).get('pool', {}).get('max_size'))"
)


def database_settings(**env: str) -> str:
    result = manage("shell", "-c", SHOW, drop=("DATABASE_*",), **env)
    assert result.returncode == 0, result.stderr
    return next(line for line in result.stdout.splitlines() if line.startswith("@"))


def test_no_persistent_connections_by_default_and_an_opt_in_pool():
    assert database_settings() == "@ 0 None"
    assert database_settings(DATABASE_CONN_MAX_AGE="60") == "@ 60 None"
    assert database_settings(DATABASE_POOL_MAX_SIZE="10", DATABASE_CONN_MAX_AGE="60") == "@ 0 10"
