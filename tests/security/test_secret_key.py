"""With DEBUG off, startup refuses a SECRET_KEY that is not secret: unset, empty, short, of too
few different characters, or published (the laptop default, the deploy example, Django's
``django-insecure-`` keys). Each case is a real process (``manage.py check`` and the ASGI app's
import, as uvicorn does it), which must exit 2 with one line on stderr naming the variable and
never echoing the key."""

import secrets
import subprocess
import sys

import pytest

from . import processes

GOOD_KEY = secrets.token_urlsafe(50)
#: No make-run key file: the "unset" case must not find this checkout's .run/secret_key.
NO_KEY_FILE = {"GANGSCHED_SECRET_KEY_FILE": "/nonexistent/gangsched-secret-key"}

BAD_KEYS = {
    "unset": (None, "SECRET_KEY is not set"),
    "empty": ("", "SECRET_KEY is empty"),
    "blank": ("   ", "SECRET_KEY is empty"),
    "short": ("x7Gq2" * 9, "SECRET_KEY has 45 characters, fewer than 50"),
    "repetitive": ("abab" * 20, "SECRET_KEY has 2 different characters, fewer than 5"),
    "laptop default": (
        "django-insecure-gangsched-dev-only-change-me",
        "SECRET_KEY is a published development or example key",
    ),
    "deploy example": (
        "example-only-replace-me-with-50-random-characters-0000000000",
        "SECRET_KEY is a published development or example key",
    ),
    "django-insecure": (
        "django-insecure-" + GOOD_KEY,
        "SECRET_KEY is a published development or example key",
    ),
}


SHOW_KEY = "from django.conf import settings; print('@key', settings.SECRET_KEY)"


def shown_key(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr
    return next(line.split(" ", 1)[1] for line in result.stdout.splitlines() if line.startswith("@key "))


def environment(key: str | None, **extra: str) -> dict[str, str]:
    env = {**NO_KEY_FILE, **extra}
    if key is not None:
        env["SECRET_KEY"] = key
    return env


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    return processes.manage(
        *args, drop=("DEBUG", "SECRET_KEY", "GANGSCHED_HTTPS", "GANGSCHED_SECRET_KEY_FILE"), **env
    )


def import_asgi(**env: str) -> subprocess.CompletedProcess:
    """What uvicorn does first with ``gangsched.asgi:application``."""
    return processes.run(
        [sys.executable, "-c", "import gangsched.asgi"],
        drop=("DEBUG", "SECRET_KEY", "GANGSCHED_HTTPS", "GANGSCHED_SECRET_KEY_FILE"),
        **env,
    )


def assert_refused(result: subprocess.CompletedProcess, reason: str, key: str | None) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr  # one line, no traceback
    assert lines[0].startswith(f"gangsched: {reason}; set SECRET_KEY to 50+ random characters")
    assert "Traceback" not in result.stderr and result.stdout == ""
    if key and key.strip():
        assert key not in result.stderr  # the key itself never reaches a log


@pytest.mark.parametrize("case", list(BAD_KEYS))
def test_manage_py_refuses_a_bad_key_with_debug_off(case):
    key, reason = BAD_KEYS[case]
    assert_refused(manage("check", **environment(key)), reason, key)


@pytest.mark.parametrize("case", ["unset", "short", "laptop default"])
def test_the_asgi_app_refuses_a_bad_key_with_debug_off(case):
    key, reason = BAD_KEYS[case]
    assert_refused(import_asgi(**environment(key)), reason, key)


def test_https_on_refuses_the_default_key_even_with_debug_on():
    key, reason = BAD_KEYS["laptop default"]
    assert_refused(manage("check", **environment(key, DEBUG="1", GANGSCHED_HTTPS="1")), reason, key)


def test_a_good_key_starts():
    result = manage("check", **environment(GOOD_KEY))
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout
    assert import_asgi(**environment(GOOD_KEY)).returncode == 0


def test_debug_on_keeps_the_laptop_default():
    result = manage(
        "shell",
        "-c",
        SHOW_KEY,
        DEBUG="1",
        **NO_KEY_FILE,
    )
    assert shown_key(result) == "django-insecure-gangsched-dev-only-change-me"


def test_without_secret_key_the_key_file_is_read_and_checked(tmp_path):
    """``make run`` writes .run/secret_key; GANGSCHED_SECRET_KEY_FILE names another file."""
    key_file = tmp_path / "secret_key"
    key_file.write_text(GOOD_KEY + "\n")
    shown = manage(
        "shell",
        "-c",
        SHOW_KEY,
        GANGSCHED_SECRET_KEY_FILE=str(key_file),
    )
    assert shown_key(shown) == GOOD_KEY

    key_file.write_text("too-short\n")
    refused = manage("check", GANGSCHED_SECRET_KEY_FILE=str(key_file))
    assert_refused(refused, "SECRET_KEY has 9 characters, fewer than 50", "too-short")
    # SECRET_KEY, when set, wins over the file
    assert manage("check", SECRET_KEY=GOOD_KEY, GANGSCHED_SECRET_KEY_FILE=str(key_file)).returncode == 0
