"""Real processes for the fault tests: Celery workers and beats, a PostgreSQL lock to stop a
cycle at a chosen point, and a SIGKILL for the pool process that runs a cycle."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
from django.db import connection

from scheduler_core.models import SchedulerLease
from tests.loop.workers import ROOT, Worker, database_url, wait_for

__all__ = ["Beat", "Blocker", "Worker", "cycle_pid", "kill_cycle", "wait_for"]


class Beat(Worker):
    """A ``celery beat`` subprocess with its own schedule file (two may run by mistake); stopped
    and killed as a worker is."""

    def __init__(self, name: str, directory: Path, **env: str) -> None:
        environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "gangsched.settings",
            "DATABASE_URL": database_url(),
            **env,
        }
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "celery", "-A", "gangsched", "beat"),
                *("--schedule", str(directory / f"{name}-schedule"), "--loglevel", "WARNING"),
            ],
            cwd=ROOT,
            env=environment,
            start_new_session=True,
        )


def cycle_pid(worker: Worker) -> int | None:
    """The pid of ``worker``'s pool process that holds the scheduler lease, if one does.

    The lease holder is ``hostname:pid:task id`` (scheduler_core/tasks.py); the pid is checked to
    be a child of ``worker``'s main process, so only a process this test started is ever killed.
    """
    holder = SchedulerLease.objects.filter(name="scheduler").values_list("holder", flat=True).first() or ""
    parts = holder.split(":")
    if len(parts) < 3 or not parts[1].isdigit():
        return None
    pid = int(parts[1])
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    parent = int(stat.rsplit(")", 1)[1].split()[1])
    return pid if parent == worker.process.pid else None


def kill_cycle(worker: Worker, pid: int) -> None:
    """SIGKILL the pool process running a cycle (the worker's main process forks a new one; the
    task, acknowledged late, is delivered again) and wait until it is gone."""
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not _alive(pid), timeout=10, interval=0.02, what=f"pool process {pid} to die")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


class Blocker:
    """A second PostgreSQL session that holds a lock a cycle will need, so the cycle stops at a
    known point (its transaction open, waiting) until ``release()``."""

    def __init__(self) -> None:
        self.connection = psycopg.connect(database_url())
        self.pid = self.connection.info.backend_pid

    def lock_nodes(self) -> None:
        """Binds lock their nodes FOR UPDATE: a cycle stops inside its bind transaction."""
        self.connection.execute("SELECT name FROM scheduler_core_node FOR UPDATE")

    def pend(self, member_id: int) -> None:
        """The gang of ``member_id`` locked FOR UPDATE: a cycle that decides to bind that pod
        writes its bind intents, then waits on the gang's row (marking it satisfied), inside the
        transaction that writes its decisions."""
        self.connection.execute(
            "SELECT g.id FROM scheduler_core_gang g JOIN scheduler_core_member m ON m.gang_id = g.id"
            " WHERE m.id = %s FOR UPDATE OF g",
            [member_id],
        )

    def hold_lease(self) -> bool:
        """Lock the scheduler lease's row, so that no cycle can take the lease (a taker waits for
        this lock) until ``release()``; True if nobody held the lease, False if a cycle runs (then
        the caller releases and tries again)."""
        row = self.connection.execute(
            f"SELECT holder FROM {SchedulerLease._meta.db_table} WHERE name = 'scheduler' FOR UPDATE"
        ).fetchone()
        return row is None or row[0] == ""

    def waiting(self) -> int:
        """How many other sessions wait for one of this session's locks."""
        return len(self.waiters())

    def waiters(self) -> set[int]:
        """The backend pids of the sessions that wait for one of this session's locks."""
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))", [self.pid]
            )
            return {pid for (pid,) in cursor.fetchall()}

    def release(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self.connection.rollback()

    def close(self) -> None:
        self.release()
        self.connection.close()
