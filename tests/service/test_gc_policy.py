"""The web process freezes what survives a full garbage collection and thaws it every
GANGSCHED_GC_THAW_SECONDS (gangsched/gc_policy.py), with the real collector."""

from __future__ import annotations

import asyncio
import gc

import pytest
from asgiref.testing import ApplicationCommunicator
from django.conf import settings

from gangsched import gc_policy


@pytest.fixture(autouse=True)
def _nothing_frozen_after():
    yield
    gc.unfreeze()


class StepClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_full_collection_is_followed_by_a_freeze_and_nothing_else_is():
    clock = StepClock()
    policy = gc_policy.FreezeAfterFullCollections(600, now=clock)
    gc.callbacks.append(policy.on_gc)
    try:
        gc.collect(1)  # a younger generation: nothing to freeze after
        policy.step()
        assert gc.get_freeze_count() == 0
        gc.collect(2)
        policy.step()
        assert gc.get_freeze_count() > 0
        assert (policy.freezes, policy.thaws) == (1, 0)
        policy.step()  # once per full collection
        assert policy.freezes == 1
    finally:
        gc.callbacks.remove(policy.on_gc)


def test_the_frozen_are_thawed_after_the_thaw_time_so_their_cycles_are_collected():
    clock = StepClock()
    policy = gc_policy.FreezeAfterFullCollections(600, now=clock)
    policy.on_gc("stop", {"generation": 2})
    policy.step()
    assert gc.get_freeze_count() > 0
    clock.now = 599
    policy.step()
    assert gc.get_freeze_count() > 0
    clock.now = 600
    policy.step()
    assert gc.get_freeze_count() == 0
    assert (policy.freezes, policy.thaws) == (1, 1)

    class Cycle:
        pass

    garbage = Cycle()
    garbage.me = garbage
    policy.on_gc("stop", {"generation": 2})  # a full collection ends while it is alive...
    policy.step()
    del garbage  # ...and it becomes garbage among the frozen
    clock.now = 1200
    policy.step()
    assert gc.collect(2) >= 1  # thawed: the next full collection finds it


async def test_the_web_process_runs_the_policy_from_startup_to_shutdown(monkeypatch):
    from gangsched.asgi import application

    monkeypatch.setattr("gangsched.asgi.name_web_sessions", lambda: None)
    monkeypatch.setattr("gangsched.asgi.pool_web_connections", lambda: None)
    server = ApplicationCommunicator(application, {"type": "lifespan"})
    await server.send_input({"type": "lifespan.startup"})
    assert await server.receive_output(timeout=5) == {"type": "lifespan.startup.complete"}
    await asyncio.sleep(0)
    assert gc_policy._policy is not None and gc_policy._policy.on_gc in gc.callbacks
    await server.send_input({"type": "lifespan.shutdown"})
    assert await server.receive_output(timeout=5) == {"type": "lifespan.shutdown.complete"}
    await asyncio.sleep(0)
    assert gc_policy._policy is None


async def test_a_thaw_time_of_zero_turns_the_policy_off(monkeypatch):
    monkeypatch.setattr(settings, "GANGSCHED_GC_THAW_SECONDS", 0, raising=False)
    await gc_policy.run()  # returns at once
    assert gc_policy._policy is None
