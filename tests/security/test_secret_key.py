"""With DEBUG off, startup refuses a SECRET_KEY that is not secret: unset, empty, short, of too
few different characters, made from a published key (the laptop default, the deploy example,
Django's ``django-insecure-`` keys, placeholder phrases; with separators, case, a prefix or a
suffix changed, or repeated), or too predictable to be random. Each case is a real process
(``manage.py check`` and the ASGI app's import, as uvicorn does it), which must exit 2 with one
line on stderr naming the variable and never echoing the key. A key from a generator always
passes: thousands of draws of each kind the docs name."""

import base64
import secrets
import shutil
import subprocess
import sys

import pytest
from django.core.management.utils import get_random_secret_key

from gangsched.settings.secret_key import MIN_BITS, estimated_bits, problem

from . import processes

PUBLISHED = "SECRET_KEY is or contains a published development, example or placeholder key"
PREDICTABLE = (
    "SECRET_KEY is too predictable to be random (about {bits} bits, fewer than 128:"
    " a short part repeated, or too few different characters)"
)
EXAMPLE_KEY = "example-only-replace-me-with-50-random-characters-0000000000"  # secret.example.yaml

GOOD_KEY = secrets.token_urlsafe(50)
#: No make-run key file: the "unset" case must not find this checkout's .run/secret_key.
NO_KEY_FILE = {"GANGSCHED_SECRET_KEY_FILE": "/nonexistent/gangsched-secret-key"}

BAD_KEYS = {
    "unset": (None, "SECRET_KEY is not set"),
    "empty": ("", "SECRET_KEY is empty"),
    "blank": ("   ", "SECRET_KEY is empty"),
    "short": ("x7Gq2" * 9, "SECRET_KEY has 45 characters, fewer than 50"),
    "repetitive": ("abab" * 20, "SECRET_KEY has 2 different characters, fewer than 5"),
    "laptop default": ("django-insecure-gangsched-dev-only-change-me", PUBLISHED),
    "deploy example": (EXAMPLE_KEY, PUBLISHED),
    "django-insecure": ("django-insecure-" + GOOD_KEY, PUBLISHED),
    # Nearly published or weak (more of each in-process below).
    "deploy example with a space": (EXAMPLE_KEY + " ", PUBLISHED),
    "changeme repeated": ("changeme" * 7, PUBLISHED),
    "abcde repeated": ("abcde" * 10, PREDICTABLE.format(bits=14)),
}
LAPTOP_KEY = "django-insecure-gangsched-dev-only-change-me"
#: The published keys with a space, other separators or capitals, a prefix or a suffix, or
#: repeated; and keys of 50+ characters and 5+ different ones (Django's rule) that are a short
#: part repeated.
NEARLY_PUBLISHED_OR_WEAK = {
    "deploy example with a space inside": (EXAMPLE_KEY.replace("-with-", "-with -"), PUBLISHED),
    "deploy example in capitals, underscores": (EXAMPLE_KEY.upper().replace("-", "_"), PUBLISHED),
    "deploy example with a suffix": (EXAMPLE_KEY + "-" + GOOD_KEY[:8], PUBLISHED),
    "deploy example, tab-separated": (" \t".join(EXAMPLE_KEY.split("-")), PUBLISHED),
    "laptop default with a prefix": (GOOD_KEY[:10] + LAPTOP_KEY, PUBLISHED),
    "laptop default repeated": (LAPTOP_KEY * 2, PUBLISHED),
    "DJANGO INSECURE": ("DJANGO_INSECURE_" + GOOD_KEY, PUBLISHED),
    "changeme repeated to 50": (("change me " * 6)[:50], PUBLISHED),
    "placeholder repeated": ("your-secret-key-here" * 3, PUBLISHED),
    "digits repeated": ("0123456789" * 5, PREDICTABLE.format(bits=37)),
    "a word repeated": ("Kubernetes!" * 5, PREDICTABLE.format(bits=38)),
    "the alphabet twice": ("abcdefghijklmnopqrstuvwxyz" * 2, PREDICTABLE.format(bits=127)),
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
    assert lines[0].startswith(
        f"gangsched: {reason}; set SECRET_KEY to 50+ random characters from a generator"
    )
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


# ---------------------------------------------------------------- the rule, in-process


@pytest.mark.parametrize("case", list(NEARLY_PUBLISHED_OR_WEAK))
def test_a_nearly_published_or_weak_key_is_refused(case):
    key, reason = NEARLY_PUBLISHED_OR_WEAK[case]
    assert len(key) >= 50 and problem(key) == reason


#: The generators the docs name, each drawn many times: the rule must never refuse their keys.
GENERATORS = {
    "secrets.token_urlsafe(50)": lambda: secrets.token_urlsafe(50),
    "get_random_secret_key()": get_random_secret_key,
    "openssl rand -base64 48": lambda: base64.b64encode(secrets.token_bytes(48)).decode(),
    "openssl rand -hex 32": lambda: secrets.token_hex(32),
}
DRAWS = 3000


@pytest.mark.parametrize("generator", list(GENERATORS))
def test_a_generated_key_always_passes(generator):
    draw = GENERATORS[generator]
    keys = [draw() for _ in range(DRAWS)]
    refused = [problem(key) for key in keys if problem(key)]
    assert not refused, refused[:3]
    # Not just above the line: the least random of the draws is far from it.
    assert min(estimated_bits(key) for key in keys) > 1.5 * MIN_BITS


@pytest.mark.skipif(not shutil.which("openssl"), reason="no openssl")
@pytest.mark.parametrize("args", [("-base64", "48"), ("-hex", "32")])
def test_openssls_own_keys_pass_and_look_like_those_drawn_above(args):
    for _ in range(20):
        key = subprocess.run(["openssl", "rand", *args], capture_output=True, text=True, check=True).stdout
        assert len(key.strip()) == 64 and problem(key.strip()) is None


def test_repeats_are_counted_once_and_characters_by_their_variety():
    assert estimated_bits("ab" * 30) == 3.0  # "a" and "b" (1 bit each), then one repeat
    assert estimated_bits("abab") == 4.0  # the end: too short to be a repeat
    assert estimated_bits("a" * 60) == 0.0
    assert estimated_bits("abcdefgh") == 24.0  # 8 characters of 8 kinds: 3 bits each
    assert estimated_bits("abcdefgh" * 7) == 27.0  # and one repeat
    # A repeat shorter than 4 characters is no repeat.
    assert estimated_bits("abcXabc") == 7 * 2.0  # 4 kinds: 2 bits each
