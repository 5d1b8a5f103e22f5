"""``make run``'s supervisor restarts a child that exits on its own (a Celery worker that Redis's
restart took down), backs off while it keeps failing, and gives up on one that cannot start.

The tests drive ``Supervisor.step`` with their own clock, so no timing decides an outcome.
"""

import importlib.util
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
    supervisor = run.Supervisor({"web": STEADY, "worker": [sys.executable, "-c", FLAKY, str(tmp_path / "m")]})
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
    assert "[run] worker exited with 3: restarting it in 2 s" in capsys.readouterr().out


def test_a_child_that_keeps_exiting_at_once_stops_everything(run, capsys):
    broken = [sys.executable, "-c", "import sys; sys.exit(2)"]
    supervisor = run.Supervisor({"web": STEADY, "beat": broken}, restart_limit=3)
    supervisor.start()
    now = 0.0
    while not supervisor.stopping:
        supervisor.procs["beat"].wait(timeout=60)
        supervisor.step(now)  # notices the exit
        now += 10.0  # past the backoff (2, then 4 s), within a minute of the start
        supervisor.step(now)  # restarts it, unless it gave up
    assert supervisor.failed == "beat" and supervisor.restarts == 2  # started three times in all
    assert supervisor.wait() == 1
    assert supervisor.procs["web"].returncode == -signal.SIGTERM
    out = capsys.readouterr().out
    assert "restarting it in 2 s" in out and "restarting it in 4 s" in out
    assert "[run] beat exited with 2, 3 times in a row within 60 s of starting: stopping the others" in out


def test_a_child_that_ran_a_while_before_exiting_starts_its_backoff_over(run, capsys):
    supervisor = run.Supervisor({"worker": [sys.executable, "-c", "pass"]})
    supervisor.start()
    supervisor.procs["worker"].wait(timeout=60)
    for started in (0.0, 100.0, 200.0):  # each run lasted 60 s or more before it exited
        supervisor.started_at["worker"] = started
        assert supervisor.exited("worker", started + 60.0) is True
    assert supervisor.quick_exits["worker"] == 0
    assert capsys.readouterr().out.count("restarting it in 1 s") == 3
