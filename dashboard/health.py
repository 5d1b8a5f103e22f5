"""Health of what gangsched depends on: PostgreSQL, Redis and the Celery workers.

Each check returns a CheckResult and never raises, so one broken dependency shows up as a failed
check in the report instead of a 500. ``health_report`` takes the checks as arguments so tests can
swap one out (e.g. a Celery app pointed at a broker where no worker listens).

Under ``make run`` the report also says how often its supervisor restarted each process
(``supervisor_restarts``): a worker that keeps being killed is not a failed check (its
restarts keep the loop going) but is worth seeing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from django.conf import settings
from django.db import connection

# Short timeouts: /healthz is polled by load balancers and must answer well within their limits.
CONNECT_TIMEOUT_S = 1.0
CELERY_PING_TIMEOUT_S = 1.0


@dataclass(frozen=True, slots=True)
class CheckResult:
    ok: bool
    detail: Any

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "detail": self.detail}


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def check_database() -> CheckResult:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure means "down"; the detail says which
        return CheckResult(False, _error(exc))
    return CheckResult(True, "SELECT 1 answered")


def check_redis(url: str | None = None) -> CheckResult:
    url = url or settings.REDIS_URL
    client = redis.Redis.from_url(
        url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=CONNECT_TIMEOUT_S
    )
    try:
        client.ping()
    except Exception as exc:
        return CheckResult(False, _error(exc))
    finally:
        client.close()
    return CheckResult(True, "PING answered")


def check_celery(app=None, timeout: float = CELERY_PING_TIMEOUT_S) -> CheckResult:
    """Broadcast a ping and list the workers that answered within ``timeout``; none is a failure."""
    if app is None:
        from gangsched.celery import app
    try:
        with app.connection_for_write() as conn:
            # Fail fast when the broker is down instead of retrying for the default 100 times.
            conn.ensure_connection(max_retries=1, timeout=CONNECT_TIMEOUT_S)
            replies = app.control.ping(timeout=timeout, connection=conn)
    except Exception as exc:
        return CheckResult(False, {"workers": [], "error": _error(exc)})
    workers = sorted(name for reply in replies for name in reply)
    if not workers:
        return CheckResult(False, {"workers": [], "error": f"no worker answered a ping within {timeout:g}s"})
    return CheckResult(True, {"workers": workers})


Check = Callable[[], CheckResult]


def default_checks() -> dict[str, Check]:
    return {"database": check_database, "redis": check_redis, "celery": check_celery}


#: What ``supervisor_restarts`` reports of each process (scripts/run.py's RestartLog writes them).
RESTART_FIELDS = ("restarts", "last_exit_status", "last_exit_at", "last_restart_at")


def supervisor_restarts(path: str | None = None) -> dict[str, dict[str, Any]] | None:
    """Per process ``make run`` supervises: restarts, last exit status, when it last exited and
    was started again. None when the processes were not started by ``make run`` (no
    ``GANGSCHED_RESTARTS_FILE``) or its file cannot be read."""
    path = settings.GANGSCHED_RESTARTS_FILE if path is None else path
    if not path:
        return None
    try:
        children = json.loads(Path(path).read_text())["children"]
        return {
            str(name): {field: child[field] for field in RESTART_FIELDS if field in child}
            for name, child in children.items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def health_report(checks: Mapping[str, Check] | None = None) -> dict[str, Any]:
    """``{"status": "ok"|"degraded", "checks": {name: {"ok": bool, "detail": ...}}}``, and
    ``"restarts": {process: {...}}`` under ``make run`` (see ``supervisor_restarts``)."""
    results = {name: check() for name, check in (checks or default_checks()).items()}
    status = "ok" if all(r.ok for r in results.values()) else "degraded"
    report: dict[str, Any] = {"status": status, "checks": {name: r.as_dict() for name, r in results.items()}}
    restarts = supervisor_restarts()
    if restarts is not None:
        report["restarts"] = restarts
    return report
