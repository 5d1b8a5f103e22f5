"""The pieces `make run` starts are configured the way the deployment relies on."""

import pytest
from django.conf import settings

from gangsched.celery import app as celery_app


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
    assert settings.REDIS_URL.endswith("/15")
    assert [host["address"] for host in settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"]] == [
        settings.REDIS_URL
    ]


def test_the_database_is_postgresql():
    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"


def test_the_asgi_app_routes_http_and_websockets():
    from gangsched.asgi import application

    assert set(application.application_mapping) == {"http", "websocket"}


@pytest.mark.django_db
def test_the_login_page_renders(client):
    response = client.get(settings.LOGIN_URL)
    assert response.status_code == 200
    assert b"Sign in" in response.content


@pytest.mark.django_db
def test_the_admin_asks_for_a_login(client):
    response = client.get("/admin/")
    assert response.status_code == 302
