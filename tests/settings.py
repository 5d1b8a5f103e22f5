"""Settings for the test run: gangsched.settings plus test-only defaults from the environment.

pytest-django imports the settings in its ``pytest_load_initial_conftests`` hook, before pytest
imports any conftest.py, so a conftest (even ``pytest_configure``) is too late to change what the
settings read from ``os.environ``. Setting the defaults here, before importing the real settings,
is the earliest point that works without another plugin. A value already in the environment wins,
but REDIS_URL's database: the tests take their own (``redis_url_for_tests``).

Under pytest-xdist (``make test`` runs ``-n auto``) every worker process is a test run of its own
beside the others: its own PostgreSQL database (pytest-django appends ``_gw0``, ``_gw1``, ... to
the test database's name), its own Redis database (``redis_url_for_worker``), and its own Celery
queue and channel-layer prefix. xdist names the worker in ``PYTEST_XDIST_WORKER`` before the
worker loads these settings; the controlling process, which runs no test, loaded them first and
its environment (the queue, the prefix, the Redis URL) is every worker's starting point.
"""

import os
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit

#: The tests' own Redis database: they flush it, and their Celery messages, results and
#: channel-layer groups never mix with those of a `make run` (database 0 by default).
TEST_REDIS_DB = 15


def redis_url_for_tests(environ) -> str:
    """GANGSCHED_TEST_REDIS_URL if given, whole; else database 15 of the server REDIS_URL names
    (REDIS_URL says where Redis is, for the app: the tests, which flush their database, never take
    the app's); else ``redis://127.0.0.1:6379/15``."""
    if environ.get("GANGSCHED_TEST_REDIS_URL"):
        return environ["GANGSCHED_TEST_REDIS_URL"]
    given = environ.get("REDIS_URL")
    if not given:
        return f"redis://127.0.0.1:6379/{TEST_REDIS_DB}"
    return with_redis_db(given, TEST_REDIS_DB)


def with_redis_db(given: str, db: int) -> str:
    """``given`` with its database replaced by ``db``."""
    url = urlsplit(given)
    query = dict(parse_qsl(url.query))
    if url.scheme == "unix":  # unix:///path/to/redis.sock?db=N
        query["db"] = str(db)
        path = url.path
    else:  # redis://[:password@]host:port/N (or ?db=N)
        query.pop("db", None)
        path = f"/{db}"
    rest = f"?{urlencode(query)}" if query else ""
    return f"{url.scheme}://{url.netloc}{path}{rest}"


#: Redis databases no test worker takes: the app's default (0), bench/service.py's under
#: tests/service/test_bench_service.py (13) and a bench run's by hand (14).
NOT_FOR_WORKERS = frozenset({0, 13, 14})


def redis_db_of(url: str) -> int:
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return int(dict(parse_qsl(parts.query)).get("db", 0))
    return int(parts.path.strip("/") or dict(parse_qsl(parts.query)).get("db", 0))


def redis_url_for_worker(url: str, worker: str) -> str:
    """The Redis URL of xdist worker ``worker`` (``gw0``, ``gw1``, ...) of a run whose tests take
    ``url``: gw0 takes ``url`` itself, each next worker the next database counting down from it
    (from 15: 15, 12, 11, ... 1), none in ``NOT_FOR_WORKERS``. Outside xdist (``worker`` empty):
    ``url``."""
    if not worker:
        return url
    index = int(worker.removeprefix("gw"))
    base = redis_db_of(url)
    free = [base] + [db for db in range(base - 1, 0, -1) if db not in NOT_FOR_WORKERS]
    if index >= len(free):
        raise RuntimeError(f"xdist worker {worker}: no Redis database left below {base} (fewer workers: -n)")
    return with_redis_db(url, free[index])


#: The xdist worker this process is (``gw0``, ...), or "" outside xdist and in its controller.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")

#: What the user gave, before the lines below replace it (test_project_wiring.py checks the rule).
GIVEN_REDIS_ENVIRONMENT = {
    name: os.environ[name] for name in ("REDIS_URL", "GANGSCHED_TEST_REDIS_URL") if name in os.environ
}
# Both in the environment: the processes the tests start (workers, daphne) inherit them, and read
# GANGSCHED_TEST_REDIS_URL back unchanged.
# Under xdist a worker starts from its controller's environment, where this file already ran:
# GANGSCHED_TEST_REDIS_URL is then the run's, which the worker turns into its own.
os.environ["GANGSCHED_TEST_REDIS_URL"] = redis_url_for_worker(redis_url_for_tests(os.environ), XDIST_WORKER)
os.environ["REDIS_URL"] = os.environ["GANGSCHED_TEST_REDIS_URL"]
# A queue of this run's own: Celery workers started by tests (they inherit the environment)
# never take tasks sent by another test run on the same Redis database, nor the other way round.
os.environ.setdefault("GANGSCHED_CELERY_QUEUE", f"test-{os.getpid()}")
# Channel-layer groups of this run's own (``gangs`` is one name for every run): processes the
# tests start (daphne, workers) inherit it.
os.environ.setdefault("GANGSCHED_CHANNELS_PREFIX", f"test-{os.getpid()}")
if XDIST_WORKER:  # the controller's values, inherited: one per worker
    for name in ("GANGSCHED_CELERY_QUEUE", "GANGSCHED_CHANNELS_PREFIX"):
        os.environ[name] = f"{os.environ[name]}-{XDIST_WORKER}"
# A random key for this run (DEBUG is off, so the settings refuse none or a published one);
# in the environment, so the servers and workers the tests start sign the same sessions.
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
# The API's read cache trusts PostgreSQL's notifications, sent at commit: a test's writes in a
# transaction that is rolled back never notify, so it is off unless a test turns it on
# (tests/api/test_read_cache.py, which commits).
os.environ.setdefault("GANGSCHED_API_CACHE", "0")

from gangsched.settings import *  # noqa: E402, F403

# GANGSCHED_TEST_DB gives a test run its own database, so two runs on one machine (two
# engineers in one tree, or the CI run beside a developer's) never drop each other's.
DATABASES["default"].setdefault("TEST", {})["NAME"] = os.environ.get(  # noqa: F405
    "GANGSCHED_TEST_DB",
    "test_" + DATABASES["default"]["NAME"],  # noqa: F405
)
