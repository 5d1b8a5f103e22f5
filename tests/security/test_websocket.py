"""``ws/gangs/`` refuses sockets without an allowed Origin (missing, ``null``, foreign, another
port's) before looking at the session, closes anonymous ones with 4401, and a submitter's socket
never carries an event of a gang they cannot see, whichever door changed it (the API's actions
here; tests/live covers events written directly), nor one of a gang created under the key of a
gang they saw and subscribed to."""

import pytest
from channels.db import database_sync_to_async

from scheduler_core.events import events_publish
from scheduler_core.models import Gang
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.delete import gang_delete
from scheduler_core.services.operator import gang_kill
from tests.api.conftest import client_for
from tests.cast import make_gang
from tests.live.conftest import _close_thread_connections, alice, bob, communicator, olga  # noqa: F401
from tests.loop.factories import make_nodes

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("origin", [None, "null", "http://evil.example", "http://127.0.0.1.evil.example"])
async def test_a_socket_without_an_allowed_origin_is_refused(olga, origin):  # noqa: F811
    for user in (olga, None):
        comm = communicator(user, origin=origin)
        connected, _ = await comm.connect()
        assert not connected
        await comm.wait()


async def test_an_allowed_origin_and_a_session_connect(olga):  # noqa: F811
    comm = communicator(olga)
    connected, _ = await comm.connect()
    assert connected
    assert await comm.receive_nothing(timeout=0.3)  # not closed with 4401
    await comm.disconnect()


def bobs_gang_through_its_life(bob_user, olga_user) -> None:  # noqa: F811
    """bob submits, it times out, olga retries it and kills it: every event is bob's gang's."""
    gang = make_gang("ml", "bobs", submitter="bob")
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")
    assert client_for(olga_user).post("/api/v1/gangs/ml/bobs/retry/").status_code == 200
    assert client_for(olga_user).post("/api/v1/gangs/ml/bobs/kill/").status_code == 200
    assert events_publish() >= 3  # created, retried, killed


async def test_a_submitter_never_receives_another_users_gang_events(alice, bob, olga):  # noqa: F811
    alices = communicator(alice)
    operators = communicator(olga)
    assert (await alices.connect())[0] and (await operators.connect())[0]

    await database_sync_to_async(bobs_gang_through_its_life)(bob, olga)

    await received_by_one_only(operators, alices, ["created", "retried", "killed"], "ml/bobs")


async def received_by_one_only(receiver, other, kinds: list[str], key: str) -> None:
    """``receiver`` gets the events of ``kinds`` (so they were published), ``other`` none of
    them, and ``other`` is told the gang ``key`` does not exist; then both sockets close."""
    assert [(await receiver.receive_json_from(timeout=3))["kind"] for _ in kinds] == kinds
    assert await other.receive_nothing(timeout=1.0)
    await other.send_json_to({"subscribe": key})
    assert (await other.receive_json_from(timeout=3))["error"] == "cannot subscribe: gang not found"
    await receiver.disconnect()
    await other.disconnect()


def bobs_gang_killed_and_deleted() -> None:
    gang_kill(gang=Gang.objects.get(namespace="team-s", name="reuse-x"), by="bob")
    assert events_publish() == 1  # killed
    gang_delete(namespace="team-s", name="reuse-x", by="bob")


def alices_gang_under_the_same_key() -> None:
    make_nodes(1)
    make_gang("team-s", "reuse-x", submitter="alice")
    cycle_run(holder="test")
    assert events_publish() == 3  # created, satisfied, bound


async def test_a_gang_created_again_under_a_key_is_not_the_one_subscribed_to(alice, bob):  # noqa: F811
    """bob subscribes to his gang, which is killed and deleted; alice creates one under the same
    key. Her gang's events reach her socket and never bob's, subscribed or not."""
    await database_sync_to_async(make_gang)("team-s", "reuse-x", submitter="bob")
    await database_sync_to_async(events_publish)()
    bobs, alices = communicator(bob), communicator(alice)
    assert (await bobs.connect())[0] and (await alices.connect())[0]
    await bobs.send_json_to({"subscribe": "team-s/reuse-x"})
    assert await bobs.receive_json_from(timeout=3) == {"subscribed": "team-s/reuse-x"}

    await database_sync_to_async(bobs_gang_killed_and_deleted)()
    assert (await bobs.receive_json_from(timeout=3))["kind"] == "killed"
    assert await bobs.receive_json_from(timeout=3) == {"type": "gang.deleted", "gang": "team-s/reuse-x"}
    await database_sync_to_async(alices_gang_under_the_same_key)()

    await received_by_one_only(alices, bobs, ["created", "satisfied", "bound"], "team-s/reuse-x")
