"""Simulation runs store their plots under GANGSCHED_SIMULATIONS_DIR: a directory of each test's
own (the Celery workers a test starts inherit the environment). They see the repository's traces
only: a developer's GANGSCHED_TRACES_DIR would add or replace some."""

import pytest


@pytest.fixture(autouse=True)
def _plots_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GANGSCHED_SIMULATIONS_DIR", str(tmp_path / "media"))
    return tmp_path / "media"


@pytest.fixture(autouse=True)
def _repository_traces_only(monkeypatch):
    monkeypatch.delenv("GANGSCHED_TRACES_DIR", raising=False)
