"""The pages' cast: alice and bob submit gangs, olga is an operator, vera sees every gang but may
neither retry nor kill. Clients are logged in with sessions, as a browser is."""

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.test import Client

from scheduler_core.models import Gang
from scheduler_core.services.submit import gang_submit

pytestmark = pytest.mark.django_db


def make_gang(namespace="ml", name="train", *, submitter="alice", pods=2, min_member=None, **fields) -> Gang:
    return gang_submit(
        namespace=namespace,
        name=name,
        min_member=min_member or pods,
        pods=[{"name": f"{name}-{i}", "requests": {"cpu": "1", "memory": "1Gi"}} for i in range(pods)],
        submitter=submitter,
        **fields,
    )


def time_out(gang: Gang) -> Gang:
    Gang.objects.filter(pk=gang.pk).update(
        phase="TimedOut", reason="TimedOut", message="timed out: not satisfied within 10s (waited 10.9s)"
    )
    gang.refresh_from_db()
    return gang


def login(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice(db) -> User:
    return User.objects.create_user("alice", password="alice-pass-123")


@pytest.fixture
def bob(db) -> User:
    return User.objects.create_user("bob", password="bob-pass-123")


@pytest.fixture
def olga(db) -> User:
    user = User.objects.create_user("olga", password="olga-pass-123", is_staff=True)
    user.groups.add(Group.objects.get(name="operators"))
    return user


@pytest.fixture
def vera(db) -> User:
    user = User.objects.create_user("vera", password="vera-pass-123")
    user.user_permissions.add(Permission.objects.get(codename="view_gang"))
    return user


@pytest.fixture
def as_alice(alice) -> Client:
    return login(alice)


@pytest.fixture
def as_bob(bob) -> Client:
    return login(bob)


@pytest.fixture
def as_olga(olga) -> Client:
    return login(olga)


@pytest.fixture
def as_vera(vera) -> Client:
    return login(vera)


@pytest.fixture
def world(db):
    """alice's ml/train (running-ish) and ml/late (timed out), bob's cv/detect (timed out)."""
    return {
        "train": make_gang("ml", "train", submitter="alice", queue="gpu", priority=10),
        "late": time_out(make_gang("ml", "late", submitter="alice")),
        "detect": time_out(make_gang("cv", "detect", submitter="bob", pods=3)),
    }
