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
their groups go through the Redis channel layer. uvicorn's workers are its own children, which
it stops when it gets the SIGTERM below.

The children run in their own process groups, so the terminal's Ctrl-C reaches only this
supervisor, which sends each child's main process exactly one SIGTERM and waits for it (a Celery
worker that got SIGINT from the terminal *and* a forwarded signal would do a cold shutdown and
drop its running tasks; its pool processes, sent a SIGTERM of their own, would die mid-task). A
second Ctrl-C or SIGTERM kills whatever is still running, whole process groups. A SIGTERM sent
to ``make run``'s whole process group (by ``timeout``, a service manager, ``kill -TERM -PGID``)
reaches this supervisor twice: from the sender, and passed on by make, which sends its child the
SIGTERM it got. The one make passes on is not a second request (``Supervisor.on_signal``): the
supervisor takes its signals with ``sigtimedwait``, which says who sent each.

Once the web server's ``/healthz`` answers 200 (the database, Redis and a worker answer), the
supervisor prints one summary: the address, the operator's user name and, on a fresh database,
its password, and how to stop (``summary``). The worker logs a line per cycle that changed
something, so the summary stays on screen until something happens (``GANGSCHED_LOG_TASKS=1``
logs every task, docs/configuration.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime
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
#: The signals that stop ``make run``.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: How long the summary waits for /healthz to answer 200 before it is printed with the status.
READY_TIMEOUT_S = 120.0


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


def manage_output(*args: str) -> str:
    """``manage`` for a command whose answer is read (its standard output)."""
    command = [PY, "manage.py", *args]
    return subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout


def prepare(nodes: int, port: int, nodes_file: str = "") -> dict:
    """Everything that must be true before the processes start; each step is idempotent. The
    operator account (``ensure_operator -o json``)."""
    manage("ensure_database")
    manage("migrate", "--noinput")
    manage("collectstatic", "--noinput", "--verbosity", "0")
    return bootstrap(nodes, port, nodes_file)


def bootstrap(nodes: int, port: int, nodes_file: str = "") -> dict:
    """First-run setup of a local install: an operator account, a cluster and work to watch.

    Run on every `make run`; each step does nothing when its thing exists already. The cluster
    is seeded only when it has no nodes: the demo fleet of ``nodes`` nodes and the demo
    workload, or, with ``nodes_file`` (a Node manifest), those nodes and no demo workload (a
    replayed cluster gets the user's own manifests). The demo is submitted only into an empty
    installation, so a restart never adds more.
    """
    operator = json.loads(manage_output("ensure_operator", "--port", str(port), "-o", "json"))
    if os.environ.get("CLUSTER_BACKEND", "simulated") == "simulated":
        if nodes_file:
            manage("seed_cluster", "--if-empty", "--nodes-file", str(Path(nodes_file).resolve()))
            return operator
        manage("seed_cluster", "--if-empty", "--nodes", str(nodes))
        manage("submit_demo", "--if-empty")
    return operator


def summary(url: str, operator: dict | None, web_processes: int, health: str = "") -> str:
    """The block ``make run`` ends its start-up with: where, who, how to stop. ``operator`` is
    ``ensure_operator -o json``'s answer (None: not prepared here, ``--skip-prepare``);
    ``health``, when not empty, says /healthz did not answer 200 in time."""
    if operator is None:
        who = ["  user:      the accounts of this database (--skip-prepare created none)"]
    elif operator.get("password"):
        who = [
            f"  user:      {operator['username']}",
            f"  password:  {operator['password']}  (shown only this once; Django keeps its hash alone)",
        ]
    else:
        who = [
            f"  user:      {operator['username']}",
            "  password:  the one shown when it was created "
            "(manage.py ensure_operator --password NEW sets another)",
        ]
    rule = "-" * 78
    lines = [
        rule,
        f"  gangsched is up: {url}",
        *who,
        "  stop:      Ctrl-C (or one SIGTERM); a second one kills what is still running",
        f"  running:   web ({web_processes} uvicorn process{'es' if web_processes != 1 else ''}), "
        "Celery worker, beat; below, a line per change",
    ]
    if health:
        lines.append(f"  health:    {health}")
    return "\n".join([*lines, rule])


def health_status(url: str, timeout_s: float = 5.0) -> int | None:
    """The HTTP status of GET ``url``, or None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


#: The keys Celery workers write when ready and every few seconds (scheduler_core/worker/heartbeats.py).
HEARTBEAT_KEYS = "gangsched:heartbeat:*"


def worker_ready_since(started_at: float, redis_url: str | None = None) -> bool:
    """A worker wrote its heartbeat (the time, ISO 8601) since ``started_at`` (epoch seconds):
    it is ready. Before that, /healthz answers 503 and the web server logs each such answer as an
    error, so the summary does not ask it yet."""
    import redis

    url = redis_url or os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    try:
        for key in client.scan_iter(HEARTBEAT_KEYS):
            value = client.get(key)
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                if datetime.fromisoformat(value.decode()).timestamp() >= started_at - 1:
                    return True
    except redis.RedisError:
        return False
    finally:
        client.close()
    return False


def announce_when_ready(
    healthz: str,
    text,
    stopped: threading.Event,
    timeout_s: float = READY_TIMEOUT_S,
    every_s: float = 0.5,
    worker_ready=lambda: True,
) -> None:
    """Print ``text()`` once ``worker_ready()`` and ``healthz`` answers 200, or ``text(why)``
    after ``timeout_s``; nothing if ``stopped`` is set first."""
    deadline = time.monotonic() + timeout_s
    status = None
    while not stopped.is_set() and not worker_ready() and time.monotonic() < deadline:
        stopped.wait(every_s)
    while not stopped.is_set():
        status = health_status(healthz)
        if status == 200:
            print(text(""), flush=True)
            return
        if time.monotonic() > deadline:
            why = f"GET /healthz answered {status}" if status else "GET /healthz did not answer"
            print(text(f"{why} after {timeout_s:g} s; it says which part is down"), flush=True)
            return
        stopped.wait(every_s)


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
        self.parent = os.getppid()  # make, under `make run`
        # Set when STOP_SIGNALS are blocked and taken by sigtimedwait (main(); see on_signal).
        self.takes_signals = False
        self.stopped = threading.Event()

    def start(self) -> None:
        for name in self.cmds:
            self.spawn(name)

    def spawn(self, name: str) -> None:
        self.procs[name] = subprocess.Popen(
            self.cmds[name], cwd=ROOT, env=self.env, start_new_session=True, preexec_fn=_unblock_stop_signals
        )
        self.started_at[name] = time.monotonic()
        print(f"[run] started {name} (pid {self.procs[name].pid})", flush=True)

    def on_signal(self, signum, _frame=None, *, sender: int | None = None) -> None:
        """The first SIGINT or SIGTERM stops the children gracefully, the next kills them; but
        not one ``sender`` (a pid, when known) is our parent: make passes on to its child the
        SIGTERM it got, which a SIGTERM to the whole process group brought here already."""
        name = signal.Signals(signum).name
        if self.stopping:
            if sender is not None and sender == self.parent and sender > 1:
                print(f"[run] {name} passed on by make: stopping already (again to kill)", flush=True)
                return
            print("[run] second signal: killing", flush=True)
            self.send(signal.SIGKILL)
            return
        print(f"[run] {name}: stopping (again to kill)", flush=True)
        self.stopping = True
        self.stopped.set()
        self.send(signal.SIGTERM)

    def pause(self, seconds: float) -> None:
        """Sleep, or wait as long for a stop signal and act on it."""
        if not self.takes_signals:
            time.sleep(seconds)
            return
        info = signal.sigtimedwait(STOP_SIGNALS, seconds)
        if info is not None:
            self.on_signal(info.si_signo, sender=info.si_pid)

    def send(self, sig: int) -> None:
        """``sig`` to each running child: SIGTERM to its main process, which stops its own
        processes (uvicorn its workers, Celery its pool once their tasks are done: a pool process
        that got the SIGTERM itself would die mid-task); SIGKILL to its whole process group."""
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):  # exited meanwhile
                    if sig == signal.SIGKILL:
                        os.killpg(proc.pid, sig)
                    else:
                        os.kill(proc.pid, sig)

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
            self.pause(0.2)
        self.log.remove()
        return 0 if all(p.returncode in (0, -signal.SIGTERM) for p in self.procs.values()) else 1


def _unblock_stop_signals() -> None:
    """In a child, before it runs its program: the stop signals, which the supervisor blocks to
    take them with sigtimedwait, are delivered to it as usual."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


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
    operator = None if args.skip_prepare else prepare(args.nodes, args.port, args.nodes_file)

    sup = Supervisor(commands(args.host, args.port, web_processes))
    # From here on the stop signals wait for the supervisor's sigtimedwait, which says who sent
    # each (on_signal); threads started below inherit the blocked mask, the children do not.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    sup.takes_signals = True
    started_at = time.time()
    sup.start()
    local = "127.0.0.1" if args.host in ("0.0.0.0", "::", "") else args.host
    url = f"http://{args.host}:{args.port}/"
    healthz = f"http://{local}:{args.port}/healthz"
    text = lambda health: summary(url, operator, web_processes, health)  # noqa: E731
    threading.Thread(
        target=announce_when_ready,
        args=(healthz, text, sup.stopped),
        kwargs={"worker_ready": lambda: worker_ready_since(started_at)},
        daemon=True,
    ).start()
    return sup.wait()


if __name__ == "__main__":
    sys.exit(main())
