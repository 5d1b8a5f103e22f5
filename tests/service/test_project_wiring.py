"""The pieces `make run` starts are configured the way the deployment relies on."""

import os

import pytest
import redis
from django.conf import settings

from gangsched.celery import app as celery_app
from tests.settings import (
    GIVEN_REDIS_ENVIRONMENT,
    XDIST_WORKER,
    redis_url_for_tests,
    redis_url_for_worker,
)


def test_celery_redelivers_unfinished_tasks_and_kills_them_before_redelivery():
    conf = celery_app.conf
    assert conf.broker_url == settings.REDIS_URL
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_serializer == "json"
    visibility_timeout = conf.broker_transport_options["visibility_timeout"]
    assert conf.task_soft_time_limit < conf.task_time_limit < visibility_timeout


def test_tests_use_their_own_redis_database():
    """Whatever REDIS_URL the user gave, tests/settings.py put the tests' own in its place (the
    rule: the tests below), for this process and the ones it starts; under xdist, each worker
    its own (where the worker started, GANGSCHED_TEST_REDIS_URL was the run's)."""
    given = redis_url_for_tests(GIVEN_REDIS_ENVIRONMENT)
    assert redis_url_for_worker(given, XDIST_WORKER) == settings.REDIS_URL
    assert os.environ["REDIS_URL"] == os.environ["GANGSCHED_TEST_REDIS_URL"] == settings.REDIS_URL
    if "GANGSCHED_TEST_REDIS_URL" not in GIVEN_REDIS_ENVIRONMENT:
        assert redis.Redis.from_url(settings.REDIS_URL).connection_pool.connection_kwargs["db"] == 15
    assert [host["address"] for host in settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"]] == [
        settings.REDIS_URL
    ]
    assert settings.CACHES["default"]["LOCATION"] == settings.REDIS_URL


@pytest.mark.parametrize(
    ("environ", "url"),
    [
        ({}, "redis://127.0.0.1:6379/15"),
        ({"REDIS_URL": "redis://:secret@cache.internal:6380/0"}, "redis://:secret@cache.internal:6380/15"),
        ({"REDIS_URL": "rediss://cache.internal"}, "rediss://cache.internal/15"),
        ({"REDIS_URL": "redis://cache.internal:6379?db=3"}, "redis://cache.internal:6379/15"),
        ({"REDIS_URL": "unix:///run/redis.sock?db=2"}, "unix:///run/redis.sock?db=15"),
        ({"REDIS_URL": "redis://cache.internal/15"}, "redis://cache.internal/15"),
        ({"REDIS_URL": "redis://a/0", "GANGSCHED_TEST_REDIS_URL": "redis://b/7"}, "redis://b/7"),
    ],
)
def test_the_tests_take_database_15_of_the_app_s_redis_unless_told_another(environ, url):
    assert redis_url_for_tests(environ) == url


@pytest.mark.parametrize(
    ("url", "worker", "own"),
    [
        ("redis://127.0.0.1:6379/15", "", "redis://127.0.0.1:6379/15"),  # no xdist
        ("redis://127.0.0.1:6379/15", "gw0", "redis://127.0.0.1:6379/15"),
        ("redis://127.0.0.1:6379/15", "gw1", "redis://127.0.0.1:6379/12"),  # 13 and 14: the bench's
        ("redis://127.0.0.1:6379/15", "gw2", "redis://127.0.0.1:6379/11"),
        ("redis://:secret@cache.internal:6380/5", "gw1", "redis://:secret@cache.internal:6380/4"),
        ("redis://cache.internal:6379?db=7", "gw1", "redis://cache.internal:6379/6"),
        ("unix:///run/redis.sock?db=15", "gw1", "unix:///run/redis.sock?db=12"),
    ],
)
def test_each_xdist_worker_takes_a_redis_database_of_its_own(url, worker, own):
    assert redis_url_for_worker(url, worker) == own


def test_a_worker_past_the_last_free_redis_database_is_refused():
    assert redis_url_for_worker("redis://h/2", "gw1") == "redis://h/1"  # never the app's 0
    with pytest.raises(RuntimeError, match="gw2: no Redis database left below 2"):
        redis_url_for_worker("redis://h/2", "gw2")


def test_each_xdist_worker_has_its_own_queue_channel_prefix_and_database(db):
    if XDIST_WORKER:
        assert os.environ["GANGSCHED_CELERY_QUEUE"].endswith(f"-{XDIST_WORKER}")
        assert os.environ["GANGSCHED_CHANNELS_PREFIX"].endswith(f"-{XDIST_WORKER}")
        assert settings.DATABASES["default"]["NAME"].endswith(f"_{XDIST_WORKER}")  # the test database
    assert os.environ["GANGSCHED_CELERY_QUEUE"] == settings.CELERY_TASK_DEFAULT_QUEUE


def test_the_database_is_postgresql():
    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"


def test_the_asgi_app_routes_http_and_websockets():
    from gangsched.asgi import router

    assert set(router.application_mapping) == {"http", "websocket"}


async def test_the_asgi_servers_startup_pools_and_names_the_processs_database_sessions(monkeypatch):
    from channels.testing import ApplicationCommunicator

    from gangsched.asgi import application

    named = []  # how the naming works: tests/api/test_read_cache_stale.py
    monkeypatch.setattr("gangsched.asgi.name_web_sessions", lambda: named.append("named"))
    # The pool first (tests/service/test_web_pool.py): naming closes it, so its connections are named.
    monkeypatch.setattr("gangsched.asgi.pool_web_connections", lambda: named.append("pooled"))
    server = ApplicationCommunicator(application, {"type": "lifespan"})
    await server.send_input({"type": "lifespan.startup"})
    assert await server.receive_output(timeout=5) == {"type": "lifespan.startup.complete"}
    assert named == ["pooled", "named"]
    await server.send_input({"type": "lifespan.shutdown"})
    assert await server.receive_output(timeout=5) == {"type": "lifespan.shutdown.complete"}


@pytest.mark.django_db
def test_the_login_page_renders(client):
    response = client.get(settings.LOGIN_URL)
    assert response.status_code == 200
    assert b"Sign in" in response.content


@pytest.mark.django_db
def test_the_admin_asks_for_a_login(client):
    response = client.get("/admin/")
    assert response.status_code == 302
