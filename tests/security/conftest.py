"""The security tests' clients: the cast of tests/conftest.py (alice and bob submit, olga
operates, vera views) with API tokens, and each test's own cache prefix, so rate-limit counters
never leak between tests (both from tests/api/conftest.py)."""

import pytest

from tests.api.conftest import _own_cache_prefix, anonymous, as_alice, as_bob, as_olga, as_vera  # noqa: F401


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """The matrices create four users per test: PBKDF2's deliberate slowness (about 0.3 s a
    password here) would be most of the run. Autouse, so it applies before the users exist."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
