"""Tokens, sessions, and 401 for anonymous users everywhere under /api/v1/ but the token endpoint."""

import pytest
from django.contrib.auth.models import Group, Permission

ENDPOINTS = [
    ("get", "/api/v1/gangs/"),
    ("post", "/api/v1/gangs/"),
    ("get", "/api/v1/gangs/ml/train/"),
    ("get", "/api/v1/gangs/ml/train/events/"),
    ("post", "/api/v1/gangs/ml/train/retry/"),
    ("post", "/api/v1/gangs/ml/train/kill/"),
    ("post", "/api/v1/manifests/"),
    ("get", "/api/v1/events/"),
    ("get", "/api/v1/nodes/"),
    ("get", "/api/v1/cluster/"),
]


@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_anonymous_users_get_401_with_the_error_shape(anonymous, method, url):
    response = getattr(anonymous, method)(url)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json() == {
        "errors": [{"field": None, "reason": "Authentication credentials were not provided."}]
    }


def test_a_bad_token_is_401(anonymous):
    anonymous.credentials(HTTP_AUTHORIZATION="Token nope")
    assert anonymous.get("/api/v1/gangs/").status_code == 401


def test_a_token_for_a_username_and_password_authenticates(anonymous, alice):
    response = anonymous.post(
        "/api/v1/auth/token/", {"username": "alice", "password": "alice-pass-123"}, format="json"
    )
    assert response.status_code == 200
    anonymous.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    assert anonymous.get("/api/v1/gangs/").status_code == 200


def test_a_wrong_password_is_a_400_without_a_token(anonymous, alice):
    response = anonymous.post(
        "/api/v1/auth/token/", {"username": "alice", "password": "guess"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["reason"] == "Unable to log in with provided credentials."


def test_a_session_login_works_too(anonymous, alice):
    anonymous.force_login(alice)
    assert anonymous.get("/api/v1/cluster/").status_code == 200


def test_the_operators_group_has_the_action_and_view_permissions(db):
    codenames = set(Group.objects.get(name="operators").permissions.values_list("codename", flat=True))
    assert {"retry_gang", "kill_gang", "view_gang", "view_member", "view_node", "view_gangevent"} <= codenames
    assert "add_gang" not in codenames and "delete_gang" not in codenames
    assert Permission.objects.filter(codename="retry_gang").count() == 1
