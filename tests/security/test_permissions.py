"""Who may do what, as one matrix per surface: every API endpoint, page and admin action for an
anonymous visitor, the gang's submitter (alice), another submitter (bob), a viewer (vera: sees
every gang, may neither retry nor kill) and an operator (olga). Another's gang is a 404, never a
403, so a name alone does not reveal that a gang exists. The websocket is in test_websocket.py."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from scheduler_core.models import Gang, Node
from tests.api.conftest import client_for
from tests.cast import make_gang

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "alice", "bob", "vera", "olga"]
EVERYONE = {"anonymous": 401, "alice": 200, "bob": 200, "vera": 200, "olga": 200}
OWNER_OR_VIEWER = {"anonymous": 401, "alice": 200, "bob": 404, "vera": 200, "olga": 200}
OWNER_OR_PERMISSION = {"anonymous": 401, "alice": 200, "bob": 404, "vera": 403, "olga": 200}


@pytest.fixture
def users(alice, bob, vera, olga) -> dict[str, User | None]:
    return {"anonymous": None, "alice": alice, "bob": bob, "vera": vera, "olga": olga}


@pytest.fixture
def train(db) -> Gang:
    """alice's gang, timed out, so both retry and kill apply."""
    gang = make_gang("ml", "train", submitter="alice")
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")
    return gang


API_READS = [
    ("/api/v1/gangs/", EVERYONE),
    ("/api/v1/gangs/ml/train/", OWNER_OR_VIEWER),
    ("/api/v1/gangs/ml/train/events/", OWNER_OR_VIEWER),
    ("/api/v1/events/", EVERYONE),
    ("/api/v1/events/?gang=ml/train", EVERYONE),
    ("/api/v1/nodes/", EVERYONE),
    ("/api/v1/cluster/", EVERYONE),
]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("url", "expected"), API_READS, ids=[url for url, _ in API_READS])
def test_api_reads(users, train, role, url, expected):
    response = client_for(users[role]).get(url)

    assert response.status_code == expected[role]
    is_list = url.endswith("/events/") or "events/?" in url or url == "/api/v1/gangs/"
    if is_list and response.status_code == 200:  # another's gang and its events are left out
        rows = response.json()["results"]
        assert bool(rows) is (role in ("alice", "vera", "olga")), rows
    if response.status_code in (401, 404):
        assert set(response.json()) == {"errors"}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", ["retry", "kill"])
def test_api_actions(users, train, role, action):
    response = client_for(users[role]).post(f"/api/v1/gangs/ml/train/{action}/")

    assert response.status_code == OWNER_OR_PERMISSION[role]
    train.refresh_from_db()
    acted = response.status_code == 200
    assert train.phase == ({"retry": "Pending", "kill": "Killed"}[action] if acted else "TimedOut")


@pytest.mark.parametrize("role", ROLES)
def test_api_submission(users, role):
    body = {"namespace": "ml", "name": f"job-{role}", "minMember": 1, "pods": [{"name": f"p-{role}"}]}
    response = client_for(users[role]).post("/api/v1/gangs/", body, format="json")

    assert response.status_code == (401 if role == "anonymous" else 201)
    gang = Gang.objects.filter(name=f"job-{role}").first()
    assert (gang is None) if role == "anonymous" else (gang.submitter == role)


NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi}}\n"


@pytest.mark.parametrize(("role", "expected"), [("anonymous", 401), ("alice", 403), ("olga", 201)])
def test_api_manifests_of_nodes_are_for_operators(users, role, expected):
    response = client_for(users[role]).post("/api/v1/manifests/", NODE, content_type="application/yaml")

    assert response.status_code == expected
    assert Node.objects.filter(name="n1").exists() is (expected == 201)


@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/", "/api/redoc/", "/healthz"])
def test_the_schema_docs_and_health_are_public(client, url):
    assert client.get(url).status_code in (200, 503)  # healthz: 503 when no worker answers


def page_client(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


PAGES = ["/", "/gangs/", "/nodes/", "/timed-out/", "/simulations/", "/gangs/ml/train/"]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("url", PAGES)
def test_pages(users, train, role, url):
    response = page_client(users[role]).get(url)

    if role == "anonymous":
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/?next=")
    elif url == "/gangs/ml/train/" and role == "bob":
        assert response.status_code == 404
    else:
        assert response.status_code == 200
        if url in ("/gangs/", "/timed-out/"):
            shows_train = 'data-gang="ml/train"' in response.content.decode()
            assert shows_train is (role != "bob")


@pytest.mark.parametrize("role", ROLES)
def test_page_actions(users, train, role):
    form = {"action": "kill", "gang": "ml/train", "confirm": "yes", "next": "/timed-out/"}
    response = page_client(users[role]).post("/gangs/act/", form, follow=True)

    train.refresh_from_db()
    if role == "anonymous":
        assert response.redirect_chain[0][0].startswith("/accounts/login/")
    else:
        messages = [str(m) for m in response.context["messages"]]
        expected = {
            "alice": "ml/train: killed",
            "olga": "ml/train: killed",
            "bob": "ml/train: not found",
            "vera": "ml/train: you may kill only your own gangs without the kill_gang permission",
        }[role]
        assert messages == [expected]
    assert train.phase == ("Killed" if role in ("alice", "olga") else "TimedOut")


def test_the_action_endpoint_takes_posts_only(alice):
    assert page_client(alice).get("/gangs/act/").status_code == 405


@pytest.fixture
def staff_viewer(vera) -> User:
    """vera with admin access: she sees gangs in the admin but may not retry or kill them."""
    vera.is_staff = True
    vera.save()
    return vera


@pytest.mark.parametrize("role", ["anonymous", "alice", "staff_viewer", "olga"])
def test_admin(request, users, train, role):
    user = request.getfixturevalue("staff_viewer") if role == "staff_viewer" else users[role]
    client = page_client(user)
    changelist = "/admin/scheduler_core/gang/"

    page = client.get(changelist)
    form = {"action": "kill_selected", "_selected_action": [train.pk]}
    response = client.post(changelist, form, follow=True)

    train.refresh_from_db()
    if role in ("anonymous", "alice"):  # not staff: the admin's login page, nothing done
        assert page.status_code == 302 and "/admin/login/" in page["Location"]
        assert train.phase == "TimedOut"
    elif role == "staff_viewer":
        assert page.status_code == 200
        messages = [str(m) for m in response.context["messages"]]
        assert messages == ["ml/train: you may kill only your own gangs without the kill_gang permission"]
        assert train.phase == "TimedOut"
    else:
        assert page.status_code == 200
        assert [str(m) for m in response.context["messages"]] == ["ml/train: killed"]
        assert train.phase == "Killed"


def test_admin_edits_need_the_model_permission(staff_viewer, train):
    """A staff viewer may look at a gang in the admin but not change or delete it."""
    client = page_client(staff_viewer)
    change = f"/admin/scheduler_core/gang/{train.pk}/change/"
    assert client.get(change).status_code == 200  # read-only view
    assert client.post(change, {"priority": 999}).status_code == 403
    assert client.post(f"/admin/scheduler_core/gang/{train.pk}/delete/", {"post": "yes"}).status_code == 403
    train.refresh_from_db()
    assert train.priority != 999 and Gang.objects.filter(pk=train.pk).exists()
