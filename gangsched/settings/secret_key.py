"""``SECRET_KEY``: read from the environment, and refused at startup when it would not be secret.

Django signs sessions, password-reset links and CSRF tokens with this key: whoever knows it can
sign in as anyone. So with ``DEBUG`` off (or ``GANGSCHED_HTTPS=1``) a key that is unset, empty,
shorter than 50 characters or made of fewer than 5 different characters (Django's own
``security.W009`` rule), one made from a published key, or one too predictable to be random
stops the process.

*Published* is compared after normalising (``normalised``: case folded, only letters and
digits kept), and anywhere in the key: the laptop default and the example in
deploy/kubernetes/secret.example.yaml with a space, a dash or a capital changed, with a suffix or
prefix, or repeated, are still those keys; so is anything with ``django-insecure`` (what
startproject generates: a key meant for development) or a placeholder phrase ("change me",
"your secret key here", "replace me") in it. A random key holds one of them (eight letters and
digits or more in a row) by chance less than once in 10^10 keys.

*Predictable* is an estimate of the key's randomness (``estimated_bits``) under 128 bits: each
character it does not repeat from earlier in the key is worth log2 of the number of different
characters it uses, and each repeat of 4 or more characters earlier in the key is worth one
character. "abcde" * 10 (116 bits by length alone) is 14; "changeme" or "your-secret-key-here"
repeated to 50+ characters, 25 and 73. A generated key is far above the line: 50 characters of
Django's ``get_random_secret_key()`` about 250 bits, ``secrets.token_urlsafe(50)`` and
``openssl rand -base64 48`` over 300, ``openssl rand -hex 32`` about 256
(tests/security/test_secret_key.py draws thousands of each).

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

import math
import sys
import unicodedata
from pathlib import Path

#: The laptop default: published in this repository, so never a production key.
DEV_KEY = "django-insecure-gangsched-dev-only-change-me"
PUBLISHED = (
    DEV_KEY,
    "example-only-replace-me-with-50-random-characters-0000000000",  # deploy/kubernetes/secret.example.yaml
    "django-insecure",  # what startproject generates: a key meant for development
    "change-me",
    "your-secret-key-here",
    "replace-me",
)
MIN_LENGTH = 50  # Django's security.W009
MIN_UNIQUE_CHARACTERS = 5  # Django's security.W009
MIN_BITS = 128  # estimated randomness (module docstring)
MIN_REPEAT = 4  # a repeat of this many characters or more is worth one character
# Written by scripts/run.py (make run) on a fresh checkout.
LOCAL_KEY_FILE = Path(__file__).resolve().parent.parent.parent / ".run" / "secret_key"
HOW_TO = (
    "set SECRET_KEY to 50+ random characters from a generator, not a phrase or a pattern:"
    " python3 -c 'import secrets; print(secrets.token_urlsafe(50))'"
    " (on a laptop, `make run` writes one to .run/secret_key)"
)
EXIT_STATUS = 2  # a usage error, as argparse exits


def normalised(text: str) -> str:
    """``text`` as compared with the published keys: Unicode-normalised (NFKC), case folded, and
    only its letters and digits (no spaces, dashes, underscores or other separators)."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


_PUBLISHED = tuple(normalised(key) for key in PUBLISHED)


def published(key: str) -> bool:
    """Whether ``key`` holds a published key or phrase anywhere (module docstring)."""
    text = normalised(key)
    return any(known in text for known in _PUBLISHED)


def estimated_bits(key: str) -> float:
    """The randomness of ``key`` as the module docstring counts it: log2(different characters)
    for each character that is not part of a repeat (of ``MIN_REPEAT`` or more characters
    already seen, overlapping allowed: "abcabcabc" is "abc" and one repeat), plus one such
    character per repeat."""
    if len(set(key)) < 2:
        return 0.0
    symbols, i = 0, 0
    while i < len(key):
        length = MIN_REPEAT
        # The longest repeat starting here: key[i:i+length] found starting before i.
        while i + length <= len(key) and key.find(key[i : i + length], 0, i + length - 1) != -1:
            length += 1
        i += length - 1 if length > MIN_REPEAT else 1
        symbols += 1
    return symbols * math.log2(len(set(key)))


def problem(key: str | None) -> str | None:
    """Why ``key`` is no secret (one phrase, without the key), or None when it will do."""
    if key is None:
        return "SECRET_KEY is not set"
    if not key.strip():
        return "SECRET_KEY is empty"
    if published(key):
        return "SECRET_KEY is or contains a published development, example or placeholder key"
    if len(key) < MIN_LENGTH:
        return f"SECRET_KEY has {len(key)} characters, fewer than {MIN_LENGTH}"
    if len(set(key)) < MIN_UNIQUE_CHARACTERS:
        return f"SECRET_KEY has {len(set(key))} different characters, fewer than {MIN_UNIQUE_CHARACTERS}"
    bits = estimated_bits(key)
    if bits < MIN_BITS:
        return (
            f"SECRET_KEY is too predictable to be random (about {bits:.0f} bits, fewer than {MIN_BITS}:"
            " a short part repeated, or too few different characters)"
        )
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
