"""Production settings: ``manage.py check --deploy`` is clean with the documented variables, and
names what is missing without them. Each run is a subprocess, because settings are read once at
import from the environment."""

import secrets

from . import processes

PRODUCTION = {
    "SECRET_KEY": secrets.token_urlsafe(50),  # 67 random characters
    "ALLOWED_HOSTS": "gangsched.example.com,testserver",
    "GANGSCHED_HTTPS": "1",
}


def manage(*args: str, **env: str):
    return processes.manage(*args, drop=("DEBUG", "SECRET_KEY", "GANGSCHED_HTTPS"), **env)


def test_check_deploy_is_clean_with_the_production_variables():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_a_laptop_setup_fails_check_deploy_naming_each_setting():
    laptop = {**PRODUCTION, "GANGSCHED_HTTPS": "0", "DEBUG": "1", "SECRET_KEY": ""}
    result = manage("check", "--deploy", "--fail-level", "WARNING", **laptop)
    assert result.returncode != 0
    # HSTS, redirect, session and CSRF cookies (GANGSCHED_HTTPS), the secret key, DEBUG
    for check in ("W004", "W008", "W012", "W016", "W009", "W018"):
        assert f"security.{check}" in result.stderr


def test_the_https_switch_without_a_secret_key_stops_startup():
    """Even with DEBUG on (the other cases: test_secret_key.py)."""
    env = {k: v for k, v in PRODUCTION.items() if k != "SECRET_KEY"}
    result = manage("check", DEBUG="1", GANGSCHED_SECRET_KEY_FILE="/nonexistent/secret_key", **env)
    assert result.returncode == 2
    assert result.stderr.startswith("gangsched: SECRET_KEY is not set; set SECRET_KEY to 50+ random")


# Run inside the production settings: plain HTTP is redirected except the probes; cookies are
# secure and HSTS is sent over HTTPS.
PROBE = """
from django.test import Client
client = Client()
print("@api", client.get("/api/v1/gangs/").status_code, client.get("/api/v1/gangs/").get("Location"))
print("@healthz", client.get("/healthz").status_code)
print("@metrics", client.get("/metrics", REMOTE_ADDR="10.9.9.9").status_code)  # 403: reads no database
secure = client.get("/accounts/login/", secure=True)
print("@hsts", secure.get("Strict-Transport-Security"))
print("@csrf-cookie-secure", bool(secure.cookies["csrftoken"]["secure"]))
"""


def test_production_redirects_plain_http_except_probes_and_sends_hsts_and_secure_cookies():
    result = manage("shell", "-c", PROBE, **PRODUCTION)
    assert result.returncode == 0, result.stderr
    lines = dict(line[1:].split(" ", 1) for line in result.stdout.splitlines() if line.startswith("@"))
    assert lines["api"] == "301 https://testserver/api/v1/gangs/"
    assert not lines["healthz"].startswith("301")
    assert lines["metrics"] == "403"  # answered over plain HTTP, not redirected
    assert lines["hsts"] == "max-age=31536000; includeSubDomains; preload"
    assert lines["csrf-cookie-secure"] == "True"
