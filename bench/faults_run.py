"""What bench/soak.py and bench/stateful.py share: run fault tests through pytest, write figures.

Each run has a test database of its own (``run_database``): pytest-django drops and creates the
database it is given, so two runs on one machine sharing a name would drop each other's.
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: PostgreSQL cuts identifiers longer than this (NAMEDATALEN - 1).
MAX_NAME = 63


def run_database(base: str) -> str:
    """The test database of this run: ``GANGSCHED_TEST_DB`` if set, else ``base``, plus a suffix
    of this run's own (process id and a random part).

    The name given is never used as such, so never dropped; the run creates its database, and
    pytest-django drops it when the run ends: a run drops only what it created.
    """
    given = os.environ.get("GANGSCHED_TEST_DB") or base
    suffix = f"_{os.getpid()}_{secrets.token_hex(3)}"
    return given[: MAX_NAME - len(suffix)] + suffix


def run_tests(tests: list[str], env: dict[str, str]) -> tuple[int, float]:
    """Run ``tests`` with ``env`` set (read by the test modules when imported); exit code, seconds."""
    print(f"test database: {env.get('GANGSCHED_TEST_DB')}", flush=True)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    os.environ.update(env)
    import pytest

    started = time.monotonic()
    code = pytest.main(["-q", "-p", "no:randomly", *tests])
    return code, time.monotonic() - started


def write(figures: dict, out: str) -> None:
    figures = {**figures, "platform": platform.platform(), "cpu_count": os.cpu_count()}
    print(json.dumps(figures, indent=2))
    Path(out).write_text(json.dumps(figures, indent=2) + "\n")
