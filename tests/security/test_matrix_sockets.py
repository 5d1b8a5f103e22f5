"""The authorization matrix's websocket cells (matrix_table.SOCKET_TABLE): every route of the ASGI
router, as each role, through the whole application (origin check, session, routing) on the
real channel layer. Connecting; subscribing to and unsubscribing from alice's gang, where bob
gets the very answer a gang that does not exist gets (asked again once her gang is deleted);
and receiving her gang's events, a forecast run's notice and the notice of its deletion, which
reach everyone who may see it and never bob (a forecast notice reaches bob with his own gang's
key, never hers). An event whose text names another submitter's gang reaches its gang's
submitter with that text redacted, operators and viewers as it is."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import Permission, User

from scheduler_core.events import events_publish, forecasts_announce
from scheduler_core.models import Gang, GangEvent
from scheduler_core.reads.redaction import GENERIC
from scheduler_core.services.operator import gang_retry
from tests.cast import make_gang
from tests.conftest import operators_group
from tests.live.conftest import _close_thread_connections, communicator, logged_in  # noqa: F401
from tests.security import matrix_tally
from tests.security.matrix_checks import BOBS_GANG, NAMES_ALICES, NAMES_BOBS
from tests.security.matrix_table import LOGIN, OK, ROLES, SECRET, SOCKET_TABLE
from tests.security.urlmatrix import socket_routes

pytestmark = pytest.mark.django_db(transaction=True)

KEY = f"ml/{SECRET}"
MADE_AT = "1970-01-01T00:00:00+00:00"
BOBS = "ml/bobs-own"  # a gang of bob's whose forecast changed in the same run
CLOSE_UNAUTHENTICATED = 4401
CELLS = SOCKET_TABLE["ws/gangs/"]


def test_the_socket_table_covers_every_route():
    assert [route.route for route in socket_routes()] == list(SOCKET_TABLE)


def the_cast() -> dict[str, User | None]:
    """The roles with a session each, and alice's gang (timed out: olga may retry it)."""
    users = {"anonymous": None}
    for name in ROLES[1:]:
        users[name] = User.objects.create_user(name, password=f"{name}-pass-123")
    users["vera"].user_permissions.add(Permission.objects.get(codename="view_gang"))
    users["olga"].groups.add(operators_group())
    make_gang("ml", SECRET, submitter="alice")
    Gang.objects.filter(namespace="ml", name=SECRET).update(phase="TimedOut")
    events_publish()  # her gang's "created" goes out before any socket listens
    return {name: user and logged_in(user) for name, user in users.items()}


def retry_alices_gang() -> None:
    gang_retry(gang=Gang.objects.get(namespace="ml", name=SECRET), by="olga")
    assert events_publish() == 1


def announce_alices_forecast() -> None:
    gang = Gang.objects.get(namespace="ml", name=SECRET)
    forecasts_announce(0.0, [(gang.pk, gang.key, gang.submitter), (gang.pk + 1000, BOBS, "bob")])


def delete_alices_gang() -> None:
    Gang.objects.filter(namespace="ml", name=SECRET).delete()


async def ask(comm, message: dict) -> dict:
    await comm.send_json_to(message)
    return await comm.receive_json_from(timeout=3)


async def cells_of(role: str, comm) -> dict[str, bool]:
    """connect, subscribe, unsubscribe, and subscribe again (for the events) on one socket."""
    connected, _ = await comm.connect()
    if CELLS["connect"][role] is LOGIN:  # accepted, then closed: "sign in again", not a drop
        closed = await comm.receive_output(timeout=3)
        return {"connect": connected and closed == {"type": "websocket.close", "code": CLOSE_UNAUTHENTICATED}}
    seen = {"connect": connected and await comm.receive_nothing(timeout=0.2)}
    for action in ("subscribe", "unsubscribe"):
        reply = await ask(comm, {action: KEY})
        seen[action] = reply == ({f"{action}d": KEY} if CELLS[action][role] is OK else hidden_reply(action))
    await ask(comm, {"subscribe": KEY})
    return seen


def hidden_reply(action: str) -> dict:
    return {"error": f"cannot {action}: gang not found", action: KEY}


async def test_socket_cells():
    users = await database_sync_to_async(the_cast)()
    seen: dict[tuple[str, str], bool] = {}
    sockets = {role: communicator(users[role]) for role in ROLES}
    for role in ROLES:
        seen.update({(action, role): ok for action, ok in (await cells_of(role, sockets[role])).items()})

    await database_sync_to_async(retry_alices_gang)()
    for role in ROLES[1:]:  # "receive": her gang's event reaches those who may see it, once
        kinds = []
        while not await sockets[role].receive_nothing(timeout=0.5):
            kinds.append((await sockets[role].receive_json_from())["kind"])
        seen[("receive", role)] = kinds == ([] if role == "bob" else ["retried"])

    # "receive-forecast": a forecast run that changed her gang's forecast is told to every page,
    # with her gang's key only to those who may see it.
    await database_sync_to_async(announce_alices_forecast)()
    for role in ROLES[1:]:
        notices = []
        while not await sockets[role].receive_nothing(timeout=0.5):
            notices.append(await sockets[role].receive_json_from())
        keys = {"alice": [KEY], "bob": [BOBS], "vera": [KEY, BOBS], "olga": [KEY, BOBS]}[role]
        seen[("receive-forecast", role)] = notices == [
            {"type": "forecast.updated", "madeAt": MADE_AT, "gangs": keys}
        ]

    # "receive-deleted": her gang's deletion is told to the pages of those who could see it.
    await database_sync_to_async(delete_alices_gang)()
    for role in ROLES[1:]:
        notices = []
        while not await sockets[role].receive_nothing(timeout=0.5):
            notices.append(await sockets[role].receive_json_from())
        told = [{"type": "gang.deleted", "gang": KEY}]
        seen[("receive-deleted", role)] = notices == ([] if role == "bob" else told)
        await sockets[role].disconnect()

    # bob's answers were those of a gang that does not exist: ask again once it does not.
    comm = communicator(users["bob"])
    assert (await comm.connect())[0]
    for action in ("subscribe", "unsubscribe"):
        assert await ask(comm, {action: KEY}) == hidden_reply(action)
    await comm.disconnect()

    for (action, role), ok in seen.items():
        cell = f"ws/gangs/ {action} default {role}"
        matrix_tally.asked(cell, CELLS[action][role])
        if ok:
            matrix_tally.answered(cell)
    wrong = sorted(cell for cell, ok in seen.items() if not ok)
    assert wrong == [], wrong
    assert {cell for cell in seen} == {
        (action, role) for action, row in CELLS.items() for role, outcome in row.items() if outcome
    }


def explain_across_tenants() -> None:
    """Each gang's explanation names the other's: alice's waits behind bob's, bob's evicts hers."""
    alices = Gang.objects.get(namespace="ml", name=SECRET)
    bobs = Gang.objects.get(namespace="team-b", name=BOBS_GANG)
    GangEvent.objects.create(gang=alices, kind="explained", reason=f"BlockedBehind: {NAMES_BOBS}")
    GangEvent.objects.create(gang=bobs, kind="explained", reason=f"Preempting: {NAMES_ALICES}")
    assert events_publish() == 2


def bobs_gang() -> None:
    make_gang("team-b", BOBS_GANG, submitter="bob")
    events_publish()  # its "created" goes out before any socket listens


async def test_socket_events_name_only_what_the_user_may_see():
    users = await database_sync_to_async(the_cast)()
    await database_sync_to_async(bobs_gang)()
    sockets = {role: communicator(users[role]) for role in ROLES[1:]}
    for comm in sockets.values():
        assert (await comm.connect())[0]
        assert await comm.receive_nothing(timeout=0.2)
    await database_sync_to_async(explain_across_tenants)()
    bobs, as_it_is = f"team-b/{BOBS_GANG}", {KEY: f"BlockedBehind: {NAMES_BOBS}"}
    as_it_is[bobs] = f"Preempting: {NAMES_ALICES}"
    expected = {
        "alice": {KEY: f"BlockedBehind: {GENERIC['BlockedBehind']}"},
        "bob": {bobs: f"Preempting: {GENERIC['Preempting']}"},
        "vera": as_it_is,
        "olga": as_it_is,
    }
    for role, comm in sockets.items():
        told = {}
        while not await comm.receive_nothing(timeout=0.5):
            event = await comm.receive_json_from()
            assert "named" not in event
            told[event["gang"]] = event["reason"]
        await comm.disconnect()
        assert told == expected[role], role
