"""Live updates over a websocket: ``ws/gangs/`` forwards ``gang.event`` messages to a page.

The publisher (``scheduler_core/events.py``) sends every committed GangEvent, with its gang's key
and database id, to the group ``gangs`` and to ``gang.<id>``. This consumer joins ``gangs`` and
forwards an event only when the user may see its gang, by the API's own rule (``dashboard.api.
selectors.gang_visible``), so a socket never shows what ``/api/v1/gangs/`` would hide. Pages
treat an event as "this gang changed" and re-read the gang from the API.

Everything is tied to the gang's identity, its id, not to its key: a gang deleted and created
again under the same key (by someone else, say) is another gang, which nothing cached or
subscribed for the old one lets through.

- Anonymous sockets are accepted and closed at once with code 4401, so a page can tell "log in
  again" from a dropped connection (a refused handshake reaches a browser only as 1006).
- Answers are cached per connection and per gang id for ``VISIBILITY_TTL_S``; permission
  changes apply on the next connection.
- ``{"subscribe": "ns/name"}`` finds the gang of that key the user may see, now, and joins its
  group ``gang.<id>``; ``{"unsubscribe": "ns/name"}`` leaves it. Events reaching the socket
  through both groups are forwarded once (by event id).
- A gang's deletion sends ``gang.deleted`` (its id) to ``gangs``: the socket leaves that gang's
  group and forgets its answer about it. Nothing is forwarded to the page for it.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from time import monotonic

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from dashboard.api.permissions import sees_all_gangs
from dashboard.api.selectors import gang_visible
from scheduler_core.events import ALL_GANGS, gang_group_name

CLOSE_UNAUTHENTICATED = 4401
VISIBILITY_TTL_S = 30.0
_CACHE_SIZE = 2048
_SEEN_SIZE = 512
# namespace (RFC 1123 label) / name (RFC 1123 subdomain).
GANG_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)/([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)$")
# Not sent to the page: the id decides here; the API, and so the page, names gangs by key.
_SERVER_ONLY = "gang_id"


def visible_gang_id(user, key: str) -> int | None:
    """The id of the gang ``namespace/name`` if the user may see it (the API's rule), else None."""
    namespace, _, name = key.partition("/")
    return gang_visible(user=user).filter(namespace=namespace, name=name).values_list("pk", flat=True).first()


def user_may_see_gang_id(user, gang_id: int) -> bool:
    """The API's visibility rule for one gang, by id (a deleted gang: False)."""
    return gang_visible(user=user).filter(pk=gang_id).exists()


class GangEventsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user = user
        self.sees_all = await database_sync_to_async(sees_all_gangs)(user)
        self.visible: OrderedDict[int, tuple[float, bool]] = OrderedDict()
        self.seen: OrderedDict[int, None] = OrderedDict()
        self.subscriptions: dict[str, int] = {}  # key -> the id of the gang subscribed to
        await self.channel_layer.group_add(ALL_GANGS, self.channel_name)
        self.joined = True

    async def disconnect(self, code) -> None:
        if getattr(self, "joined", False):
            await self.channel_layer.group_discard(ALL_GANGS, self.channel_name)
            for gang_id in self.subscriptions.values():
                await self.channel_layer.group_discard(gang_group_name(gang_id), self.channel_name)

    def _remember(self, gang_id: int, allowed: bool, now: float) -> None:
        self.visible[gang_id] = (now + VISIBILITY_TTL_S, allowed)
        self.visible.move_to_end(gang_id)
        while len(self.visible) > _CACHE_SIZE:
            self.visible.popitem(last=False)

    async def may_see(self, gang_id) -> bool:
        if self.sees_all:
            return True
        if not isinstance(gang_id, int):  # an event without a gang id: nobody's to show
            return False
        now = monotonic()
        cached = self.visible.get(gang_id)
        if cached is not None and cached[0] > now:
            return cached[1]
        allowed = await database_sync_to_async(user_may_see_gang_id)(self.user, gang_id)
        self._remember(gang_id, allowed, now)
        return allowed

    async def receive_json(self, content, **kwargs) -> None:
        if not isinstance(content, dict):
            return
        for action in ("subscribe", "unsubscribe"):
            key = content.get(action)
            if key is None:
                continue
            if not isinstance(key, str) or not GANG_KEY.match(key):
                await self.send_json({"error": f"cannot {action}: gang not found", action: key})
                return
            if action == "unsubscribe" and key in self.subscriptions:
                # The gang subscribed to, which may no longer hold the key: nothing to check.
                await self.leave(key)
                await self.send_json({"unsubscribed": key})
                return
            gang_id = await database_sync_to_async(visible_gang_id)(self.user, key)
            if self.subscriptions.get(key) not in (None, gang_id):
                await self.leave(key)  # the key's gang was deleted since: that subscription ends
            if gang_id is None:
                # Same answer for "no such gang" and "not yours", as the API's 404.
                await self.send_json({"error": f"cannot {action}: gang not found", action: key})
                return
            self._remember(gang_id, True, monotonic())
            if action == "subscribe" and key not in self.subscriptions:
                await self.channel_layer.group_add(gang_group_name(gang_id), self.channel_name)
                self.subscriptions[key] = gang_id
            await self.send_json({f"{action}d": key})
            return

    async def leave(self, key: str) -> None:
        gang_id = self.subscriptions.pop(key)
        await self.channel_layer.group_discard(gang_group_name(gang_id), self.channel_name)

    async def gang_event(self, event: dict) -> None:
        event_id = event.get("id")
        if event_id in self.seen:
            return
        if not await self.may_see(event.get("gang_id")):
            return
        self.seen[event_id] = None
        while len(self.seen) > _SEEN_SIZE:
            self.seen.popitem(last=False)
        await self.send_json({field: value for field, value in event.items() if field != _SERVER_ONLY})

    async def gang_deleted(self, notice: dict) -> None:
        """Sent to every socket once a gang's deletion commits (scheduler_core/events.py)."""
        gang_id = notice.get("gang_id")
        self.visible.pop(gang_id, None)
        for key in [key for key, subscribed in self.subscriptions.items() if subscribed == gang_id]:
            await self.leave(key)
