#!/usr/bin/env python
"""Run gangsched locally: prepare the database, then supervise the web server, a Celery worker and beat.

``make run`` calls this with the virtualenv's Python after checking that PostgreSQL and Redis
answer. Ctrl-C (SIGINT) or SIGTERM stops all three cleanly. One that exits on its own is started
again, as a Deployment's CrashLoopBackOff would, for as long as ``make run`` runs (a Celery
worker can exit when Redis restarts under it, or when its pool processes are killed): after 1 s,
doubling up to 30 s while it keeps exiting within a minute of its start (``restart_delay``). The
others are never stopped for it: the web server stays up to show what happens. Each restart is
logged with the exit status and the delay, and written to ``.run/restarts.json``
(``RestartLog``), which the children find through ``GANGSCHED_RESTARTS_FILE``: ``/healthz`` and
the Overview page report it.

The web server is uvicorn with ``WEB_CONCURRENCY`` worker processes (default: one per CPU),
started through gangsched/web_server.py, so it believes ``X-Forwarded-For`` only from
``GANGSCHED_TRUSTED_PROXIES`` (by default from no one, though every local client is on 127.0.0.1).
Django runs a request's synchronous code (every DRF view) in one thread per process, so one
process serves one request at a time; several use every core. Websockets work across them:
their groups go through the Redis channel layer. uvicorn's workers are its own children, in the
web server's process group, so the one SIGTERM below reaches them too.

The children run in their own process groups, so the terminal's Ctrl-C reaches only this
supervisor, which sends each child exactly one SIGTERM (a Celery worker that got SIGINT from the
terminal *and* a forwarded signal would do a cold shutdown and drop its running tasks). A second
Ctrl-C kills whatever is still running.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN_DIR = ROOT / ".run"  # beat's schedule file; git-ignored
PY = sys.executable
# How long a graceful stop may take before the children are killed. A worker finishes its
# running tasks first, so this is the task soft time limit plus a margin.
STOP_GRACE_S = 250
# Restarting a child that exited on its own (see the module docstring).
STABLE_S = 60.0
MAX_BACKOFF_S = 30.0
RESTARTS_FILE = RUN_DIR / "restarts.json"


def restart_delay(quick_exits: int, *, first_s: float = 1.0, max_s: float = MAX_BACKOFF_S) -> float:
    """Seconds to wait before starting again a child that exited: ``first_s`` after a run that
    lasted (``quick_exits`` 0), doubling with each exit in a row within ``STABLE_S`` of its start,
    never more than ``max_s``. There is no last attempt: a child is restarted for as long as the
    supervisor runs."""
    return min(max_s, first_s * 2 ** min(quick_exits, 32))


def exit_status(returncode: int) -> str:
    """``1``, or ``-9 (SIGKILL)`` for a child killed by a signal."""
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"{returncode} ({signal.Signals(-returncode).name})"
    return str(returncode)


class RestartLog:
    """Per child: how many times it was restarted, its last exit status, when it last exited and
    was started again, and the delay before the pending restart. Written whole to a JSON file
    (replaced atomically, so a reader never sees half of it) at every change; removed when the
    supervisor ends, so a web server started without it reports no restarts."""

    def __init__(self, path: Path, names) -> None:
        self.path = path
        self.children = {name: {"restarts": 0} for name in names}
        self.write()

    def exited(self, name: str, returncode: int, delay_s: float) -> None:
        self.children[name].update(
            last_exit_status=returncode, last_exit_at=_utc_now(), next_restart_in_s=delay_s
        )
        self.write()

    def restarted(self, name: str) -> None:
        child = self.children[name]
        child["restarts"] += 1
        child["last_restart_at"] = _utc_now()
        child.pop("next_restart_in_s", None)
        self.write()

    def write(self) -> None:
        self.path.parent.mkdir(exist_ok=True)
        partial = self.path.with_suffix(".tmp")
        partial.write_text(json.dumps({"supervisor_pid": os.getpid(), "children": self.children}, indent=2))
        os.replace(partial, self.path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def manage(*args: str) -> None:
    subprocess.run([PY, "manage.py", *args], cwd=ROOT, check=True)


def prepare(nodes: int, port: int, nodes_file: str = "") -> None:
    """Everything that must be true before the processes start; each step is idempotent."""
    manage("ensure_database")
    manage("migrate", "--noinput")
    manage("collectstatic", "--noinput", "--verbosity", "0")
    bootstrap(nodes, port, nodes_file)


def bootstrap(nodes: int, port: int, nodes_file: str = "") -> None:
    """First-run setup of a local install: an operator account, a cluster and work to watch.

    Run on every `make run`; each step does nothing when its thing exists already. The cluster
    is seeded only when it has no nodes: the demo fleet of ``nodes`` nodes and the demo
    workload, or, with ``nodes_file`` (a Node manifest), those nodes and no demo workload (a
    replayed cluster gets the user's own manifests). The demo is submitted only into an empty
    installation, so a restart never adds more.
    """
    manage("ensure_operator", "--port", str(port))
    if os.environ.get("CLUSTER_BACKEND", "simulated") == "simulated":
        if nodes_file:
            manage("seed_cluster", "--if-empty", "--nodes-file", str(Path(nodes_file).resolve()))
            return
        manage("seed_cluster", "--if-empty", "--nodes", str(nodes))
        manage("submit_demo", "--if-empty")


# Seconds uvicorn waits for open connections (websockets, slow requests) when stopping.
WEB_STOP_GRACE_S = 10


def web_concurrency(value: str | None = None, cpus: int | None = None) -> int:
    """Web server processes: ``WEB_CONCURRENCY`` (the name Heroku, gunicorn and uvicorn use),
    or one per CPU this process may run on when it is unset or empty."""
    value = os.environ.get("WEB_CONCURRENCY", "") if value is None else value
    if not value.strip():
        if cpus is None:
            cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return max(1, cpus or 1)
    try:
        processes = int(value.strip())
    except ValueError:
        processes = 0
    if processes < 1:
        raise ValueError(f"WEB_CONCURRENCY={value!r}: give a number of web processes, at least 1")
    return processes


def commands(host: str, port: int, web_processes: int = 1) -> dict[str, list[str]]:
    return {
        "web": [
            PY,
            "-m",
            "gangsched.web_server",  # uvicorn, trusting forwarded headers from GANGSCHED_TRUSTED_PROXIES only
            "gangsched.asgi:application",
            "--host",
            host,
            "--port",
            str(port),
            "--workers",
            str(web_processes),
            "--lifespan",
            "on",  # the startup names the database sessions (gangsched/asgi.py)
            "--no-access-log",  # as daphne: a line per request costs more than the request
            "--timeout-graceful-shutdown",
            str(WEB_STOP_GRACE_S),
        ],
        "worker": [
            PY,
            "-m",
            "celery",
            "-A",
            "gangsched",
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            "2",
            "--hostname",
            "worker@%h",
        ],
        "beat": [
            PY,
            "-m",
            "celery",
            "-A",
            "gangsched",
            "beat",
            "--loglevel",
            "INFO",
            "--schedule",
            str(RUN_DIR / "celerybeat-schedule"),
        ],
    }


class Supervisor:
    def __init__(
        self,
        cmds: dict[str, list[str]],
        *,
        stable_s: float = STABLE_S,
        first_backoff_s: float = 1.0,
        restarts_file: Path = RESTARTS_FILE,
    ):
        self.cmds = cmds
        self.procs: dict[str, subprocess.Popen] = {}
        self.stopping = False
        self.stable_s = stable_s
        self.first_backoff_s = first_backoff_s
        self.started_at: dict[str, float] = {}
        self.quick_exits: dict[str, int] = {name: 0 for name in cmds}
        self.restart_at: dict[str, float] = {}  # name -> when its pending restart is due
        self.restarts = 0
        self.log = RestartLog(restarts_file, cmds)
        self.env = {**os.environ, "GANGSCHED_RESTARTS_FILE": str(restarts_file)}

    def start(self) -> None:
        for name in self.cmds:
            self.spawn(name)

    def spawn(self, name: str) -> None:
        self.procs[name] = subprocess.Popen(self.cmds[name], cwd=ROOT, env=self.env, start_new_session=True)
        self.started_at[name] = time.monotonic()
        print(f"[run] started {name} (pid {self.procs[name].pid})", flush=True)

    def on_signal(self, signum, _frame) -> None:
        if self.stopping:
            print("[run] second signal: killing", flush=True)
            self.send(signal.SIGKILL)
            return
        print(f"[run] {signal.Signals(signum).name}: stopping (again to kill)", flush=True)
        self.stopping = True
        self.send(signal.SIGTERM)

    def send(self, sig: int) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):  # exited meanwhile
                    os.killpg(proc.pid, sig)

    def exited(self, name: str, now: float) -> float:
        """A child exited on its own: schedule its restart; the delay before it."""
        proc = self.procs[name]
        quick = now - self.started_at[name] < self.stable_s
        self.quick_exits[name] = self.quick_exits[name] + 1 if quick else 0
        delay = restart_delay(self.quick_exits[name], first_s=self.first_backoff_s)
        in_a_row = (
            f", {self.quick_exits[name]} in a row within {self.stable_s:g} s of starting" if quick else ""
        )
        status = exit_status(proc.returncode)
        print(f"[run] {name} exited with {status}{in_a_row}: restarting it in {delay:g} s", flush=True)
        self.restart_at[name] = now + delay
        self.log.exited(name, proc.returncode, delay)
        return delay

    def step(self, now: float) -> None:
        """One look at the children: start those whose restart is due, notice those that exited."""
        if self.stopping:
            return
        for name, proc in self.procs.items():
            if name in self.restart_at:
                if now >= self.restart_at[name]:
                    del self.restart_at[name]
                    self.restarts += 1
                    self.spawn(name)
                    self.log.restarted(name)
                continue
            if proc.poll() is not None:
                self.exited(name, now)

    def wait(self) -> int:
        """Supervise until asked to stop; 0 only if every child then exited cleanly."""
        deadline = None
        while not self.stopping or any(p.poll() is None for p in self.procs.values()):
            self.step(time.monotonic())
            if self.stopping:
                deadline = deadline or time.monotonic() + STOP_GRACE_S
                if time.monotonic() > deadline:
                    print("[run] grace period over: killing", flush=True)
                    self.send(signal.SIGKILL)
            time.sleep(0.2)
        self.log.remove()
        return 0 if all(p.returncode in (0, -signal.SIGTERM) for p in self.procs.values()) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--skip-prepare", action="store_true", help="do not migrate/collectstatic first")
    parser.add_argument(
        "--nodes", type=int, default=16, help="nodes of the simulated cluster, when it is seeded (empty)"
    )
    parser.add_argument(
        "--nodes-file",
        default=os.environ.get("GANGSCHED_NODES_FILE", ""),
        help="seed the simulated cluster from this Node manifest when it has no nodes "
        "(default: $GANGSCHED_NODES_FILE)",
    )
    args = parser.parse_args()

    try:
        web_processes = web_concurrency()
    except ValueError as error:
        parser.error(str(error))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gangsched.settings")
    RUN_DIR.mkdir(exist_ok=True)
    if not args.skip_prepare:
        prepare(args.nodes, args.port, args.nodes_file)

    sup = Supervisor(commands(args.host, args.port, web_processes))
    signal.signal(signal.SIGINT, sup.on_signal)
    signal.signal(signal.SIGTERM, sup.on_signal)
    sup.start()
    print(
        f"[run] gangsched on http://{args.host}:{args.port}/ ({web_processes} web processes; Ctrl-C to stop)",
        flush=True,
    )
    return sup.wait()


if __name__ == "__main__":
    sys.exit(main())
