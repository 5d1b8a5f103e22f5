"""``make run``'s first start (scripts/run.py): one summary once everything answers, a quiet
worker log, and one SIGTERM or Ctrl-C that stops gracefully however it is delivered.

The signal tests run the supervisor under a real ``make`` with a stand-in child that takes a
while to stop, and send the SIGTERM as ``timeout``, a service manager or ``kill -TERM -PGID``
does: to the whole process group, so make passes it on to the supervisor a second time.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def run():
    spec = importlib.util.spec_from_file_location("run_script", ROOT / "scripts/run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- the summary


def test_the_summary_names_the_address_the_user_the_password_and_how_to_stop(run):
    operator = {
        "username": "operator",
        "password": "s3cret-once",
        "created": True,
        "superusers": ["operator"],
    }
    text = run.summary("http://127.0.0.1:8000/", operator, 2)
    assert "gangsched is up: http://127.0.0.1:8000/\n" in text
    assert "/admin/" not in text  # the dashboard is at /, as the README says
    assert "user:      operator" in text and "password:  s3cret-once" in text
    assert "Ctrl-C" in text and "a second one kills" in text
    assert "web (2 uvicorn processes)" in text
    assert text.startswith("-" * 78) and text.endswith("-" * 78)  # one block
    assert "health:" not in text


def test_a_known_operator_gets_no_password_but_how_to_set_one(run):
    operator = {"username": "operator", "password": None, "created": False, "superusers": ["operator"]}
    text = run.summary("http://127.0.0.1:8000/", operator, 1)
    assert "user:      operator" in text and "ensure_operator --password" in text
    assert "web (1 uvicorn process)" in text
    late = run.summary("http://127.0.0.1:8000/", operator, 1, "GET /healthz answered 503 after 120 s")
    assert "health:    GET /healthz answered 503" in late


def test_the_summary_waits_for_the_worker_and_a_healthy_answer(run, monkeypatch):
    answers = iter([None, 503, 200])
    asked = []
    monkeypatch.setattr(run, "health_status", lambda url: asked.append(url) or next(answers))
    ready = iter([False, False, True])
    printed = []
    monkeypatch.setattr("builtins.print", lambda text, **kw: printed.append(text))
    run.announce_when_ready(
        "http://x/healthz",
        lambda health: f"summary{health}",
        threading.Event(),
        every_s=0,
        worker_ready=lambda: next(ready),
    )
    assert len(asked) == 3  # /healthz only once the worker is ready, then until it says 200
    assert printed == ["summary"]


def test_no_summary_once_stopping(run, monkeypatch):
    monkeypatch.setattr(run, "health_status", lambda url: 503)
    printed = []
    monkeypatch.setattr("builtins.print", lambda text, **kw: printed.append(text))
    stopped = threading.Event()
    stopped.set()
    run.announce_when_ready("http://x/healthz", lambda health: "summary", stopped, every_s=0)
    assert printed == []


def test_the_summary_is_printed_with_the_status_when_health_never_answers_200(run, monkeypatch):
    monkeypatch.setattr(run, "health_status", lambda url: 503)
    printed = []
    monkeypatch.setattr("builtins.print", lambda text, **kw: printed.append(text))
    run.announce_when_ready(
        "http://x/healthz", lambda health: f"summary: {health}", threading.Event(), timeout_s=0
    )
    assert printed == ["summary: GET /healthz answered 503 after 0 s; it says which part is down"]


# ---------------------------------------------------------------- signals, one at a time


def supervisor_sending(run, tmp_path):
    sup = run.Supervisor({}, restarts_file=tmp_path / "restarts.json")
    sent = []
    sup.send = sent.append
    return sup, sent


def test_a_second_signal_kills(run, tmp_path):
    sup, sent = supervisor_sending(run, tmp_path)
    sup.on_signal(signal.SIGINT, None, sender=0)  # Ctrl-C: the terminal's
    sup.on_signal(signal.SIGINT, None, sender=0)
    assert sent == [signal.SIGTERM, signal.SIGKILL]


def test_the_sigterm_make_passes_on_is_not_a_second_one(run, tmp_path):
    sup, sent = supervisor_sending(run, tmp_path)
    sup.parent = 4242  # make
    sup.on_signal(signal.SIGTERM, None, sender=1234)  # a SIGTERM to the process group
    sup.on_signal(signal.SIGTERM, None, sender=4242)  # the same, passed on by make
    assert sent == [signal.SIGTERM]
    sup.on_signal(signal.SIGTERM, None, sender=1234)  # sent again: escalate
    assert sent == [signal.SIGTERM, signal.SIGKILL]


# ---------------------------------------------------------------- under a real make

#: A child that stops gracefully in its own time: it says when it got SIGTERM and exits 0 after.
CHILD = """
import signal, sys, time
def stop(signum, frame):
    # One write per line: the supervisor writes to the same pipe at the same moment.
    sys.stdout.write("child: got " + signal.Signals(signum).name + chr(10))
    sys.stdout.flush()
    time.sleep(1)
    print("child: stopped cleanly", flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("child: ready", flush=True)
while True:
    time.sleep(0.1)
"""

#: The supervisor as scripts/run.py's main() sets it up, with the stand-in child.
DRIVER = """
import importlib.util, signal, sys
spec = importlib.util.spec_from_file_location("run_script", sys.argv[1])
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)
child = [sys.executable, sys.argv[2]]
sup = run.Supervisor({"child": child}, restarts_file=run.Path(sys.argv[3]))
signal.pthread_sigmask(signal.SIG_BLOCK, run.STOP_SIGNALS)
sup.takes_signals = True
sup.start()
status = sup.wait()
print("supervisor: exit", status, flush=True)
sys.exit(status)
"""


def start_under_make(tmp_path) -> subprocess.Popen:
    (tmp_path / "driver.py").write_text(DRIVER)
    (tmp_path / "child.py").write_text(CHILD)
    # No shell syntax: make runs the command itself, as `make run`'s recipe (a shell between
    # would get make's SIGTERM instead of the supervisor).
    recipe = f"{sys.executable} driver.py {ROOT / 'scripts/run.py'} {tmp_path / 'child.py'} restarts.json"
    (tmp_path / "Makefile").write_text(f"run:\n\t@{recipe}\n")
    return subprocess.Popen(
        ["make", "--no-print-directory", "run"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal's job
    )


def wait_for_line(process: subprocess.Popen, wanted: str) -> list[str]:
    lines = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if wanted in line:
            return lines
    raise AssertionError(f"{wanted!r} never printed: {lines}")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(
    ("how", "sig"),
    [("to the process group", signal.SIGTERM), ("to make", signal.SIGTERM), ("Ctrl-C", signal.SIGINT)],
)
def test_one_signal_stops_make_run_gracefully(tmp_path, how, sig):
    make = start_under_make(tmp_path)
    try:
        before = wait_for_line(make, "child: ready")
        if how == "to make":
            os.kill(make.pid, sig)
        else:  # the whole process group: as `timeout`, a service manager, or the terminal's Ctrl-C
            os.killpg(make.pid, sig)
        rest, _ = make.communicate(timeout=60)
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
            make.wait()
    output = "\n".join(before) + "\n" + rest
    assert "child: got SIGTERM" in output  # the child got exactly one SIGTERM, and time to stop
    assert "child: stopped cleanly" in output
    assert "second signal: killing" not in output
    assert "supervisor: exit 0" in output, output


# ---------------------------------------------------------------- the worker's log


def test_an_idle_cycle_logs_at_debug_and_a_cycle_that_binds_at_info(caplog, monkeypatch):
    from scheduler_core import tasks
    from scheduler_core.services.cycle import CycleReport

    monkeypatch.setattr(tasks, "events_publish", lambda: 0)
    monkeypatch.setattr(tasks, "_redis", lambda: type("R", (), {"delete": lambda self, key: 0})())
    reports = iter(
        [
            CycleReport(ran=True, epoch=3, pods_considered=5, duration_s=0.01),
            CycleReport(
                ran=True,
                epoch=3,
                pods_considered=5,
                pods_bound=4,
                duration_s=0.02,
                changes={"bound": 4, "timed_out": 1},
            ),
        ]
    )
    monkeypatch.setattr(tasks, "cycle_run", lambda holder: next(reports))
    with caplog.at_level(logging.DEBUG, logger="scheduler_core.tasks"):
        tasks.schedule.apply()
        tasks.schedule.apply()
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "scheduler_core.tasks"]
    assert records == [
        (logging.DEBUG, "cycle epoch 3: 5 considered, nothing changed in 0.010s"),
        (logging.INFO, "cycle epoch 3: 5 considered, 4 bound, 1 timed out in 0.020s"),
    ]


def test_celerys_per_task_lines_are_off_unless_asked_for():
    """The settings, read in fresh processes with and without GANGSCHED_LOG_TASKS."""
    probe = textwrap.dedent(
        """
        import json, os
        os.environ["DJANGO_SETTINGS_MODULE"] = "gangsched.settings"
        from django.conf import settings
        print(json.dumps({name: c.get("level") for name, c in settings.LOGGING["loggers"].items()}))
        """
    )
    levels = {}
    for value in ("", "1"):
        env = {**os.environ, "GANGSCHED_LOG_TASKS": value}
        out = subprocess.run(
            [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        )
        levels[value] = __import__("json").loads(out.stdout)
    quiet, detailed = levels[""], levels["1"]
    for logger in ("celery.app.trace", "celery.worker.strategy", "celery.worker.request", "celery.beat"):
        assert quiet[logger] == "WARNING" and detailed[logger] == "INFO"
    assert "scheduler_core.tasks" not in quiet and detailed["scheduler_core.tasks"] == "DEBUG"
