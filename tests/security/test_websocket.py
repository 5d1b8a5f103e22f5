"""``ws/gangs/`` refuses sockets without an allowed Origin (missing, ``null``, foreign, another
port's) before looking at the session, closes anonymous ones with 4401, and a submitter's socket
never carries an event of a gang they cannot see, whichever door changed it (the API's actions
here; tests/live covers events written directly)."""

import pytest
from channels.db import database_sync_to_async

from scheduler_core.events import events_publish
from scheduler_core.models import Gang
from tests.api.conftest import client_for
from tests.cast import make_gang
from tests.live.conftest import _close_thread_connections, alice, bob, communicator, olga  # noqa: F401

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

    kinds = [(await operators.receive_json_from(timeout=3))["kind"] for _ in range(3)]
    assert kinds == ["created", "retried", "killed"]  # the events were published
    assert await alices.receive_nothing(timeout=1.0)  # and none reached alice
    await alices.send_json_to({"subscribe": "ml/bobs"})
    assert (await alices.receive_json_from(timeout=3))["error"] == "cannot subscribe: gang not found"
    await alices.disconnect()
    await operators.disconnect()
