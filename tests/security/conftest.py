"""The security tests' clients: the cast of tests/conftest.py (alice and bob submit, olga
operates, vera views) with API tokens, and each test's own cache prefix, so rate-limit counters
never leak between tests (both from tests/api/conftest.py)."""

from tests.api.conftest import _own_cache_prefix, anonymous, as_alice, as_bob, as_olga, as_vera  # noqa: F401
