"""Each test has an id of its own (tests/conftest.py): ``make test`` runs under pytest-xdist,
which hands tests out by id and of several tests sharing one runs only the first."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def collected(*paths: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "--collect-only", "-q", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_each_schemathesis_operation_is_a_test_with_an_id_of_its_own():
    ids = collected("tests/security/test_schemathesis.py")
    assert len(ids) > 2  # one per API operation and role, not one per role
    assert [nodeid for nodeid, count in Counter(ids).items() if count > 1] == []
    assert any(nodeid.endswith("[GET /api/v1/gangs/]") for nodeid in ids)
