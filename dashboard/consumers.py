"""Live updates over a websocket: ``ws/gangs/`` forwards ``gang.event`` messages to a page.

The publisher (``scheduler_core/events.py``) sends every committed GangEvent to the group
``gangs`` and to ``gang.<namespace>.<name>``. This consumer joins ``gangs`` and forwards an event
only when the user may see its gang, by the API's own rule (``dashboard.api.selectors.
gang_visible``), so a socket never shows what ``/api/v1/gangs/`` would hide. Pages treat an event
as "this gang changed" and re-read the gang from the API.

- Anonymous sockets are accepted and closed at once with code 4401, so a page can tell "log in
  again" from a dropped connection (a refused handshake reaches a browser only as 1006).
- Answers per gang are cached per connection for ``VISIBILITY_TTL_S`` (a gang deleted and
  re-created by someone else is re-checked); permission changes apply on the next connection.
- ``{"subscribe": "ns/name"}`` also joins ``gang.ns.name`` (a gang the user may see);
  ``{"unsubscribe": "ns/name"}`` leaves it. Events reaching the socket through both groups are
  forwarded once (by event id).
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from dashboard.api.permissions import sees_all_gangs
from dashboard.api.selectors import gang_visible
from scheduler_core.events import ALL_GANGS, gang_group_name

CLOSE_UNAUTHENTICATED = 4401
VISIBILITY_TTL_S = 30.0
_CACHE_SIZE = 2048
_SEEN_SIZE = 512
# namespace (RFC 1123 label) / name (RFC 1123 subdomain): also what a group name may contain.
GANG_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)/([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)$")


def user_may_see_gang(user, key: str) -> bool:
    """The API's visibility rule for one gang key ``namespace/name`` (a missing gang: False)."""
    namespace, _, name = key.partition("/")
    return gang_visible(user=user).filter(namespace=namespace, name=name).exists()


class GangEventsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user = user
        self.sees_all = await database_sync_to_async(sees_all_gangs)(user)
        self.visible: OrderedDict[str, tuple[float, bool]] = OrderedDict()
        self.seen: OrderedDict[int, None] = OrderedDict()
        self.subscriptions: set[str] = set()
        await self.channel_layer.group_add(ALL_GANGS, self.channel_name)
        self.joined = True

    async def disconnect(self, code) -> None:
        if getattr(self, "joined", False):
            await self.channel_layer.group_discard(ALL_GANGS, self.channel_name)
            for group in self.subscriptions:
                await self.channel_layer.group_discard(group, self.channel_name)

    async def may_see(self, key: str) -> bool:
        now = time.monotonic()
        cached = self.visible.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        allowed = await database_sync_to_async(user_may_see_gang)(self.user, key)
        self.visible[key] = (now + VISIBILITY_TTL_S, allowed)
        self.visible.move_to_end(key)
        while len(self.visible) > _CACHE_SIZE:
            self.visible.popitem(last=False)
        return allowed

    async def receive_json(self, content, **kwargs) -> None:
        if not isinstance(content, dict):
            return
        for action in ("subscribe", "unsubscribe"):
            key = content.get(action)
            if key is None:
                continue
            if not isinstance(key, str) or not GANG_KEY.match(key) or not await self.may_see(key):
                # Same answer for "no such gang" and "not yours", as the API's 404.
                await self.send_json({"error": f"cannot {action}: gang not found", action: key})
                return
            group = gang_group_name(*key.split("/", 1))
            if action == "subscribe":
                await self.channel_layer.group_add(group, self.channel_name)
                self.subscriptions.add(group)
            else:
                await self.channel_layer.group_discard(group, self.channel_name)
                self.subscriptions.discard(group)
            await self.send_json({f"{action}d": key})
            return

    async def gang_event(self, event: dict) -> None:
        event_id = event.get("id")
        if event_id in self.seen:
            return
        if not self.sees_all and not await self.may_see(event["gang"]):
            return
        self.seen[event_id] = None
        while len(self.seen) > _SEEN_SIZE:
            self.seen.popitem(last=False)
        await self.send_json(event)
