"""Production security switches: one variable, ``GANGSCHED_HTTPS=1``, turns on everything
``manage.py check --deploy`` asks of a site served over HTTPS (a test runs the check with it).

Off by default because ``make run`` and the tests serve plain HTTP on 127.0.0.1, where secure
cookies would never be sent back and the redirect would lead nowhere. When it is on:

- plain-HTTP requests are redirected to HTTPS, except ``/healthz`` and ``/metrics``, which
  Kubernetes probes and Prometheus call inside the cluster over HTTP;
- HSTS for ``GANGSCHED_HSTS_SECONDS`` (one year), subdomains included, marked preloadable;
- the session and CSRF cookies are sent only over HTTPS;
- a good ``SECRET_KEY`` is required even with ``DEBUG`` on (see below).

``SECRET_KEY`` (secret_key.py): with ``DEBUG`` off or ``GANGSCHED_HTTPS=1``, an unset, empty, short,
predictable or published key stops every process at startup with one line saying why; the laptop
default would let anyone who has read this repository forge sessions.

Behind a proxy that terminates TLS, ``GANGSCHED_TRUST_X_FORWARDED_PROTO=1`` makes Django believe
its ``X-Forwarded-Proto: https`` (set it only when the proxy overwrites that header, or a client
could claim HTTPS); ``CSRF_TRUSTED_ORIGINS`` lists the origins forms may be posted from when they
differ from the host (``https://gangsched.example.com``).
"""

import os

from .base import DEBUG
from .env import parse_bool, parse_list, parse_networks, parse_seconds
from .secret_key import secret_key

GANGSCHED_HTTPS = parse_bool("GANGSCHED_HTTPS", os.environ.get("GANGSCHED_HTTPS"))

SECRET_KEY = secret_key(
    os.environ.get("SECRET_KEY"),
    os.environ.get("GANGSCHED_SECRET_KEY_FILE"),
    required=not DEBUG or GANGSCHED_HTTPS,
)

if GANGSCHED_HTTPS:
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
    SECURE_HSTS_SECONDS = int(os.environ.get("GANGSCHED_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True

if parse_bool("GANGSCHED_TRUST_X_FORWARDED_PROTO", os.environ.get("GANGSCHED_TRUST_X_FORWARDED_PROTO")):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

CSRF_TRUSTED_ORIGINS = parse_list(os.environ.get("CSRF_TRUSTED_ORIGINS"), "")

# Sign-in limits (dashboard/signin.py), on every door that takes a password: the login page,
# the admin's, the API's token endpoint. Per account (username): this many failures within the
# window lock it for LOCKOUT_S, doubling with each further lock up to LOCKOUT_MAX_S; a success
# resets. Per client address, a soft throttle: this many failures within the window, then 429
# with Retry-After until the window ends.
AUTHENTICATION_BACKENDS = ["dashboard.signin.SignInBackend"]  # ModelBackend with those limits
GANGSCHED_LOGIN_MAX_FAILURES = int(os.environ.get("GANGSCHED_LOGIN_MAX_FAILURES", "5"))
GANGSCHED_LOGIN_FAILURE_WINDOW_S = parse_seconds(
    "GANGSCHED_LOGIN_FAILURE_WINDOW_S", os.environ.get("GANGSCHED_LOGIN_FAILURE_WINDOW_S"), 900
)
GANGSCHED_LOGIN_LOCKOUT_S = parse_seconds(
    "GANGSCHED_LOGIN_LOCKOUT_S", os.environ.get("GANGSCHED_LOGIN_LOCKOUT_S"), 60
)
GANGSCHED_LOGIN_LOCKOUT_MAX_S = parse_seconds(
    "GANGSCHED_LOGIN_LOCKOUT_MAX_S", os.environ.get("GANGSCHED_LOGIN_LOCKOUT_MAX_S"), 3600
)
GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES = int(os.environ.get("GANGSCHED_LOGIN_ADDRESS_MAX_FAILURES", "30"))
GANGSCHED_LOGIN_ADDRESS_WINDOW_S = parse_seconds(
    "GANGSCHED_LOGIN_ADDRESS_WINDOW_S", os.environ.get("GANGSCHED_LOGIN_ADDRESS_WINDOW_S"), 60
)
# X-Forwarded-For / X-Real-IP are believed only from these peers (dashboard/client_address.py):
# comma-separated addresses or networks of your ingress or proxies; default none.
GANGSCHED_TRUSTED_PROXIES = parse_networks(
    "GANGSCHED_TRUSTED_PROXIES", os.environ.get("GANGSCHED_TRUSTED_PROXIES")
)

# /metrics (dashboard/metrics.py): a bearer token Prometheus sends, and/or the addresses or
# networks that may scrape without one (comma-separated; default: loopback only).
GANGSCHED_METRICS_TOKEN = os.environ.get("GANGSCHED_METRICS_TOKEN", "")
GANGSCHED_METRICS_ALLOW = os.environ.get("GANGSCHED_METRICS_ALLOW", "127.0.0.1,::1")
