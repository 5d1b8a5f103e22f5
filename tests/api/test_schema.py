"""The OpenAPI schema generates and validates without a warning; it, Swagger UI and Redoc are for
signed-in users (a session or a token; anonymous requests get the API's 401); Swagger UI and Redoc
are served from local static files (drf-spectacular-sidecar), never from a CDN."""

import re

import pytest
import yaml
from django.core.management import call_command

pytestmark = pytest.mark.django_db

OPERATIONS = {
    "auth_token",
    "gangs_list",
    "gangs_submit",
    "gangs_detail",
    "gangs_events",
    "gangs_retry",
    "gangs_kill",
    "manifests_apply",
    "events_list",
    "nodes_list",
    "cluster_summary",
    "simulations_list",
    "simulations_start",
    "simulations_retrieve",
    "queues_list",
    "queues_create",
    "queues_detail",
    "queues_change",
    "queues_delete",
    "queues_close",
    "queues_open",
    "topologies_list",
    "topologies_detail",
    "topologies_delete",
}


def test_the_schema_validates_with_no_warnings(tmp_path):
    # --fail-on-warn turns any warning (an unresolvable field, a view without a schema) into an error.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))


@pytest.fixture
def client(client, alice):
    """A browser signed in (a session), as someone reading the API's docs is."""
    client.force_login(alice)
    return client


@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/", "/api/redoc/"])
def test_the_schema_and_its_viewers_are_for_signed_in_users(url, client, anonymous, as_alice):
    refused = anonymous.get(url)
    if url == "/api/schema/":  # for API clients: the API's 401
        assert refused.status_code == 401 and refused["WWW-Authenticate"] == "Token"
        reason = "Authentication credentials were not provided."
        assert yaml.safe_load(refused.content) == {"errors": [{"field": None, "reason": reason}]}
    else:  # pages: sign in first, as on the dashboard
        assert refused.status_code == 302 and refused["Location"] == f"/accounts/login/?next={url}"
    assert client.get(url).status_code == 200  # a session
    assert as_alice.get(url).status_code == 200  # a token


def test_a_bad_token_is_refused_by_the_viewers_too(anonymous):
    anonymous.credentials(HTTP_AUTHORIZATION="Token made-up-token")
    assert anonymous.get("/api/docs/").status_code == 401


def test_the_schema_documents_every_api_operation(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    operations = {op["operationId"] for path in schema["paths"].values() for op in path.values()}
    assert operations == OPERATIONS
    gangs_list = schema["paths"]["/api/v1/gangs/"]["get"]
    assert {"phase", "state", "namespace", "queue", "submitter", "search", "cursor", "pageSize"} <= {
        p["name"] for p in gangs_list["parameters"]
    }
    assert "tokenAuth" in schema["components"]["securitySchemes"]


@pytest.mark.parametrize("url", ["/api/docs/", "/api/redoc/"])
def test_the_docs_pages_use_only_local_assets(client, url):
    response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "cdn" not in html.lower()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, html
    assert not [a for a in assets if a.startswith(("http:", "https:", "//"))]
    for asset in assets:
        if asset.startswith("/static/"):
            assert client.get(asset).status_code == 200, asset


def test_swagger_ui_does_not_send_the_schema_to_an_online_validator(client):
    script = client.get("/api/docs/?script=").content.decode()  # drf-spectacular's inline init script
    html = client.get("/api/docs/").content.decode()
    assert '"validatorUrl": null' in html + script
