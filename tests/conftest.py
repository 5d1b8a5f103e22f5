"""Shared fixtures. Tests run against the real PostgreSQL (pytest-django creates and drops the test
database ``test_<name>``) and the real Redis, on database 15 of the server REDIS_URL names unless
GANGSCHED_TEST_REDIS_URL gives another: ``tests/settings.py`` applies the rule, because
pytest-django loads the settings before this file."""

import importlib

import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from hypothesis import settings as hypothesis_settings

# Hypothesis's per-example deadline (200 ms) is a timing assertion: on a loaded 2-core machine a
# database round trip can exceed it. No test here asserts a time, so none has a deadline.
hypothesis_settings.register_profile("gangsched", deadline=None)
hypothesis_settings.load_profile("gangsched")


@pytest.fixture
def redis_client():
    """A client on the test Redis database, flushed after the test."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    yield client
    client.flushdb()
    client.close()


# The named cast of the API and page tests: alice and bob submit gangs, olga is an operator (and
# staff, for the admin), vera may view every gang but neither retry nor kill. Packages with other
# needs (live sockets, a browser on a live server) define their own users in their conftest.


def operators_group() -> Group:
    """The ``operators`` group as dashboard's data migrations make it. A transactional test's
    flush empties every table, this group included, so tests that need it make it again."""
    migrations = {
        name: importlib.import_module(f"dashboard.migrations.{name}")
        for name in ("0001_operators_group", "0003_operators_manage_cluster", "0006_operators_manage_queues")
        + ("0007_operators_manage_topology",)
    }
    grants = {
        app: list(codenames) for app, codenames in migrations["0001_operators_group"].PERMISSIONS.items()
    }
    grants["scheduler_core"] += migrations["0003_operators_manage_cluster"].CODENAMES
    grants["scheduler_core"] += migrations["0006_operators_manage_queues"].CODENAMES
    grants["scheduler_core"] += migrations["0007_operators_manage_topology"].CODENAMES
    grants["dashboard"] = ["add_simulationrun"]  # 0002_simulationrun
    group, _ = Group.objects.get_or_create(name="operators")
    for app_label, codenames in grants.items():
        group.permissions.add(
            *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
        )
    return group


@pytest.fixture
def alice(db) -> User:
    return User.objects.create_user("alice", password="alice-pass-123")


@pytest.fixture
def bob(db) -> User:
    return User.objects.create_user("bob", password="bob-pass-123")


@pytest.fixture
def olga(db) -> User:
    """An operator: a member of the group the data migration creates."""
    user = User.objects.create_user("olga", password="olga-pass-123", is_staff=True)
    user.groups.add(operators_group())
    return user


@pytest.fixture
def vera(db) -> User:
    """Sees every gang (view_gang) but has neither retry_gang nor kill_gang."""
    user = User.objects.create_user("vera", password="vera-pass-123")
    user.user_permissions.add(Permission.objects.get(codename="view_gang"))
    return user


@pytest.fixture
def api_cache_listening(settings, monkeypatch):
    """The API's read cache on, its listener connected (dashboard/api/invalidation.py), and no
    Celery to trigger; the cache's state is dropped before and after. Yields the settings."""
    from dashboard.api import invalidation, read_cache

    settings.GANGSCHED_API_CACHE = True
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger_now", lambda: True)
    read_cache.reset()
    invalidation.ensure_listening()
    assert invalidation.wait_connected()
    yield settings
    invalidation.stop()
    read_cache.reset()
