"""Every state-changing form and the session-authenticated API refuse a POST without the CSRF
token (403, nothing changed); the same POST with the token goes through, so the 403 is the
token's doing. Token-authenticated API calls need no CSRF token: no cookie, nothing to forge."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from scheduler_core.models import Gang, Node
from tests.cast import make_gang

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db) -> User:
    """A superuser: every form below is open to them, so only the token decides."""
    return User.objects.create_superuser("root", password="root-pass-123")


@pytest.fixture
def train(db) -> Gang:
    gang = make_gang("ml", "train", submitter="root")
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")
    return gang


def csrf_client(user=None) -> Client:
    client = Client(enforce_csrf_checks=True)
    if user is not None:
        client.force_login(user)
    return client


def token_of(client: Client, url: str = "/accounts/login/") -> str:
    client.get(url)
    return client.cookies["csrftoken"].value


@pytest.fixture
def node(db) -> Node:
    return Node.objects.create(name="n1", allocatable={"cpu": 4000})


# (url, form) of each state-changing POST a signed-in superuser can make
FORMS = {
    "logout": ("/accounts/logout/", {}),
    "gang action": ("/gangs/act/", {"action": "kill", "gang": "ml/train", "confirm": "yes"}),
    "admin action": (
        "/admin/scheduler_core/gang/",
        {"action": "kill_selected", "_selected_action": ["{pk}"]},
    ),
    "admin delete": ("/admin/scheduler_core/node/{node}/delete/", {"post": "yes"}),
    "api submit": (
        "/api/v1/gangs/",
        {"namespace": "ml", "name": "x", "minMember": 1, "pods": [{"name": "x"}]},
    ),
    "api kill": ("/api/v1/gangs/ml/train/kill/", {}),
}


def post(client: Client, name: str, train: Gang, node: Node, token: str | None):
    url, form = FORMS[name]
    url = url.format(node=node.pk)
    form = {k: ([str(train.pk)] if v == ["{pk}"] else v) for k, v in form.items()}
    headers = {"HTTP_X_CSRFTOKEN": token} if token else {}
    if url.startswith("/api/"):
        return client.post(url, form, content_type="application/json", **headers)
    return client.post(url, {**form, "csrfmiddlewaretoken": token} if token else form, **headers)


def unchanged(train: Gang, node: Node) -> bool:
    train.refresh_from_db()
    return (
        train.phase == "TimedOut"
        and Node.objects.filter(pk=node.pk).exists()
        and not Gang.objects.filter(name="x").exists()
    )


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_post_without_the_csrf_token_is_refused(root, train, node, name):
    client = csrf_client(root)
    response = post(client, name, train, node, token=None)

    assert response.status_code == 403
    assert unchanged(train, node)
    if name != "logout":
        assert "_auth_user_id" in client.session  # still signed in


@pytest.mark.parametrize("name", sorted(FORMS))
def test_the_same_post_with_the_token_goes_through(root, train, node, name):
    client = csrf_client(root)
    response = post(client, name, train, node, token=token_of(client))

    assert response.status_code in (200, 201, 302)
    assert not unchanged(train, node) or name == "logout"


def test_the_login_form_needs_the_token(olga):
    client = csrf_client()
    assert (
        client.post("/accounts/login/", {"username": "olga", "password": "olga-pass-123"}).status_code == 403
    )
    response = client.post(
        "/accounts/login/",
        {"username": "olga", "password": "olga-pass-123", "csrfmiddlewaretoken": token_of(client)},
    )
    assert response.status_code == 302 and "_auth_user_id" in client.session


def test_token_authentication_needs_no_csrf_token(as_olga, train):
    assert as_olga.post("/api/v1/gangs/ml/train/kill/").status_code == 200


POST_FORM = re.compile(r"<form[^>]*method=\"post\"[^>]*>(.*?)</form>", re.S | re.I)


@pytest.mark.parametrize(
    "url", ["/", "/gangs/", "/gangs/ml/train/", "/nodes/", "/timed-out/", "/simulations/", "/accounts/login/"]
)
def test_every_post_form_on_the_pages_carries_the_token(olga, train, url):
    client = csrf_client(olga) if url != "/accounts/login/" else csrf_client()
    html = client.get(url).content.decode()
    forms = POST_FORM.findall(html)
    if url in ("/gangs/ml/train/", "/timed-out/", "/accounts/login/"):
        assert forms  # retry/kill, the bulk actions, sign-in
    for form in forms:
        assert 'name="csrfmiddlewaretoken"' in form, (url, form[:200])
