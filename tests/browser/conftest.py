"""Browser tests: Debian's Chromium driven by Playwright against a real daphne and a real Celery
worker, both on this run's test database, Redis queue and channel-layer prefix.

Chromium is /usr/bin/chromium (``apt-get install chromium``; `.ci/run` installs it); Playwright
never downloads a browser here. When a test fails, a screenshot of its page goes to
``tests/artifacts/<test>.png``.

The servers live as long as this package's tests (the test database is created once per run and
flushed between transactional tests, so they can stay up). Playwright's sync API runs an event
loop in this thread, which Django's async-safety check would take for an async context: it is
switched off for this package only (DJANGO_ALLOW_ASYNC_UNSAFE, restored afterwards).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from scheduler_core import tasks
from tests.conftest import operators_group
from tests.loop.workers import ROOT, Worker, database_url

CHROMIUM = os.environ.get("GANGSCHED_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
ARTIFACTS = ROOT / "tests" / "artifacts"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="package")
def _async_unsafe_allowed():
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if before is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture(scope="package")
def browser(_async_unsafe_allowed):
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (as .ci/run does)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in requirements-dev.txt")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class Server:
    """``python -m daphne`` on a free port, on the test database."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(ARTIFACTS / "daphne.log", "w")  # noqa: SIM115 (closed in stop())
        self.process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port)]
            + ["gangsched.asgi:application"],
            cwd=ROOT,
            env={
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "gangsched.settings",
                "DATABASE_URL": database_url(),
            },
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.url + "/accounts/login/", timeout=2).close()
                return
            except OSError as error:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"daphne did not start (see {ARTIFACTS / 'daphne.log'})") from error
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture(scope="package")
def servers(django_db_setup, django_db_blocker, _async_unsafe_allowed):
    """daphne and one Celery worker for the package's tests."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with django_db_blocker.unblock():
        server = Server()
        worker = Worker("browser")
    yield server
    worker.stop()
    server.stop()


@pytest.fixture
def live(servers, transactional_db) -> str:
    """The base URL; the test's rows are committed, so daphne and the worker see them."""
    yield servers.url
    worker_idle()


def worker_idle(timeout: float = 60.0) -> None:
    """Drop the cycles a test asked for and the worker has not begun, and wait until it runs
    none: the flush after a transactional test (TRUNCATE of every table) deadlocks with a cycle
    still reading them. ``timeout`` is only a safety net against a worker that never answers."""
    app = tasks.schedule.app
    app.control.purge()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        inspect = app.control.inspect(timeout=1.0)
        running, taken = inspect.active(), inspect.reserved()  # None: no worker answered yet
        if running is not None and taken is not None and not any([*running.values(), *taken.values()]):
            return
        time.sleep(0.1)
    raise AssertionError(f"the worker was still busy {timeout:.0f}s after the test")


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        name = request.node.name.replace("/", "_").replace("[", "_").replace("]", "")
        try:
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        except Exception as error:  # a crashed page must not hide the test's own failure
            print(f"screenshot failed: {error}")
    context.close()


@pytest.fixture
def olga(live) -> User:
    """An operator who is also staff with every admin permission (the admin actions)."""
    user = User.objects.create_superuser("olga", password="olga-pass-123")
    user.groups.add(operators_group())
    return user


@pytest.fixture
def alice(live) -> User:
    return User.objects.create_user("alice", password="alice-pass-123")


def log_in(page, base: str, username: str, password: str) -> None:
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(base + "/")


def wait_live(page) -> None:
    page.wait_for_function("window.gangschedLive && window.gangschedLive.state === 'open'", timeout=10_000)


def api_post(page, base: str, path: str, data: dict | None = None):
    """A POST with the page's session (CSRF token from its cookie, as the page's own forms do)."""
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    return page.context.request.post(
        base + path, data=data or {}, headers={"X-CSRFToken": token, "Referer": base + "/"}
    )


def kick_until(condition, timeout: float = 60.0, what: str = "condition", sweep: bool = False):
    """Ask the worker for cycles (no beat runs here) until ``condition()`` holds. ``timeout`` is
    only a safety net against a worker that died: a busy machine makes the wait longer."""
    deadline = time.monotonic() + timeout
    last_kick = 0.0
    while time.monotonic() < deadline:
        if time.monotonic() - last_kick > 1.0:
            tasks.schedule.delay()
            if sweep:
                tasks.sweep_timeouts.delay()
            last_kick = time.monotonic()
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
