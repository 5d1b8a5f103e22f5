"""Settings for the test run: gangsched.settings plus test-only defaults from the environment.

pytest-django imports the settings in its ``pytest_load_initial_conftests`` hook, before pytest
imports any conftest.py, so a conftest (even ``pytest_configure``) is too late to change what the
settings read from ``os.environ``. Setting the defaults here, before importing the real settings,
is the earliest point that works without another plugin. A value already in the environment wins.
"""

import os
import secrets

# Redis database 15 for tests: Celery messages, results and channel-layer groups of a test run
# never mix with those of a `make run` on database 0.
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")
# A queue of this run's own: Celery workers started by tests (they inherit the environment)
# never take tasks sent by another test run on the same Redis database, nor the other way round.
os.environ.setdefault("GANGSCHED_CELERY_QUEUE", f"test-{os.getpid()}")
# Channel-layer groups of this run's own (``gangs`` is one name for every run): processes the
# tests start (daphne, workers) inherit it.
os.environ.setdefault("GANGSCHED_CHANNELS_PREFIX", f"test-{os.getpid()}")
# A random key for this run (DEBUG is off, so the settings refuse none or a published one);
# in the environment, so the servers and workers the tests start sign the same sessions.
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))

from gangsched.settings import *  # noqa: E402, F403

# GANGSCHED_TEST_DB gives a test run its own database, so two runs on one machine (two
# engineers in one tree, or the CI run beside a developer's) never drop each other's.
DATABASES["default"].setdefault("TEST", {})["NAME"] = os.environ.get(  # noqa: F405
    "GANGSCHED_TEST_DB",
    "test_" + DATABASES["default"]["NAME"],  # noqa: F405
)
