"""Websocket tests through the whole ASGI application (origin check, session auth, routing) on the
real channels-redis layer. The layer's prefix is this run's own (tests/settings.py), so runs that
share Redis database 15 never see each other's groups."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client

from gangsched.asgi import application
from tests.conftest import operators_group


@pytest.fixture(autouse=True)
async def _close_thread_connections():
    """The consumer's queries run on asgiref's one sync thread, whose connections outlive a test
    (CONN_MAX_AGE); close them, or the test database cannot be dropped at the end."""
    yield
    await database_sync_to_async(connections.close_all)()


def logged_in(user: User) -> User:
    """The user, with ``cookie``: a session of theirs (made here: no ORM inside async tests)."""
    client = Client()
    client.force_login(user)
    user.cookie = f"sessionid={client.cookies['sessionid'].value}"
    return user


def communicator(user: User | None = None, origin: str = "http://127.0.0.1:8000") -> WebsocketCommunicator:
    headers = [(b"host", b"127.0.0.1:8000")]
    if origin:
        headers.append((b"origin", origin.encode()))
    if user is not None:
        headers.append((b"cookie", user.cookie.encode()))
    return WebsocketCommunicator(application, "/ws/gangs/", headers=headers)


@pytest.fixture
def alice(transactional_db) -> User:
    return logged_in(User.objects.create_user("alice", password="alice-pass-123"))


@pytest.fixture
def bob(transactional_db) -> User:
    return logged_in(User.objects.create_user("bob", password="bob-pass-123"))


@pytest.fixture
def olga(transactional_db) -> User:
    user = User.objects.create_user("olga", password="olga-pass-123")
    user.groups.add(operators_group())
    return logged_in(user)
