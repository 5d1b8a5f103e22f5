"""Worker heartbeats: the reader on its own, and a real worker writing its heartbeat."""

import uuid
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from scheduler_core.worker import heartbeats

from .workers import Worker, wait_for


@pytest.fixture
def client():
    client = redis.Redis.from_url(settings.REDIS_URL)
    written: list[str] = []
    yield client, written
    for key in written:
        client.delete(key)
    client.close()


def test_the_reader_lists_heartbeats_newest_first_and_skips_garbage(client):
    client, written = client
    tag = uuid.uuid4().hex[:8]
    now = timezone.now().replace(microsecond=0)
    old, new = f"old-{tag}@h", f"new-{tag}@h"
    heartbeats.heartbeat_write(old, client=client, now=now - timedelta(seconds=12))
    heartbeats.heartbeat_write(new, client=client, now=now)
    client.set(heartbeats.KEY_PREFIX + f"bad-{tag}@h", b"not a time", ex=30)
    written += [heartbeats.KEY_PREFIX + name for name in (old, new, f"bad-{tag}@h")]
    assert 0 < client.ttl(heartbeats.KEY_PREFIX + new) <= heartbeats.HEARTBEAT_TTL_S

    mine = [beat for beat in heartbeats.heartbeats_read(client=client) if tag in beat[0]]
    assert mine == [(new, now), (old, now - timedelta(seconds=12))]


def test_the_reader_answers_an_empty_list_when_redis_is_down():
    down = redis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    assert heartbeats.heartbeats_read(client=down) == []


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_writes_its_heartbeat_and_removes_it_on_shutdown():
    name = f"beat-{uuid.uuid4().hex[:8]}"
    hostname = f"{name}@test"
    worker = Worker(name)
    try:
        seen = wait_for(
            lambda: dict(heartbeats.heartbeats_read()).get(hostname), timeout=60, what="the heartbeat"
        )
        assert abs((timezone.now() - seen).total_seconds()) < heartbeats.HEARTBEAT_TTL_S
        ttl = redis.Redis.from_url(settings.REDIS_URL).ttl(heartbeats.KEY_PREFIX + hostname)
        assert 0 < ttl <= heartbeats.HEARTBEAT_TTL_S
    finally:
        worker.stop()
    assert hostname not in dict(heartbeats.heartbeats_read())
