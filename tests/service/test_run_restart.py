"""``make run``'s supervisor restarts a child that exits on its own (a Celery worker that Redis's
restart took down), backs off while it keeps failing, up to a cap, and never gives up nor stops
the others; it writes each restart where ``/healthz`` reads it.

The tests drive ``Supervisor.step`` with their own clock, so no timing decides an outcome.
"""

import importlib.util
import json
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
STEADY = [sys.executable, "-c", "import time\nwhile True: time.sleep(0.1)"]
# Exits with 3 the first time (it leaves a marker), then runs until it is stopped.
FLAKY = """
import pathlib, sys, time
marker = pathlib.Path(sys.argv[1])
if not marker.exists():
    marker.write_text("crashed once")
    sys.exit(3)
while True:
    time.sleep(0.1)
"""


@pytest.fixture
def run():
    spec = importlib.util.spec_from_file_location("run_script", ROOT / "scripts/run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_child_that_exits_is_started_again_and_the_others_keep_running(run, tmp_path, capsys):
    supervisor = run.Supervisor(
        {"web": STEADY, "worker": [sys.executable, "-c", FLAKY, str(tmp_path / "m")]},
        restarts_file=tmp_path / "restarts.json",
    )
    supervisor.start()
    try:
        web, first = supervisor.procs["web"], supervisor.procs["worker"]
        assert first.wait(timeout=60) == 3
        supervisor.step(100.0)  # notices the exit: a restart in 2 s (1 s doubled: a quick exit)
        assert supervisor.restart_at == {"worker": pytest.approx(102.0)}
        supervisor.step(101.0)
        assert supervisor.procs["worker"] is first  # not due yet
        supervisor.step(102.0)
        second = supervisor.procs["worker"]
        assert second is not first and second.poll() is None and supervisor.restarts == 1
        assert supervisor.procs["web"] is web and web.poll() is None  # untouched
        supervisor.step(103.0)
        assert supervisor.procs["worker"] is second and not supervisor.stopping
    finally:
        supervisor.on_signal(signal.SIGTERM, None)
    assert supervisor.wait() == 0  # asked to stop, and everything stopped cleanly
    assert "[run] worker exited with 3, 1 in a row within 60 s of starting: restarting it in 2 s" in (
        capsys.readouterr().out
    )
    assert not (tmp_path / "restarts.json").exists()  # the supervisor is gone: nothing to report


def test_the_restart_delay_doubles_with_each_quick_exit_up_to_its_cap_and_never_gives_up(run):
    assert [run.restart_delay(n) for n in range(8)] == [1, 2, 4, 8, 16, 30, 30, 30]
    assert run.restart_delay(10_000) == run.MAX_BACKOFF_S  # no last attempt, no overflow
    assert run.restart_delay(3, first_s=0.5, max_s=60) == 4


def test_a_child_that_keeps_exiting_is_restarted_again_and_again_and_the_web_server_stays_up(
    run, tmp_path, capsys
):
    """The exits seen after a pool process was killed: SIGKILL twice, then 1; and more."""
    exits = tmp_path / "exits"
    exits.write_text("-9 -9 1 1 1 1")
    worker = [
        sys.executable,
        "-c",
        "import os, pathlib, signal, sys\n"
        "f = pathlib.Path(sys.argv[1]); codes = f.read_text().split(); f.write_text(' '.join(codes[1:]))\n"
        "code = int(codes[0])\n"
        "os.kill(os.getpid(), signal.SIGKILL) if code < 0 else sys.exit(code)",
        str(exits),
    ]
    state = tmp_path / "restarts.json"
    supervisor = run.Supervisor({"web": STEADY, "worker": worker}, restarts_file=state)
    supervisor.start()
    web = supervisor.procs["web"]
    try:
        now = 0.0
        for _ in range(6):
            supervisor.procs["worker"].wait(timeout=60)
            supervisor.step(now)  # notices the exit
            delay = supervisor.restart_at["worker"] - now
            now += delay
            supervisor.step(now)  # restarts it
        assert supervisor.restarts == 6 and not supervisor.stopping
        assert supervisor.procs["web"] is web and web.poll() is None
        logged = json.loads(state.read_text())
        assert logged["children"]["web"] == {"restarts": 0}
        worker_log = logged["children"]["worker"]
        assert worker_log["restarts"] == 6 and worker_log["last_exit_status"] == 1
        assert set(worker_log) == {"restarts", "last_exit_status", "last_exit_at", "last_restart_at"}
    finally:
        supervisor.on_signal(signal.SIGTERM, None)
    supervisor.wait()
    assert web.returncode == -signal.SIGTERM  # stopped when asked, not before
    out = capsys.readouterr().out
    assert (
        "[run] worker exited with -9 (SIGKILL), 1 in a row within 60 s of starting: restarting it in 2 s"
        in out
    )
    assert (
        "[run] worker exited with -9 (SIGKILL), 2 in a row within 60 s of starting: restarting it in 4 s"
        in out
    )
    assert "[run] worker exited with 1, 6 in a row within 60 s of starting: restarting it in 30 s" in out
    assert "stopping the others" not in out


def test_a_child_that_ran_a_while_before_exiting_starts_its_backoff_over(run, tmp_path, capsys):
    supervisor = run.Supervisor({"worker": [sys.executable, "-c", "pass"]}, restarts_file=tmp_path / "r.json")
    supervisor.start()
    supervisor.procs["worker"].wait(timeout=60)
    for started in (0.0, 100.0, 200.0):  # each run lasted 60 s or more before it exited
        supervisor.started_at["worker"] = started
        assert supervisor.exited("worker", started + 60.0) == 1.0
    assert supervisor.quick_exits["worker"] == 0
    assert capsys.readouterr().out.count("restarting it in 1 s") == 3
