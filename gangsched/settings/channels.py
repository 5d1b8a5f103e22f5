"""Django Channels: the websocket fan-out to dashboard pages goes through Redis."""

import os

from .base import REDIS_URL

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        # GANGSCHED_CHANNELS_PREFIX keys this installation's groups apart from another one's on
        # the same Redis database (tests: one prefix per run, see tests/settings.py).
        "CONFIG": {"hosts": [REDIS_URL], "prefix": os.environ.get("GANGSCHED_CHANNELS_PREFIX", "asgi")},
    }
}
