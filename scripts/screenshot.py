"""Regenerate the README's picture of the dashboard: ``docs/img/dashboard.png``.

    make screenshot                                   # or:
    .venv/bin/python scripts/screenshot.py [--out docs/img/dashboard.png]

It shows what a new operator sees after `make run`, so it is made the same way, but apart from
any installation: on a PostgreSQL database of its own (``gangsched_screenshot``, created here and
dropped at the end), its own Celery queue name and channel-layer prefix, it seeds the cluster
`make run` seeds, submits the demo and the README tour's trainer, runs scheduling cycles and
kubelet ticks in this process (no worker needed), starts daphne on a free port and has Chromium
sign in and capture the Overview at 1440x900. Chromium is the browser tests' (Debian's
``/usr/bin/chromium`` or ``GANGSCHED_CHROMIUM``, driven by Playwright; nothing is downloaded).
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATABASE = "gangsched_screenshot"
QUEUE = "gangsched-screenshot"
CHROMIUM = os.environ.get("GANGSCHED_CHROMIUM", "/usr/bin/chromium")
VIEWPORT = {"width": 1440, "height": 900}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setup_django() -> None:
    """Point this process (and the server it starts, through the environment) at the
    screenshot's own database, queue and channel groups, then load Django."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gangsched.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")  # the seeding and cycles would log every step
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gangsched")
    os.environ["DATABASE_URL"] = base.rsplit("/", 1)[0] + "/" + DATABASE
    os.environ["GANGSCHED_CELERY_QUEUE"] = QUEUE
    os.environ["GANGSCHED_CHANNELS_PREFIX"] = QUEUE
    import django

    django.setup()


def populate(password: str) -> None:
    """The cluster and work of a first `make run`, a few cycles into it."""
    from django.core.management import call_command
    from django.utils import timezone

    from scheduler_core.services.cycle import cycle_run
    from scheduler_core.services.kubelet import kubelet_tick

    quiet = {"stdout": StringIO()}
    call_command("migrate", verbosity=0)
    call_command("ensure_operator", "--password", password, **quiet)
    call_command("seed_cluster", "--nodes", "16", **quiet)
    call_command("submit_demo", **quiet)
    call_command("apply", "-f", str(ROOT / "docs" / "tour" / "trainer.yaml"), **quiet)
    for _ in range(3):
        cycle_run(holder="screenshot")
        kubelet_tick(now=timezone.now())


def serve() -> tuple[subprocess.Popen, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
    command.append("gangsched.asgi:application")
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url + "/accounts/login/", timeout=2).close()
            return server, url
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                raise SystemExit("screenshot: the web server did not start") from None
            time.sleep(0.2)


def capture(url: str, password: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(viewport=VIEWPORT).new_page()
        page.goto(url + "/accounts/login/")
        page.fill("#id_username", "operator")
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(url + "/")
        page.wait_for_load_state("networkidle")
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out))
        browser.close()


def clean_up() -> None:
    from django.conf import settings
    from django.db import connections

    from scheduler_core.db.bootstrap import drop_database
    from scheduler_core.tasks import _redis

    connections.close_all()
    drop_database(settings.DATABASES["default"], DATABASE)
    _redis().delete(QUEUE)  # the cycles this run asked for: no worker reads its queue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "dashboard.png")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"screenshot: no Chromium at {CHROMIUM}: apt-get install -y chromium")
    setup_django()
    from django.conf import settings

    from scheduler_core.db.bootstrap import create_database_if_missing, drop_database

    drop_database(settings.DATABASES["default"], DATABASE)  # what an interrupted run left
    create_database_if_missing(settings.DATABASES["default"], DATABASE)
    password = secrets.token_urlsafe(16)
    server = None
    try:
        populate(password)
        server, url = serve()
        capture(url, password, args.out)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        clean_up()
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
