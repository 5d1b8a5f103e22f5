"""Builders the API and page tests share (their users are fixtures in tests/conftest.py)."""

from scheduler_core.models import Gang
from scheduler_core.services.submit import gang_submit


def make_gang(namespace="ml", name="train", *, submitter="alice", pods=2, min_member=None, **fields) -> Gang:
    return gang_submit(
        namespace=namespace,
        name=name,
        min_member=min_member or pods,
        pods=[{"name": f"{name}-{i}", "requests": {"cpu": "1", "memory": "1Gi"}} for i in range(pods)],
        submitter=submitter,
        **fields,
    )
