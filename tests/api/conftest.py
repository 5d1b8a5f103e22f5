"""The API's cast: alice and bob submit gangs, olga is in the operators group, vera may view every
gang but neither retry nor kill. Each test gets its own cache key prefix, so throttle counters
never leak between tests or between test runs sharing Redis database 15."""

import uuid

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from dashboard.api import authentication as token_cache
from tests.cast import make_gang  # noqa: F401  (the tests here import it from this conftest)


@pytest.fixture(autouse=True)
def _own_cache_prefix(settings):
    caches = {name: dict(config) for name, config in django_settings.CACHES.items()}
    caches["default"]["KEY_PREFIX"] = f"test-{uuid.uuid4().hex}"
    settings.CACHES = caches


@pytest.fixture(autouse=True)
def _empty_token_cache():
    """The API's token cache lives in the process: each test starts without entries."""
    token_cache.clear()
    yield
    token_cache.clear()


def client_for(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def as_alice(alice) -> APIClient:
    return client_for(alice)


@pytest.fixture
def as_bob(bob) -> APIClient:
    return client_for(bob)


@pytest.fixture
def as_olga(olga) -> APIClient:
    return client_for(olga)


@pytest.fixture
def as_vera(vera) -> APIClient:
    return client_for(vera)


@pytest.fixture
def anonymous(db) -> APIClient:
    return APIClient()


def job(**overrides) -> dict:
    """A valid JSON gang job; tests override one thing at a time."""
    body = {
        "namespace": "ml",
        "name": "train",
        "minMember": 2,
        "mode": "Strict",
        "style": "Hard",
        "waitSeconds": 300,
        "queue": "default",
        "pods": [
            {"name": "train-0", "requests": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": 1}},
            {"name": "train-1", "requests": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": 1}},
        ],
    }
    body.update(overrides)
    return body


def errors(response) -> list[tuple]:
    return [(error["field"], error["reason"]) for error in response.json()["errors"]]


class StepClock:
    """A clock that moves only when a test moves it (``now``): the token cache's ``_now``."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now
