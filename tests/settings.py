"""Settings for the test run: gangsched.settings plus test-only defaults from the environment.

pytest-django imports the settings in its ``pytest_load_initial_conftests`` hook, before pytest
imports any conftest.py, so a conftest (even ``pytest_configure``) is too late to change what the
settings read from ``os.environ``. Setting the defaults here, before importing the real settings,
is the earliest point that works without another plugin. A value already in the environment wins.
"""

import os

# Redis database 15 for tests: Celery messages, results and channel-layer groups of a test run
# never mix with those of a `make run` on database 0.
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")

from gangsched.settings import *  # noqa: E402, F403
