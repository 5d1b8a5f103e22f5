"""``X-Forwarded-For`` is believed only from ``GANGSCHED_TRUSTED_PROXIES``, by uvicorn as by the
application (gangsched/web_server.py): uvicorn alone would rewrite the client's address from the
header for every peer on loopback, where ``make run``'s clients, a sidecar proxy and ``kubectl
port-forward`` all are, and a client rotating the header would escape the sign-in throttle."""

import asyncio
import json
import signal
import sys
import urllib.error
import urllib.request

import pytest
from django.conf import global_settings
from django.contrib.auth.models import User
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from gangsched.web_server import arguments, proxy_arguments
from tests.browser.conftest import free_port
from tests.loop.workers import database_url
from tests.service.test_run_script import run_script, wait_for

from . import processes

# ---------------------------------------------------------------- the arguments


def test_without_trusted_proxies_uvicorn_believes_no_forwarded_header():
    for value in (None, "", " ", " , "):
        assert proxy_arguments(value) == ["--no-proxy-headers"]


def test_trusted_proxies_become_uvicorns_networks():
    assert proxy_arguments("10.0.0.1, 10.1.0.0/16,2001:db8::/32") == [
        "--forwarded-allow-ips",
        "10.0.0.1/32,10.1.0.0/16,2001:db8::/32",
    ]
    # Host bits set: uvicorn would take "10.0.0.1/8" for a name and trust no one.
    assert proxy_arguments("10.0.0.1/8") == ["--forwarded-allow-ips", "10.0.0.0/8"]


def test_a_bad_entry_is_named():
    with pytest.raises(ValueError, match="GANGSCHED_TRUSTED_PROXIES: 'ingress' is not an IP"):
        proxy_arguments("10.0.0.1,ingress")


def test_the_command_line_cannot_decide_what_the_setting_decides():
    environ = {"GANGSCHED_TRUSTED_PROXIES": "10.0.0.0/8"}
    assert arguments(["app", "--port", "8000"], environ) == [
        "app",
        "--port",
        "8000",
        "--forwarded-allow-ips",
        "10.0.0.0/8",
    ]
    assert arguments(["app"], {})[-1] == "--no-proxy-headers"
    for option in ("--proxy-headers", "--no-proxy-headers", "--forwarded-allow-ips=*"):
        with pytest.raises(ValueError, match="decided by GANGSCHED_TRUSTED_PROXIES"):
            arguments(["app", option], environ)


def client_seen(trusted: str, peer: str, forwarded: str) -> str:
    """The client address uvicorn's proxy middleware, trusting ``trusted``, hands the application."""
    seen = {}

    async def app(scope, receive, send):
        seen["client"] = scope["client"][0]

    scope = {"type": "http", "client": (peer, 1234), "headers": [(b"x-forwarded-for", forwarded.encode())]}
    asyncio.run(ProxyHeadersMiddleware(app, trusted_hosts=trusted)(scope, None, None))
    return seen["client"]


def test_uvicorn_reads_the_networks_as_the_application_does():
    option, trusted = proxy_arguments("10.0.0.0/24,127.0.0.1")
    assert option == "--forwarded-allow-ips"
    assert client_seen(trusted, "10.0.0.7", "203.0.113.9, 198.51.100.7, 10.0.0.3") == "198.51.100.7"
    assert client_seen(trusted, "127.0.0.1", "198.51.100.8") == "198.51.100.8"
    assert client_seen(trusted, "10.0.1.7", "198.51.100.7") == "10.0.1.7"  # not a trusted peer


def test_a_bad_setting_stops_the_web_server_before_uvicorn_starts():
    result = processes.run(
        [sys.executable, "-m", "gangsched.web_server", "gangsched.asgi:application"],
        GANGSCHED_TRUSTED_PROXIES="ingress",
    )
    assert result.returncode == 2, result.stderr
    reason = "GANGSCHED_TRUSTED_PROXIES: 'ingress' is not an IP address or network"
    assert result.stderr.strip() == f"gangsched: {reason}"


# ---------------------------------------------------------------- make run's server


def token(base: str, username: str, password: str, forwarded: str | None = None) -> int:
    """A sign-in at the token endpoint from 127.0.0.1: its status."""
    headers = {"Content-Type": "application/json"}
    if forwarded:
        headers["X-Forwarded-For"] = forwarded
    body = json.dumps({"username": username, "password": password}).encode()
    request = urllib.request.Request(base + "/api/v1/auth/token/", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.fixture
def serve(transactional_db, settings, redis_client, monkeypatch):
    """Starts ``make run``'s own web command (scripts/run.py) on a free port, on the test
    database, with the environment given; yields the base URL."""
    # The server checks passwords with its own hashers, not the fast one of these tests.
    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS
    User.objects.create_user("alice", password="alice-pass-123")
    redis_client.flushdb()  # no sign-in counter of an earlier run on 127.0.0.1
    run = run_script()
    monkeypatch.setenv("DATABASE_URL", database_url())
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "gangsched.settings")
    # The address limit counts in fixed windows: one that ends among a test's sign-ins starts its
    # count again. A window of some three centuries has no end during a test run.
    monkeypatch.setenv("GANGSCHED_LOGIN_ADDRESS_WINDOW_S", "10000000000")
    started = []

    def start(**env: str) -> str:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        port = free_port()
        supervisor = run.Supervisor({"web": run.commands("127.0.0.1", port, 1)["web"]})
        supervisor.start()
        started.append(supervisor)
        base = f"http://127.0.0.1:{port}"
        wait_for(base + "/accounts/login/", supervisor.procs["web"])
        return base

    yield start
    for supervisor in started:
        supervisor.send(signal.SIGKILL)
        supervisor.procs["web"].wait(timeout=10)


@pytest.mark.timeout(600)
def test_rotating_x_forwarded_for_from_loopback_gains_nothing(serve, monkeypatch):
    """uvicorn's default would trust 127.0.0.1 (and ``FORWARDED_ALLOW_IPS`` could widen that)."""
    monkeypatch.delenv("GANGSCHED_TRUSTED_PROXIES", raising=False)
    # The per-address limit lowered to 5 (its default is 30): the rule is the same, and each
    # failure costs a password hash.
    base = serve(FORWARDED_ALLOW_IPS="*", GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES="5")
    for i in range(5):  # one failure per username: no account is locked
        assert token(base, f"user{i}", "guess") == 400
    assert token(base, "alice", "alice-pass-123") == 429
    for i in range(3):
        assert token(base, "alice", "alice-pass-123", f"198.51.100.{i}") == 429


@pytest.mark.timeout(600)
def test_behind_a_trusted_proxy_on_loopback_each_client_is_counted_by_its_own_address(serve):
    """A sidecar proxy on 127.0.0.1, listed: uvicorn and the application both take the address
    the proxy appended."""
    base = serve(GANGSCHED_TRUSTED_PROXIES="127.0.0.1", GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES="3")
    for i in range(3):
        assert token(base, f"user{i}", "guess", f"203.0.113.{i}, 198.51.100.7") == 400
    assert token(base, "alice", "alice-pass-123", "198.51.100.7") == 429
    assert token(base, "alice", "alice-pass-123", "198.51.100.8") == 200
