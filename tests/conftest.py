"""Shared fixtures. Tests run against the real PostgreSQL (pytest-django creates and drops the test
database ``test_<name>``) and the real Redis, on database 15 of the server REDIS_URL names unless
GANGSCHED_TEST_REDIS_URL gives another: ``tests/settings.py`` applies the rule, because
pytest-django loads the settings before this file. Under pytest-xdist each worker has its own of
both (tests/settings.py), and the tests that share more run on one worker (``XDIST_GROUPS``)."""

import importlib
import os
from collections import Counter

import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from hypothesis import settings as hypothesis_settings

# Hypothesis's per-example deadline (200 ms) is a timing assertion: on a loaded 2-core machine a
# database round trip can exceed it. No test here asserts a time, so none has a deadline.
# Examples are derandomized, so that a run passes or fails the same way on every machine;
# GANGSCHED_HYPOTHESIS_EXPLORE=1 draws fresh random ones (and keeps failures in .hypothesis/).
hypothesis_settings.register_profile(
    "gangsched", deadline=None, derandomize=not os.environ.get("GANGSCHED_HYPOTHESIS_EXPLORE")
)
hypothesis_settings.load_profile("gangsched")

#: Tests that share something beyond their xdist worker's own databases, queue and prefix
#: (tests/settings.py), by path: each group runs on one worker, its tests one after the other, in
#: order; every other test goes to whichever worker is free (``make test``: ``--dist loadgroup``).
XDIST_GROUPS = {
    # One daphne, Celery worker and Chromium for the package (package-scoped fixtures).
    "tests/browser/": "browser",
    # bench/service.py's database (<test database>_bench) and Redis database 13, one run at a time.
    "tests/service/test_bench_service.py": "bench-service",
    # A private PostgreSQL and Redis per module: started once.
    "tests/faults/test_restarts.py": "faults-restarts",
    # Its last test reports on the whole table, which only a worker that asked every cell has.
    "tests/security/test_matrix.py": "matrix",
}


def xdist_group_of(nodeid: str) -> str | None:
    path = nodeid.split("::")[0]
    return next((group for prefix, group in XDIST_GROUPS.items() if path.startswith(prefix)), None)


@pytest.hookimpl(optionalhook=True)  # an xdist hook, asked in the controlling process
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with the groups of ``XDIST_GROUPS``. (xdist's own reads a test's
    ``xdist_group`` marker into its id, which pytest 9 no longer lets it change.)

    The tests are handed out in the order collected, never the largest group first: pytest-django
    orders them so that a transactional test, whose flush empties every table (the data
    migrations' rows too), runs after the tests that rely on those rows, in each worker as in a
    run without xdist. A group is handed out where its first test is: each one here holds tests of
    one kind, or database tests and tests without a database (which may run at any time)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    config.option.loadscopereorder = False

    class PathGroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group_of(nodeid) or nodeid

    return PathGroupScheduling(config, log)


def pytest_collection_modifyitems(items):
    """Every test has an id of its own: xdist hands tests to its workers by id, and of several
    tests sharing one it runs only the first, silently. schemathesis' tests (one per API
    operation) lose the operation from their id under pytest 9, so it is put back; any other
    shared id stops the run."""
    from _pytest.nodeid import coerce_node_id

    for item in items:
        if type(item).__name__ == "SchemathesisFunction" and item.name not in item.nodeid:
            item._id = coerce_node_id(f"{item.parent.nodeid}::{item.name}")
    shared = sorted(nodeid for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1)
    if shared:
        raise pytest.UsageError(f"{len(shared)} test ids are shared by several tests: {shared[:5]}")


# The authorization matrix's count of cells and denials (tests/security/matrix_tally.py) ends
# the run's summary. Under xdist the tests run in the workers, and the summary is the
# controller's (which loads only this conftest): each worker hands its tally over at its end.


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        from tests.security.matrix_tally import TALLY

        workeroutput["matrix_tally"] = TALLY.as_lists()


@pytest.hookimpl(optionalhook=True)  # an xdist hook: a run without xdist never calls it
def pytest_testnodedown(node, error):
    from tests.security.matrix_tally import TALLY

    given = getattr(node, "workeroutput", {}).get("matrix_tally")
    if given:
        TALLY.merge(given)


def pytest_terminal_summary(terminalreporter):
    from tests.security.matrix_tally import TALLY

    if TALLY.cells:
        terminalreporter.write_line(TALLY.line())


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
        + ("0007_operators_manage_topology", "0010_operators_manage_workload_priority")
    }
    grants = {
        app: list(codenames) for app, codenames in migrations["0001_operators_group"].PERMISSIONS.items()
    }
    grants["scheduler_core"] += migrations["0003_operators_manage_cluster"].CODENAMES
    grants["scheduler_core"] += migrations["0006_operators_manage_queues"].CODENAMES
    grants["scheduler_core"] += migrations["0007_operators_manage_topology"].CODENAMES
    grants["scheduler_core"] += migrations["0010_operators_manage_workload_priority"].CODENAMES
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
