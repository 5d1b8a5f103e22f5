"""Django Channels: the websocket fan-out to dashboard pages goes through Redis."""

import os

from .base import REDIS_URL

# redis-py 8 reads with a 5 s socket timeout by default, and channels-redis waits for messages
# with a blocking BZPOPMIN of 5 s (RedisChannelLayer.brpop_timeout): an idle socket's consumer
# died with "Timeout reading from ..." every 5 s (django/channels_redis#422). A read timeout
# well above the blocking wait keeps idle sockets open and still notices a dead Redis.
CHANNEL_LAYER_SOCKET_TIMEOUT_S = 30

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            "hosts": [{"address": REDIS_URL, "socket_timeout": CHANNEL_LAYER_SOCKET_TIMEOUT_S}],
            # GANGSCHED_CHANNELS_PREFIX keys this installation's groups apart from another one's
            # on the same Redis database (tests: one prefix per run, see tests/settings.py).
            "prefix": os.environ.get("GANGSCHED_CHANNELS_PREFIX", "asgi"),
        },
    }
}
