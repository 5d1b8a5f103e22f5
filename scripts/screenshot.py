"""Regenerate the pictures of the dashboard: ``docs/img/dashboard.png`` (the README's, the
Overview) and one per page, ``docs/img/<page>.png`` (docs/dashboard.md shows them), and
``forecast-gang.png``: the page of the waiting gang expected to start first (docs/forecasts.md).

    make screenshot                                   # or:
    .venv/bin/python scripts/screenshot.py [--minutes 5] [--out-dir docs/img]

They show what an operator sees after `make run` has run for a while, so they are made the same
way, but apart from any installation: on a PostgreSQL database of its own
(``gangsched_screenshot``, created here and dropped at the end), its own Celery queue name and
channel-layer prefix, it seeds the cluster `make run` seeds, submits the demo and the README
tour's trainer, and runs the demo for ``--minutes`` of real time in this process (no worker
needed): a scheduling cycle, a kubelet tick and the timeout sweep every two seconds, the demo
submitted again every two minutes, the gangs forecast every 30 s. The charts, which count per
minute, then have a past. It replays the shared Tiresias trace once (``SIMULATION``: learned
runtimes, so the run's page shows what the estimates were worth), starts daphne on a free port
and has Chromium sign in and capture each page at 1440x900; ``--pages simulations simulation``
captures only those.
Chromium is the browser tests' (Debian's ``/usr/bin/chromium`` or ``GANGSCHED_CHROMIUM``, driven
by Playwright; nothing is downloaded).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATABASE = "gangsched_screenshot"
QUEUE = "gangsched-screenshot"
CHROMIUM = os.environ.get("GANGSCHED_CHROMIUM", "/usr/bin/chromium")
VIEWPORT = {"width": 1440, "height": 900}
#: Page -> its path; ``overview`` is written as ``dashboard.png``, the README's picture.
PAGES = {
    "overview": "/",
    "gangs": "/gangs/",
    "gang": "/gangs/tour/trainer/",
    "nodes": "/nodes/",
    "queues": "/queues/",
    "timed-out": "/timed-out/",
    "history": "/history/",
    "simulations": "/simulations/",
    "simulation": "/simulations/{simulation}/",
}
#: The finished run the Simulations pages show: a trace that queues on three 4-GPU nodes.
SIMULATION = {
    "trace_name": "tiresias-60-jobs.csv",
    "cluster_spec": "3x{cpu=40,memory=256Gi,nvidia.com/gpu=4}",
    "policies": ["coscheduling", "gangsched"],
    "runtimes": "learned",
}
TICK_S = 2.0
RESUBMIT_S = 120.0
#: A forecast run every this many ticks (30 s: GANGSCHED_FORECAST_INTERVAL_S's default).
FORECAST_TICKS = 15


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
    # The replay's plots, which the server serves: a directory of this run's, removed at the end.
    os.environ["GANGSCHED_SIMULATIONS_DIR"] = tempfile.mkdtemp(prefix="gangsched-screenshot-")
    import django

    django.setup()


def populate(password: str, minutes: float) -> None:
    """The cluster and work of a first `make run`, ``minutes`` into it (at least a few cycles)."""
    from django.core.management import call_command
    from django.utils import timezone

    from scheduler_core.reads.node_usage import usage_compact
    from scheduler_core.services.cycle import cycle_run, timeouts_sweep
    from scheduler_core.services.forecasts import forecasts_run
    from scheduler_core.services.kubelet import kubelet_tick

    quiet = {"stdout": StringIO()}
    call_command("migrate", verbosity=0)
    call_command("ensure_operator", "--password", password, **quiet)
    call_command("seed_cluster", "--nodes", "16", **quiet)
    call_command("submit_demo", **quiet)
    call_command("apply", "-f", str(ROOT / "docs" / "tour" / "trainer.yaml"), **quiet)
    # Two queues with work waiting at a max, so that the Queues page shows its tree and lanes.
    call_command("apply", "-f", str(ROOT / "docs" / "tour" / "queues.yaml"), **quiet)
    started = last_submit = time.monotonic()
    ticks = 0
    while ticks < 3 or time.monotonic() - started < minutes * 60:
        if time.monotonic() - last_submit >= RESUBMIT_S:
            call_command("submit_demo", **quiet)
            last_submit = time.monotonic()
        cycle_run(holder="screenshot")
        kubelet_tick(now=timezone.now())
        timeouts_sweep(holder="screenshot")
        usage_compact()
        if ticks % FORECAST_TICKS == 0:
            forecasts_run()
        ticks += 1
        time.sleep(TICK_S)
    forecasts_run()  # fresh when the pages are captured
    print(f"ran the demo for {(time.monotonic() - started) / 60:.1f} min ({ticks} cycles)")


def simulation_finished() -> int:
    """A run as an operator starts it, replayed here (no worker needed); its id."""
    from django.contrib.auth import get_user_model

    from dashboard.models import SimulationRun
    from dashboard.simulations import simulation_run_execute

    operator = get_user_model().objects.get(username="operator")
    run = SimulationRun.objects.create(requested_by=operator, **SIMULATION)
    return simulation_run_execute(run.pk).pk


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


def capture(url: str, password: str, out_dir: Path, pages: dict[str, str]) -> list[Path]:
    """Sign in as the operator and capture each page of ``pages`` (a page not served, such as
    one this version lacks, is skipped with a line)."""
    from playwright.sync_api import sync_playwright

    written = []
    pages = {**PAGES, **waiting_gang_page()}  # read before Playwright's event loop runs here

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(viewport=VIEWPORT).new_page()
        page.goto(url + "/accounts/login/")
        page.fill("#id_username", "operator")
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(url + "/")
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, path in pages.items():
            response = page.goto(url + path)
            if response is None or response.status != 200:
                print(f"skipped {path}: {response.status if response else 'no answer'}")
                continue
            page.wait_for_load_state("networkidle")
            out = out_dir / ("dashboard.png" if name == "overview" else f"{name}.png")
            page.screenshot(path=str(out))
            written.append(out)
        browser.close()
    return written


def waiting_gang_page() -> dict[str, str]:
    """``forecast-gang``: the page of the waiting gang expected to start first (its forecast card)."""
    from scheduler_core.models import GangForecast
    from scheduler_core.models.gangs import waiting_q

    forecast = (
        GangForecast.objects.filter(waiting_q("gang__"), start_p50__isnull=False)
        .select_related("gang")
        .order_by("start_p50")
        .first()
    )
    if forecast is None:
        return {}
    return {"forecast-gang": f"/gangs/{forecast.gang.namespace}/{forecast.gang.name}/"}


def clean_up() -> None:
    from django.conf import settings
    from django.db import connections

    from scheduler_core.db.bootstrap import drop_database
    from scheduler_core.tasks import _redis

    connections.close_all()
    drop_database(settings.DATABASES["default"], DATABASE)
    _redis().delete(QUEUE)  # the cycles this run asked for: no worker reads its queue
    shutil.rmtree(os.environ["GANGSCHED_SIMULATIONS_DIR"], ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--minutes", type=float, default=5.0, help="How long the demo runs first.")
    parser.add_argument("--pages", nargs="+", choices=list(PAGES), default=list(PAGES), help="Only these.")
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
        populate(password, args.minutes)
        simulation = simulation_finished()
        pages = {name: PAGES[name].format(simulation=simulation) for name in args.pages}
        server, url = serve()
        written = capture(url, password, args.out_dir, pages)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        clean_up()
    for out in written:
        print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    main()
