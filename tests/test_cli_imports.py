"""The CLI's read commands start without what only the web server, the worker, a plot, a
simulation or a real cluster needs.

``manage.py get`` and ``describe`` answer in well under a second (bench/cli_time.py), as kubectl
does, because starting Django imports only Django, the models and what the command reads:
matplotlib (plots), daphne's server and Twisted (``runserver``), uvicorn (the web server),
Celery (sending tasks), numpy (the engine's cycle, simulations) and the Kubernetes client (the
kube backend) are imported where they are used (gangsched/app_configs.py, gangsched/__init__.py,
scheduler_core/engine/__init__.py). Each test runs the commands in a fresh process and fails
naming the module that came back and what imported it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cast import make_gang
from tests.loop.workers import database_url
from tests.reference import ROOT

#: Modules (and their submodules) no read command may import.
HEAVY = ("matplotlib", "daphne.server", "twisted", "uvicorn", "celery", "numpy", "kubernetes")

READS = [
    ["get", "gangs", "-A"],
    ["get", "gangs", "-A", "-o", "wide"],
    ["get", "pods", "-A"],
    ["get", "nodes"],
    ["get", "queues"],
    ["get", "topologies"],
    ["describe", "gang", "ml/train"],
    ["describe", "gang", "ml/train", "-o", "json"],
    ["describe", "application", "ml/none"],
    ["describe", "queue", "none"],
]


def heavy_in(modules, package: str) -> bool:
    return any(m == package or m.startswith(package + ".") for m in modules)


def heavy(modules) -> list[str]:
    return sorted(m for m in modules if any(heavy_in([m], h) for h in HEAVY))


def environment() -> dict[str, str]:
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "gangsched.settings", "DATABASE_URL": database_url()}


def imported_by(module: str, importtime: str) -> str:
    """The outermost module whose import brought ``module`` in (``-X importtime`` lists a
    module's imports above it, indented deeper)."""
    lines = [line.split("|")[-1] for line in importtime.splitlines() if line.startswith("import time:")]
    for index, name in enumerate(lines):
        if name.strip() == module:
            depth = len(name) - len(name.lstrip())
            for later in lines[index + 1 :]:
                if len(later) - len(later.lstrip()) < depth:
                    depth = len(later) - len(later.lstrip())
                    if depth <= 1:
                        return later.strip()
            return module
    return "?"


@pytest.fixture
def gang(transactional_db):
    """A committed gang, which the command's own process sees."""
    return make_gang("ml", "train")


def test_get_gangs_starts_without_the_heavy_modules(gang):
    """``manage.py get gangs -A`` as a user runs it: the manage.py entry point, with Django's
    system checks as the command asks for them."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "manage.py", "get", "gangs", "-A"],
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "train" in result.stdout
    lines = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    names = [line.split("|")[-1].strip() for line in lines]
    assert "django" in names  # the probe sees imports at all
    found = heavy(names)
    # One module of each heavy package, with the project module (or package) that imported it.
    first = {next(m for m in found if m == h or m.startswith(h + ".")) for h in HEAVY if heavy_in(found, h)}
    assert found == [], {module: imported_by(module, result.stderr) for module in sorted(first)}


def test_every_read_command_leaves_the_heavy_modules_unimported(gang):
    probe = (
        "import sys, io, django\n"
        "django.setup()\n"
        "from django.core.management import call_command\n"
        "from django.core.management.base import CommandError\n"
        f"for args in {READS!r}:\n"
        "    try:\n"
        "        call_command(*args, stdout=io.StringIO())\n"
        "    except CommandError:\n"
        "        pass  # not found: the read still ran\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    command = [sys.executable, "-c", probe]
    result = subprocess.run(command, cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    modules = result.stdout.split()
    assert "scheduler_core.management.commands.describe" in modules
    assert heavy(modules) == []


def test_the_web_servers_urls_draw_no_plot():
    """Routing imports every view, the simulations' too: matplotlib waits for a plot to draw
    (scheduler_core/simulation/plots.py), not for the web server's first request."""
    probe = (
        "import sys, django\ndjango.setup()\nimport gangsched.urls\nprint('\\n'.join(sorted(sys.modules)))\n"
    )
    command = [sys.executable, "-c", probe]
    result = subprocess.run(command, cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    modules = result.stdout.split()
    assert "dashboard.api.simulations" in modules
    assert not heavy_in(modules, "matplotlib")


def test_the_check_sees_a_heavy_import():
    """The checks above would pass vacuously if the names did not match what Python imports."""
    assert heavy(["matplotlib.pyplot", "numpy", "daphne", "daphne.server", "celery.app", "kubernetes"]) == [
        "celery.app",
        "daphne.server",
        "kubernetes",
        "matplotlib.pyplot",
        "numpy",
    ]
    importtime = (
        "import time: 1 | 1 |       numpy\n"
        "import time: 1 | 2 |     scheduler_core.engine.carry\n"
        "import time: 1 | 3 | dashboard.admin\n"
    )
    assert imported_by("numpy", importtime) == "dashboard.admin"
