"""Shared fixtures. Tests run against the real PostgreSQL (pytest-django creates and drops the test
database ``test_<name>``) and the real Redis, on database 15 unless REDIS_URL is set: the default
is applied in ``tests/settings.py``, because pytest-django loads the settings before this file."""

import pytest
import redis
from django.conf import settings


@pytest.fixture
def redis_client():
    """A client on the test Redis database, flushed after the test."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    yield client
    client.flushdb()
    client.close()
