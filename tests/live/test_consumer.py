"""``ws/gangs/``: who may connect, and who receives which gang's events."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import User

from dashboard import consumers
from scheduler_core.events import events_publish
from scheduler_core.models import Gang, GangEvent
from scheduler_core.services.delete import gang_delete

from .conftest import communicator

pytestmark = pytest.mark.django_db(transaction=True)


def event_for(key: str, submitter: str, kind: str = "bound") -> GangEvent:
    namespace, name = key.split("/")
    gang, _ = Gang.objects.get_or_create(
        namespace=namespace, name=name, defaults={"min_member": 1, "submitter": submitter}
    )
    return GangEvent.objects.create(gang=gang, kind=kind, reason=f"{kind} for the test")


async def publish(*events: tuple[str, str]) -> None:
    for key, submitter in events:
        await database_sync_to_async(event_for)(key, submitter)
    await database_sync_to_async(events_publish)()


async def received(comm, timeout: float = 30.0) -> list[dict]:
    """Everything the socket got until it stayed quiet for a short while (``timeout``, for the
    first message, is only a safety net: it ends the wait as soon as the message comes)."""
    # receive_json_from cancels the application when it times out: ask receive_nothing first.
    messages = [await comm.receive_json_from(timeout=timeout)]
    while not await comm.receive_nothing(timeout=0.5):
        messages.append(await comm.receive_json_from())
    return messages


async def test_an_anonymous_socket_is_closed_with_4401():
    comm = communicator(None)
    connected, _ = await comm.connect()
    assert connected  # accepted only to say why it is closed: a browser sees the code
    output = await comm.receive_output(timeout=3)
    assert output == {"type": "websocket.close", "code": 4401}
    await comm.disconnect(code=4401)  # the client's side of the close: the consumer ends cleanly


async def test_a_foreign_origin_is_refused(olga):
    for user in (olga, None):  # refused before authentication: a signed-in user changes nothing
        comm = communicator(user, origin="http://evil.example")
        connected, _ = await comm.connect()
        assert not connected
        await comm.wait()  # let the denied application finish, or the loop's teardown waits on it


async def test_an_operator_receives_a_published_event(olga):
    comm = communicator(olga)
    connected, _ = await comm.connect()
    assert connected
    await publish(("ml/bert", "alice"))
    [message] = await received(comm)
    assert message["type"] == "gang.event"
    assert message["gang"] == "ml/bert"
    assert message["kind"] == "bound"
    assert {"id", "reason", "created", "phase", "satisfied"} <= set(message)
    assert "gang_id" not in message  # the server's: pages name gangs by key, as the API does
    await comm.disconnect()


async def test_a_submitter_receives_events_of_own_gangs_only(alice, bob):
    comm = communicator(alice)
    connected, _ = await comm.connect()
    assert connected
    await publish(("ml/bobs", "bob"), ("ml/alices", "alice"), ("ml/bobs-too", "bob"))
    messages = await received(comm)
    assert [m["gang"] for m in messages] == ["ml/alices"]
    await comm.disconnect()


async def test_subscribing_to_a_gang_forwards_each_event_once(alice):
    await database_sync_to_async(event_for)("ml/alices", "alice", kind="created")
    await database_sync_to_async(events_publish)()
    comm = communicator(alice)
    await comm.connect()
    await comm.send_json_to({"subscribe": "ml/alices"})
    assert await comm.receive_json_from(timeout=3) == {"subscribed": "ml/alices"}
    await publish(("ml/alices", "alice"))
    messages = await received(comm)
    assert [m["gang"] for m in messages] == ["ml/alices"]  # through both groups, forwarded once
    await comm.disconnect()


async def test_subscribing_to_someone_elses_gang_is_answered_as_a_missing_one(alice, bob):
    await database_sync_to_async(event_for)("ml/bobs", "bob", kind="created")
    comm = communicator(alice)
    await comm.connect()
    for key in ("ml/bobs", "ml/nothing", "../x", 42):
        await comm.send_json_to({"subscribe": key})
        answer = await comm.receive_json_from(timeout=3)
        assert answer["error"] == "cannot subscribe: gang not found"
    await comm.disconnect()


def delete_by_service(key: str) -> None:
    """As ``manage.py delete``, the manifests and the namespace's deletion do."""
    namespace, name = key.split("/")
    gang_delete(namespace=namespace, name=name, by="test")


def delete_by_queryset(key: str) -> None:
    """As the admin's "delete selected" does."""
    namespace, name = key.split("/")
    Gang.objects.filter(namespace=namespace, name=name).delete()


@pytest.mark.parametrize("delete", [delete_by_service, delete_by_queryset])
async def test_a_deleted_gang_ends_its_subscriptions(alice, delete):
    await database_sync_to_async(event_for)("ml/alices", "alice", kind="created")
    comm = communicator(alice)
    await comm.connect()
    await comm.send_json_to({"subscribe": "ml/alices"})
    assert await comm.receive_json_from(timeout=3) == {"subscribed": "ml/alices"}
    await database_sync_to_async(delete)("ml/alices")
    # The deletion's notice went to the socket before this event: once the event is here, the
    # notice has been handled (and told to the page: the gang was hers).
    await publish(("ml/other", "alice"))
    assert [(m["type"], m["gang"]) for m in await received(comm)] == [
        ("gang.deleted", "ml/alices"),
        ("gang.event", "ml/other"),
    ]
    await comm.send_json_to({"unsubscribe": "ml/alices"})  # no subscription left to end
    assert await comm.receive_json_from(timeout=3) == {
        "error": "cannot unsubscribe: gang not found",
        "unsubscribe": "ml/alices",
    }
    await comm.disconnect()


def rights_expire(monkeypatch) -> None:
    """The consumer's clock, moved past the time its answers about the user are kept."""
    monkeypatch.setattr(consumers, "monotonic", lambda: time.monotonic() + consumers.VISIBILITY_TTL_S)


def olga_leaves_the_operators() -> None:
    User.objects.get(username="olga").groups.clear()


async def test_an_operator_removed_from_the_operators_stops_receiving_others_events(olga, monkeypatch):
    comm = communicator(olga)
    await comm.connect()
    await publish(("ml/alices", "alice"))
    assert [m["gang"] for m in await received(comm)] == ["ml/alices"]
    await database_sync_to_async(olga_leaves_the_operators)()
    rights_expire(monkeypatch)
    await publish(("ml/alices", "alice"), ("ml/olgas", "olga"))
    assert [m["gang"] for m in await received(comm)] == ["ml/olgas"]  # on the socket already open
    await comm.disconnect()


async def test_a_user_deactivated_since_connecting_is_closed_with_4401(alice, monkeypatch):
    comm = communicator(alice)
    await comm.connect()
    await database_sync_to_async(User.objects.filter(username="alice").update)(is_active=False)
    rights_expire(monkeypatch)
    await publish(("ml/alices", "alice"))
    assert await comm.receive_output(timeout=3) == {"type": "websocket.close", "code": 4401}
    await comm.disconnect(code=4401)


async def test_an_idle_socket_stays_open_past_the_layer_s_blocking_wait(olga):
    """redis-py 8's default 5 s read timeout used to kill the consumer of any socket idle for the
    channel layer's 5 s BZPOPMIN (gangsched/settings/channels.py)."""
    comm = communicator(olga)
    connected, _ = await comm.connect()
    assert connected
    assert await comm.receive_nothing(timeout=7)  # and the application is still running:
    await publish(("ml/later", "alice"))
    [message] = await received(comm)
    assert message["gang"] == "ml/later"
    await comm.disconnect()


def gang_about_to_time_out() -> None:
    """A NonStrict gang holding reservations whose wait ran out a minute ago."""
    from datetime import timedelta

    from django.utils import timezone

    from scheduler_core.models import Member
    from tests.loop.factories import make_gang, make_nodes

    make_nodes(2, cpu=2)
    Member.objects.create(namespace="x", name="busy", requests={"cpu": 2000}, node="n1", phase="Running")
    gang = make_gang("ml/slow", 3, cpu=1, mode="NonStrict", wait_seconds=30, submitter="alice")
    from scheduler_core.services.cycle import cycle_run

    cycle_run(holder="test")
    assert Member.objects.filter(gang=gang, reserved_node__isnull=False).count() == 2
    events_publish()
    Gang.objects.filter(pk=gang.pk).update(wait_started=timezone.now() - timedelta(seconds=60))


async def test_the_timeout_sweep_publishes_once_it_has_committed(olga):
    from scheduler_core import tasks

    await database_sync_to_async(gang_about_to_time_out)()
    comm = communicator(olga)
    await comm.connect()
    assert await database_sync_to_async(tasks.sweep_timeouts)() == 1  # no publisher run after it
    seen = []
    while ("ml/slow", "timed_out", "TimedOut") not in seen:  # the sweep's messages, in order
        message = await comm.receive_json_from(timeout=30)
        seen.append((message["gang"], message["kind"], message["phase"]))
    await comm.disconnect()


async def test_a_deletion_reaches_the_pages_of_those_who_could_see_the_gang(alice, bob, olga):
    """alice's gang deleted: her page and the operator's are told, with the key only; bob's
    socket gets nothing, not even the key (the row is gone: the notice's submitter decides)."""
    await database_sync_to_async(event_for)("ml/alices", "alice", kind="created")
    sockets = {user.username: communicator(user) for user in (alice, bob, olga)}
    for comm in sockets.values():
        assert (await comm.connect())[0]
    await database_sync_to_async(delete_by_queryset)("ml/alices")
    await publish(("ml/olgas", "olga"))  # after the notice: once it is here, the notice was handled
    assert await received(sockets["alice"]) == [{"type": "gang.deleted", "gang": "ml/alices"}]
    assert [(m["type"], m["gang"]) for m in await received(sockets["olga"])] == [
        ("gang.deleted", "ml/alices"),
        ("gang.event", "ml/olgas"),
    ]
    assert await sockets["bob"].receive_nothing(timeout=1.0)
    for comm in sockets.values():
        await comm.disconnect()


def test_a_deleted_gang_is_visible_by_the_api_s_rule():
    class User:
        def __init__(self, name):
            self.name = name

        def get_username(self):
            return self.name

    assert consumers.user_may_see_deleted(User("alice"), False, "alice")
    assert not consumers.user_may_see_deleted(User("bob"), False, "alice")
    assert not consumers.user_may_see_deleted(User(""), False, "")  # nobody's own
    assert not consumers.user_may_see_deleted(User("bob"), False, None)
    assert consumers.user_may_see_deleted(User("olga"), True, "alice")
