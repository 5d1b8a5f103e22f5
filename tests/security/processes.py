"""``manage.py`` in a subprocess with an environment of the test's choosing: settings are read
once, at import, from the environment, so each production switch needs a fresh process."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(command: list[str], drop: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess:
    """Run ``command`` in the project on gangsched.settings (not the test settings), without the
    variables in ``drop`` (a trailing ``*`` drops a prefix) and with ``env`` added."""

    def dropped(name: str) -> bool:
        return any(name.startswith(d[:-1]) if d.endswith("*") else name == d for d in drop)

    environment = {k: v for k, v in os.environ.items() if not dropped(k)}
    environment.update(DJANGO_SETTINGS_MODULE="gangsched.settings", **env)
    return subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True)


def manage(*args: str, drop: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess:
    """``manage.py *args``, as ``run`` runs a command."""
    return run([sys.executable, "manage.py", *args], drop=drop, **env)
