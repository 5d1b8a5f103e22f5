"""What bench/soak.py and bench/stateful.py share: run fault tests through pytest, write figures."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_tests(tests: list[str], env: dict[str, str]) -> tuple[int, float]:
    """Run ``tests`` with ``env`` set (read by the test modules when imported); exit code, seconds."""
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
