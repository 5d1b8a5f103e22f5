"""Settings, split by topic; every value comes from an environment variable with a local default.

The variables are listed in docs/configuration.md (tests/test_docs.py keeps it complete).
``env.py`` holds the parsers, ``base.py`` Django itself, ``scheduler.py`` gangsched's own
switches, ``celery.py`` and ``channels.py`` the Redis-backed parts,
``security.py`` the secret key (checked by ``secret_key.py``), the HTTPS switches of a production site,
the sign-in limits and the trusted proxies.
"""

from .base import *  # noqa: F403
from .celery import *  # noqa: F403
from .channels import *  # noqa: F403
from .scheduler import *  # noqa: F403
from .security import *  # noqa: F403
