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
- Answers are cached per connection and per gang id for ``VISIBILITY_TTL_S``. The user's own
  rights (``view_gang``, which makes them see every gang, and the user row itself) are read
  again at most every ``VISIBILITY_TTL_S``, when an event or a message arrives: an operator
  removed from the operators group stops receiving other people's events within that bound, on
  a socket already open (the cached answers go too when that right changes). A user deleted or
  deactivated since is closed with 4401, as their next page would sign them out.
- ``{"subscribe": "ns/name"}`` finds the gang of that key the user may see, now, and joins its
  group ``gang.<id>``; ``{"unsubscribe": "ns/name"}`` leaves it. Events reaching the socket
  through both groups are forwarded once (by event id).
- A gang's deletion sends ``gang.deleted`` (its id, key and submitter) to ``gangs``: the socket
  leaves that gang's group and forgets its answer about it, and forwards
  ``{"type": "gang.deleted", "gang": "ns/name"}`` to the page when its user could see that gang:
  the API's rule (``gang_visible``: every gang with ``view_gang``, else one's own) applied to the
  notice's submitter, since the row is gone. Pages drop the gang's rows and re-read their lists.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from time import monotonic  # a name of this module's: tests move its clock, not everyone's

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth import get_user_model

from dashboard.api.permissions import sees_all_gangs
from dashboard.api.selectors import gang_visible
from scheduler_core.events import ALL_GANGS, gang_group_name
from scheduler_core.reads.redaction import redact_event, shown_by

CLOSE_UNAUTHENTICATED = 4401
VISIBILITY_TTL_S = 30.0
_CACHE_SIZE = 2048
_SEEN_SIZE = 512
# namespace (RFC 1123 label) / name (RFC 1123 subdomain).
GANG_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)/([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)$")
# Not sent to the page: the id and the submitter decide here; the API, and so the page, names
# gangs by key; ``named`` (the owners of what the text names) redacts the text here.
_SERVER_ONLY = ("gang_id", "submitter", "named")


def visible_gang_id(user, key: str) -> int | None:
    """The id of the gang ``namespace/name`` if the user may see it (the API's rule), else None."""
    namespace, _, name = key.partition("/")
    return gang_visible(user=user).filter(namespace=namespace, name=name).values_list("pk", flat=True).first()


def user_may_see_gang_id(user, gang_id: int) -> bool:
    """The API's visibility rule for one gang, by id (a deleted gang: False)."""
    return gang_visible(user=user).filter(pk=gang_id).exists()


def user_may_see_deleted(user, sees_all: bool, submitter) -> bool:
    """``gang_visible``'s rule for a gang already deleted, from its notice: every gang for those
    who see all gangs, else one's own (a gang without a submitter is nobody's own)."""
    if sees_all:
        return True
    return isinstance(submitter, str) and submitter != "" and submitter == user.get_username()


def user_rights(user) -> tuple[object | None, bool]:
    """The user as the database has them now, and whether they see every gang; (None, False)
    once deleted or deactivated. ``sees_all_gangs`` keeps its answer on the user object, so the
    object from connect would give the same answer for the socket's whole life."""
    fresh = get_user_model()._default_manager.filter(pk=user.pk).first()
    if fresh is None or not fresh.is_active:
        return None, False
    return fresh, sees_all_gangs(fresh)


class GangEventsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user = user
        self.sees_all = await database_sync_to_async(sees_all_gangs)(user)
        self.rights_until = monotonic() + VISIBILITY_TTL_S
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

    async def rights_check(self) -> None:
        """Read the user's rights again once ``VISIBILITY_TTL_S`` has passed (two queries per
        socket and period at most; nothing between)."""
        now = monotonic()
        if now < self.rights_until or self.user is None:
            return
        self.rights_until = now + VISIBILITY_TTL_S
        fresh, sees_all = await database_sync_to_async(user_rights)(self.user)
        if fresh is None:  # as their next page would be: signed out
            self.user, self.sees_all = None, False
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        if sees_all != self.sees_all:
            self.visible.clear()  # answers given under the other right
        self.user, self.sees_all = fresh, sees_all

    def _remember(self, gang_id: int, allowed: bool, now: float) -> None:
        self.visible[gang_id] = (now + VISIBILITY_TTL_S, allowed)
        self.visible.move_to_end(gang_id)
        while len(self.visible) > _CACHE_SIZE:
            self.visible.popitem(last=False)

    async def may_see(self, gang_id) -> bool:
        if self.sees_all:
            return True
        if self.user is None or not isinstance(gang_id, int):  # closed; an event without a gang id
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
        await self.rights_check()
        if self.user is None:
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
        await self.rights_check()
        if not await self.may_see(event.get("gang_id")):
            return
        self.seen[event_id] = None
        while len(self.seen) > _SEEN_SIZE:
            self.seen.popitem(last=False)
        sent = {field: value for field, value in event.items() if field not in _SERVER_ONLY}
        if not self.sees_all:  # its text as this user may read it: the publisher named the owners
            shown = shown_by(event.get("named") or {}, self.user.get_username())
            sent["reason"] = redact_event(str(event.get("kind", "")), str(event.get("reason", "")), shown)
        await self.send_json(sent)

    async def forecast_updated(self, notice: dict) -> None:
        """Sent to every socket once a forecast run is stored (scheduler_core/events.py): the page
        is told when, and the keys of the gangs whose forecast changed that its user may see (the
        API's rule applied to each gang's submitter, as for a deletion: no query per gang)."""
        await self.rights_check()
        if self.user is None:
            return
        keys = [
            key
            for gang_id, key, submitter in notice.get("gangs", ())
            if user_may_see_deleted(self.user, self.sees_all, submitter)
        ]
        await self.send_json({"type": "forecast.updated", "madeAt": notice.get("made_at"), "gangs": keys})

    async def gang_deleted(self, notice: dict) -> None:
        """Sent to every socket once a gang's deletion commits (scheduler_core/events.py)."""
        gang_id = notice.get("gang_id")
        self.visible.pop(gang_id, None)
        for key in [key for key, subscribed in self.subscriptions.items() if subscribed == gang_id]:
            await self.leave(key)
        await self.rights_check()
        if self.user is None or not user_may_see_deleted(self.user, self.sees_all, notice.get("submitter")):
            return
        await self.send_json({"type": "gang.deleted", "gang": notice.get("gang")})
