"""Helpers for the declaration tests: apply text as ``manage.py apply`` would, find manifests."""

from pathlib import Path

import pytest

from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.declarations.documents import documents_parse
from tests.api.conftest import (  # noqa: F401  (API clients)
    _empty_token_cache,
    _own_cache_prefix,
    as_alice,
    as_bob,
    as_olga,
    as_vera,
)
from tests.reference import REFERENCE  # noqa: F401  (the reference manifests, for the tests here)

#: Our own small manifests, so these tests do not depend on shared/ alone.
OWN = Path(__file__).parent / "manifests"
#: The example manifests of every accepted format (examples/ at the repository's root).
EXAMPLES = Path(__file__).parents[2] / "examples"


def apply_text(text: str, **kwargs):
    return manifests_apply(documents_parse(text), **kwargs)


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    """Applying wakes the scheduler on commit; tests need no Celery worker for that."""
    calls = []
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: calls.append(1) or True)
    return calls
