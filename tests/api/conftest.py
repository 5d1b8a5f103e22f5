"""The API's cast: alice and bob submit gangs, olga is in the operators group, vera may view every
gang but neither retry nor kill. Each test gets its own cache key prefix, so throttle counters
never leak between tests or between test runs sharing Redis database 15."""

import uuid

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import Group, Permission, User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from scheduler_core.services.submit import gang_submit


@pytest.fixture(autouse=True)
def _own_cache_prefix(settings):
    caches = {name: dict(config) for name, config in django_settings.CACHES.items()}
    caches["default"]["KEY_PREFIX"] = f"test-{uuid.uuid4().hex}"
    settings.CACHES = caches


def client_for(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def alice(db) -> User:
    return User.objects.create_user("alice", password="alice-pass-123")


@pytest.fixture
def bob(db) -> User:
    return User.objects.create_user("bob", password="bob-pass-123")


@pytest.fixture
def olga(db) -> User:
    """An operator: a member of the group the data migration creates."""
    user = User.objects.create_user("olga", password="olga-pass-123")
    user.groups.add(Group.objects.get(name="operators"))
    return user


@pytest.fixture
def vera(db) -> User:
    """Sees every gang (view_gang) but has neither retry_gang nor kill_gang."""
    user = User.objects.create_user("vera", password="vera-pass-123")
    user.user_permissions.add(Permission.objects.get(codename="view_gang"))
    return user


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


def make_gang(namespace="ml", name="train", *, submitter="alice", pods=2, min_member=None, **fields):
    return gang_submit(
        namespace=namespace,
        name=name,
        min_member=min_member or pods,
        pods=[{"name": f"{name}-{i}", "requests": {"cpu": "1", "memory": "1Gi"}} for i in range(pods)],
        submitter=submitter,
        **fields,
    )


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
