"""``make run``'s web server (scripts/run.py): WEB_CONCURRENCY uvicorn processes, websockets that
reach a page whichever process holds its socket, and one SIGTERM that stops them all."""

import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth.models import User
from django.test import Client
from websockets.sync.client import connect

from scheduler_core.events import ALL_GANGS
from tests.browser.conftest import free_port
from tests.cast import make_gang
from tests.loop.workers import database_url

ROOT = Path(__file__).parents[2]


def run_script():
    spec = importlib.util.spec_from_file_location("run_script", ROOT / "scripts/run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run():
    return run_script()


def test_web_concurrency_defaults_to_one_process_per_cpu(run, monkeypatch):
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    assert run.web_concurrency(cpus=2) == 2
    assert run.web_concurrency(cpus=0) == 1
    assert run.web_concurrency("", cpus=8) == 8
    assert run.web_concurrency(" ", cpus=3) == 3
    assert run.web_concurrency() >= 1


def test_web_concurrency_takes_a_positive_whole_number(run, monkeypatch):
    assert run.web_concurrency("4", cpus=2) == 4
    assert run.web_concurrency(" 1 ", cpus=2) == 1
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    assert run.web_concurrency(cpus=2) == 3
    for bad in ("0", "-2", "two", "1.5", "2 workers"):
        with pytest.raises(ValueError, match="WEB_CONCURRENCY"):
            run.web_concurrency(bad, cpus=2)


def test_a_bad_web_concurrency_stops_make_run_before_anything_starts(run):
    env = {**os.environ, "WEB_CONCURRENCY": "zero"}
    result = subprocess.run(
        [run.PY, str(ROOT / "scripts/run.py"), "--skip-prepare"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 2 and "WEB_CONCURRENCY='zero'" in result.stderr
    assert "[run] started" not in result.stdout


def test_the_web_command_is_uvicorn_with_that_many_workers(run):
    web = run.commands("127.0.0.1", 8123, 3)["web"]
    assert web[1:4] == ["-m", "gangsched.web_server", "gangsched.asgi:application"]  # uvicorn (web_server.py)
    assert web[web.index("--workers") + 1] == "3"
    assert web[web.index("--port") + 1] == "8123" and web[web.index("--host") + 1] == "127.0.0.1"
    assert set(run.commands("127.0.0.1", 8000)) == {"web", "worker", "beat"}


def children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(line) for line in out.split()]


def wait_for(url: str, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def alive(pid: int) -> bool:
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_two_web_processes_serve_sockets_and_stop_on_one_sigterm(
    run, transactional_db, monkeypatch, tmp_path
):
    """The supervisor's own web command with two workers: every socket, on whichever worker,
    gets an event sent once to the channel layer, and the supervisor's SIGTERM ends the workers
    and their parent cleanly (exit status 0) within uvicorn's grace period."""
    user = User.objects.create_superuser("root", password="root-pass-123")
    make_gang("ml", "train", submitter="root")
    client = Client()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("DATABASE_URL", database_url())
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "gangsched.settings")
    supervisor = run.Supervisor(
        {"web": run.commands("127.0.0.1", port, 2)["web"]}, restarts_file=tmp_path / "restarts.json"
    )
    supervisor.start()
    web = supervisor.procs["web"]
    try:
        wait_for(base + "/accounts/login/", web)
        deadline = time.monotonic() + 30
        while len(children(web.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        workers = children(web.pid)
        assert len(workers) >= 2  # uvicorn's two workers (and possibly its resource tracker)
        assert status(base + "/api/v1/gangs/") == 401  # anonymous, through uvicorn

        with contextlib.ExitStack() as opened:
            headers = {"Cookie": cookie, "Origin": base}
            url = f"ws://127.0.0.1:{port}/ws/gangs/"
            sockets = [opened.enter_context(connect(url, additional_headers=headers)) for _ in range(6)]
            for socket in sockets:  # an answer means the socket has joined the gangs group
                socket.send(json.dumps({"subscribe": "ml/train"}))
                assert json.loads(socket.recv(timeout=10)) == {"subscribed": "ml/train"}
            event = {"type": "gang.event", "id": 424242, "gang": "ml/train", "kind": "bound", "reason": ""}
            async_to_sync(get_channel_layer().group_send)(ALL_GANGS, event)
            for socket in sockets:
                assert json.loads(socket.recv(timeout=10))["id"] == 424242

            # A SIGTERM to the supervisor (as `kill` or a service manager sends it) while the
            # sockets are open: everything stops, cleanly.
            stopped = {}
            waiter = threading.Thread(target=lambda: stopped.setdefault("status", supervisor.wait()))
            waiter.start()
            supervisor.on_signal(signal.SIGTERM, None)
            waiter.join(timeout=run.WEB_STOP_GRACE_S + 20)
            assert not waiter.is_alive(), "the web server did not stop"
        assert stopped["status"] == 0 and web.returncode == 0
        # uvicorn's workers (and multiprocessing's resource tracker, which leaves when its last
        # user has) are gone within moments of the supervisor: wait for that, not for a time.
        deadline = time.monotonic() + 10
        while [pid for pid in workers if alive(pid)] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if alive(pid)]
    finally:
        supervisor.send(signal.SIGKILL)
        web.wait(timeout=10)
