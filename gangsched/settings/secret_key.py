"""``SECRET_KEY``: read from the environment, and refused at startup when it would not be secret.

Django signs sessions, password-reset links and CSRF tokens with this key: whoever knows it can
sign in as anyone. So with ``DEBUG`` off (or ``GANGSCHED_HTTPS=1``) a key that is unset, empty,
shorter than 50 characters or made of fewer than 5 different characters (Django's own
``security.W009`` rule), or one that is published (the laptop default and the example in
deploy/kubernetes/secret.example.yaml, or anything starting ``django-insecure-``) stops the
process.

Why here, in the settings, and why ``sys.exit(2)`` rather than ``ImproperlyConfigured``: every
process gangsched runs (``manage.py``, the ASGI/WSGI server, the Celery worker and beat)
imports the settings before it serves or schedules anything, so this is the one place all of
them pass; a system check would run for ``manage.py`` only. ``ImproperlyConfigured`` raised
while the settings are imported ends in a traceback (Django re-raises it from ``setup()``), where
the reason is easy to miss; this prints one line to stderr, naming the variable and how to make a
key, and never the key itself (it would land in logs).

Where no key is set, the key ``make run`` wrote for this checkout (``.run/secret_key``, random,
readable only by its owner, git- and docker-ignored) is used, so ``make run`` and the
``manage.py`` commands of a local install need no configuration; ``GANGSCHED_SECRET_KEY_FILE``
names another file (a mounted secret). With ``DEBUG`` on and nothing set, the laptop default
stays, as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: The laptop default: published in this repository, so never a production key.
DEV_KEY = "django-insecure-gangsched-dev-only-change-me"
PUBLISHED = frozenset(
    {
        DEV_KEY,
        # the value in deploy/kubernetes/secret.example.yaml
        "example-only-replace-me-with-50-random-characters-0000000000",
    }
)
PUBLISHED_PREFIX = "django-insecure-"  # what startproject generates: a key meant for development
MIN_LENGTH = 50  # Django's security.W009
MIN_UNIQUE_CHARACTERS = 5  # Django's security.W009
# Written by scripts/run.py (make run) on a fresh checkout.
LOCAL_KEY_FILE = Path(__file__).resolve().parent.parent.parent / ".run" / "secret_key"
HOW_TO = (
    "set SECRET_KEY to 50+ random characters: python3 -c 'import secrets; print(secrets.token_urlsafe(50))'"
    " (on a laptop, `make run` writes one to .run/secret_key)"
)
EXIT_STATUS = 2  # a usage error, as argparse exits


def problem(key: str | None) -> str | None:
    """Why ``key`` is no secret (one phrase, without the key), or None when it will do."""
    if key is None:
        return "SECRET_KEY is not set"
    if not key.strip():
        return "SECRET_KEY is empty"
    if key in PUBLISHED or key.startswith(PUBLISHED_PREFIX):
        return "SECRET_KEY is a published development or example key"
    if len(key) < MIN_LENGTH:
        return f"SECRET_KEY has {len(key)} characters, fewer than {MIN_LENGTH}"
    if len(set(key)) < MIN_UNIQUE_CHARACTERS:
        return f"SECRET_KEY has {len(set(key))} different characters, fewer than {MIN_UNIQUE_CHARACTERS}"
    return None


def configured(key: str | None, key_file: str | None) -> str | None:
    """The key: ``SECRET_KEY`` when set, else the contents of ``key_file`` (default: make run's
    ``.run/secret_key``) when that file exists, else None."""
    if key is not None:
        return key
    path = Path(key_file or LOCAL_KEY_FILE)
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        refuse(f"GANGSCHED_SECRET_KEY_FILE {str(path)!r} cannot be read ({error.__class__.__name__})")


def secret_key(key: str | None, key_file: str | None, *, required: bool) -> str:
    """The key the settings use. ``required`` (DEBUG off, or HTTPS on): a bad key stops the
    process with one line on stderr and exit status 2."""
    key = configured(key, key_file)
    if not required:
        return DEV_KEY if key is None else key
    reason = problem(key)
    if reason:
        refuse(reason)
    return key


def refuse(reason: str) -> None:
    print(f"gangsched: {reason}; {HOW_TO}", file=sys.stderr, flush=True)
    sys.exit(EXIT_STATUS)
