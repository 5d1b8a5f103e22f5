"""Creating the main database and checking that PostgreSQL and Redis answer, before Django needs them.

Used by ``manage.py ensure_database`` and ``manage.py check_services`` (both run by ``make run``).
Both connect to PostgreSQL's ``postgres`` maintenance database, because the configured database
may not exist yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg
import redis
from psycopg import errors, sql

CONNECT_TIMEOUT_S = 2

START_POSTGRES = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
START_REDIS = 'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no'


def _maintenance_conninfo(db: Mapping[str, Any]) -> dict[str, Any]:
    params = {
        "dbname": "postgres",
        "host": db.get("HOST") or None,
        "port": db.get("PORT") or None,
        "user": db.get("USER") or None,
        "password": db.get("PASSWORD") or None,
        "connect_timeout": CONNECT_TIMEOUT_S,
    }
    return {k: v for k, v in params.items() if v is not None}


def create_database_if_missing(db: Mapping[str, Any], name: str | None = None) -> bool:
    """Create the database ``name`` (default: ``db["NAME"]``) unless it exists; True if created.

    ``db`` is a Django DATABASES entry. CREATE DATABASE cannot run in a transaction, hence
    autocommit; a concurrent creator winning the race is fine.
    """
    name = name or db["NAME"]
    with psycopg.connect(**_maintenance_conninfo(db), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return False
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except errors.DuplicateDatabase:
            return False
    return True


def drop_database(db: Mapping[str, Any], name: str) -> None:
    with psycopg.connect(**_maintenance_conninfo(db), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))


def postgres_problem(db: Mapping[str, Any]) -> str | None:
    try:
        with psycopg.connect(**_maintenance_conninfo(db)):
            return None
    except psycopg.Error as exc:
        where = f"{db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}"
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"PostgreSQL at {where} ({first_line}); start it with: {START_POSTGRES}"


def postgres_warnings(db: Mapping[str, Any]) -> list[str]:
    """Settings of the PostgreSQL server that hurt gangsched as its tables grow (empty when it
    is unreachable: ``postgres_problem`` says so). Autovacuum off: every bind, start and finish
    updates a gang and a member, so without vacuum and analyze the dead rows pile up and the
    planner's row counts go stale; measured on this project's CI configuration, a submitter's
    gang list took 1.0 ms with 16,000 gangs (a bitmap scan and sort of all of theirs) and
    0.06 ms after one ANALYZE (the index, 21 rows; docs/operations.md)."""
    try:
        with psycopg.connect(**_maintenance_conninfo(db)) as conn:
            autovacuum = conn.execute("SHOW autovacuum").fetchone()[0]
    except psycopg.Error:
        return []
    if autovacuum == "on":
        return []
    return [
        "PostgreSQL runs with autovacuum off: gangs and members are updated at every bind, start "
        "and finish, so their tables bloat and gang lists slow down as they grow; turn it on "
        "(ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf();)"
    ]


def redis_problem(url: str) -> str | None:
    client = redis.Redis.from_url(
        url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=CONNECT_TIMEOUT_S
    )
    try:
        client.ping()
        return None
    except redis.RedisError as exc:
        return f"Redis at {url} ({exc}); start it with: {START_REDIS}"
    finally:
        client.close()


def services_problem(db: Mapping[str, Any], redis_url: str) -> str | None:
    """One line naming every unreachable service and how to start it, or None when all answer."""
    problems = [p for p in (postgres_problem(db), redis_problem(redis_url)) if p]
    if not problems:
        return None
    return "Not reachable: " + " | ".join(problems)
