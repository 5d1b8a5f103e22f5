"""Simulation runs store their plots under GANGSCHED_SIMULATIONS_DIR: a directory of each test's
own (the Celery workers a test starts inherit the environment)."""

import pytest


@pytest.fixture(autouse=True)
def _plots_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GANGSCHED_SIMULATIONS_DIR", str(tmp_path / "media"))
    return tmp_path / "media"
