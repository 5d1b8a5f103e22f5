"""Private PostgreSQL and Redis servers that a test may crash and restart.

The machine's shared servers (5432, 6379) serve other test runs and CI, so the restart tests
start their own: PostgreSQL 15 from ``initdb`` in a temporary directory (trust auth, no fsync,
a free port; run as the ``postgres`` user when the tests run as root, as PostgreSQL refuses to
run as root) and ``redis-server`` with no persistence on a free port. The schema is copied from
the test database with ``pg_dump --schema-only``, which takes a second where migrating takes
many. Every server is stopped and its directory removed by the fixture's finalizer, whatever
the test did.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
import redis

PG_BIN = Path("/usr/lib/postgresql/15/bin")
DATABASE = "gangsched_private"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if condition():
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not happen within {timeout:.0f}s")


class PrivatePostgres:
    def __init__(self) -> None:
        if not (PG_BIN / "initdb").exists():
            raise FileNotFoundError(f"{PG_BIN / 'initdb'} is not installed")
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="gangsched-faults-pg-"))
        self.data = self.directory / "data"
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")
        subprocess.run(
            _as_postgres(
                [str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "-N"]
            ),
            check=True,
            capture_output=True,
        )
        self.start()

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{DATABASE}"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            _as_postgres(
                [
                    str(PG_BIN / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-o",
                    options,
                    "-l",
                    str(self.directory / "log"),
                ]
                + ["-w", "start"]
            ),
            check=True,
            capture_output=True,
        )

    def crash(self) -> None:
        """Stop at once, as a power cut would (``-m immediate``: no shutdown checkpoint)."""
        subprocess.run(
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"]),
            check=True,
            capture_output=True,
        )

    def restart(self) -> None:
        self.crash()
        self.start()

    def load_schema(self, source_url: str) -> None:
        """Create the database and copy the schema of ``source_url`` into it."""
        with psycopg.connect(f"postgres://postgres@127.0.0.1:{self.port}/postgres", autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {DATABASE}")
        dump = subprocess.run(
            [str(PG_BIN / "pg_dump"), "--schema-only", "--no-owner", source_url],
            check=True,
            capture_output=True,
        ).stdout
        # psql, not a driver: the dump holds psql commands (\\restrict since 15.14).
        subprocess.run(
            [str(PG_BIN / "psql"), "-q", "-v", "ON_ERROR_STOP=1", self.url],
            input=dump,
            check=True,
            capture_output=True,
        )

    def close(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.crash()
        shutil.rmtree(self.directory, ignore_errors=True)


class PrivateRedis:
    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--daemonize", "no"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _until(lambda: redis.Redis(port=self.port, socket_timeout=1).ping(), 20, "redis to answer")

    def crash(self) -> None:
        """SIGKILL: queued and unacknowledged messages are lost with it (no persistence)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def restart(self) -> None:
        self.crash()
        self.start()

    def close(self) -> None:
        self.crash()
