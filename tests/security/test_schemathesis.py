"""schemathesis against the OpenAPI schema, in-process through the WSGI application, as a
submitter and as an operator: no 5xx, and every response matches the schema (status code
documented, body of the documented shape, headers, content type). Bounded here
(``MAX_EXAMPLES`` per operation); ``bench/schemathesis.sh`` runs the same test longer."""

import json
import os

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core import signals
from django.db import close_old_connections
from django.urls import resolve
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIRequestFactory, force_authenticate
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from gangsched.wsgi import application
from scheduler_core.models import Gang
from tests.cast import make_gang

MAX_EXAMPLES = int(os.environ.get("GANGSCHED_SCHEMATHESIS_EXAMPLES", "15"))


def served_schema() -> dict:
    """What ``GET /api/schema/?format=json`` answers a signed-in user (the schema is for them
    only), from the view the URL conf serves there. Loaded at collection, before any test
    database: the user is one never saved, so the answer reads no database."""
    request = APIRequestFactory().get("/api/schema/", {"format": "json"}, SERVER_NAME="localhost")
    force_authenticate(request, user=User(username="schemathesis"))
    response = resolve("/api/schema/").func(request)
    assert response.status_code == 200, response.status_code
    return json.loads(response.render().content)


# schemathesis' lazy loader (``from_fixture``) does not work with pytest 9 in schemathesis 4.32.5
# (``Function._nodeid``), and ``from_wsgi`` would fetch the schema anonymously. Every endpoint,
# trace replay's included: a simulation a case starts is created inside the test's transaction,
# so its Celery task (queued on commit) is never sent. The cases are sent to the WSGI app, as
# ``from_wsgi`` sets them up.
schema = schemathesis.openapi.from_dict(served_schema())
schema.app = application
schema.location = "/api/schema/?format=json"
# What is checked: no 5xx, and every response as documented. Left out: positive and negative
# data acceptance, because much of the API's validation (minMember against the pods, RFC 1123
# names, the quantity grammar) is beyond what the schema says, so schema-valid bodies are
# rightly refused with a documented 400.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """Requests run inside the test's transaction: keep Django from closing the connection at
    the end of each request, as its own test client does."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def token_header(user) -> dict[str, str]:
    if not Gang.objects.filter(namespace="ml", name="train").exists():
        make_gang("ml", "train", submitter="alice")  # something real to read, retry and kill
    token, _ = Token.objects.get_or_create(user=user)
    return {"Authorization": f"Token {token.key}"}


FUZZ = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,  # the same cases every run: a failure here is reproducible
    suppress_health_check=list(HealthCheck),
)


@schema.parametrize()
@FUZZ
@pytest.mark.django_db
def test_the_api_as_a_submitter(case, alice):
    case.call_and_validate(headers=token_header(alice), checks=CHECKS)


@schema.parametrize()
@FUZZ
@pytest.mark.django_db
def test_the_api_as_an_operator(case, olga):
    case.call_and_validate(headers=token_header(olga), checks=CHECKS)
