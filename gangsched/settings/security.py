"""Production security switches: one variable, ``GANGSCHED_HTTPS=1``, turns on everything
``manage.py check --deploy`` asks of a site served over HTTPS (a test runs the check with it).

Off by default because ``make run`` and the tests serve plain HTTP on 127.0.0.1, where secure
cookies would never be sent back and the redirect would lead nowhere. When it is on:

- plain-HTTP requests are redirected to HTTPS, except ``/healthz`` and ``/metrics``, which
  Kubernetes probes and Prometheus call inside the cluster over HTTP;
- HSTS for ``GANGSCHED_HSTS_SECONDS`` (one year), subdomains included, marked preloadable;
- the session and CSRF cookies are sent only over HTTPS;
- a good ``SECRET_KEY`` is required even with ``DEBUG`` on (see below).

``SECRET_KEY`` (secret_key.py): with ``DEBUG`` off or ``GANGSCHED_HTTPS=1``, an unset, empty, short
or published key stops every process at startup with one line saying why; the laptop default
would let anyone who has read this repository forge sessions.

Behind a proxy that terminates TLS, ``GANGSCHED_TRUST_X_FORWARDED_PROTO=1`` makes Django believe
its ``X-Forwarded-Proto: https`` (set it only when the proxy overwrites that header, or a client
could claim HTTPS); ``CSRF_TRUSTED_ORIGINS`` lists the origins forms may be posted from when they
differ from the host (``https://gangsched.example.com``).
"""

import os

from .base import DEBUG
from .env import parse_bool, parse_list
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

# Failed sign-ins (login page and token endpoint, dashboard/login.py): this many per username or
# client address within the lockout window, then 429 until the window has passed.
GANGSCHED_LOGIN_MAX_FAILURES = int(os.environ.get("GANGSCHED_LOGIN_MAX_FAILURES", "10"))
GANGSCHED_LOGIN_LOCKOUT_S = int(os.environ.get("GANGSCHED_LOGIN_LOCKOUT_S", "900"))

# /metrics (dashboard/metrics.py): a bearer token Prometheus sends, and/or the addresses or
# networks that may scrape without one (comma-separated; default: loopback only).
GANGSCHED_METRICS_TOKEN = os.environ.get("GANGSCHED_METRICS_TOKEN", "")
GANGSCHED_METRICS_ALLOW = os.environ.get("GANGSCHED_METRICS_ALLOW", "127.0.0.1,::1")
