"""Helpers for the topology tests: no Celery worker needed for the wake-ups an apply sends."""

import pytest

from tests.api.conftest import (  # noqa: F401  (API clients)
    _empty_token_cache,
    _own_cache_prefix,
    as_alice,
    as_olga,
    as_vera,
)


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    calls = []
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: calls.append(1) or True)
    return calls
