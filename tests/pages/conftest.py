"""The pages' cast: alice and bob submit gangs, olga is an operator, vera sees every gang but may
neither retry nor kill. Clients are logged in with sessions, as a browser is."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from scheduler_core.models import Gang
from tests.cast import make_gang  # noqa: F401  (the tests here import it from this conftest)

pytestmark = pytest.mark.django_db


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
