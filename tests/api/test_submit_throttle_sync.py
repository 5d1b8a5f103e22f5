"""The submission throttle counts in the process and exchanges counts through the cache at most
once a second (dashboard/api/throttles.py): no Redis round trip per submission, and another
process's submissions are seen within a second. Two ``SharedHistories`` on one cache stand for
two web processes; ``now`` is given, so no test waits."""

from __future__ import annotations

import pytest

from dashboard.api import throttles
from dashboard.api.throttles import SYNC_S, SharedHistories, process_cache

WINDOW = 60.0


class CountingCache:
    """The process cache, counting the round trips made through it."""

    def __init__(self, cache):
        self.cache, self.trips = cache, 0

    def get_many(self, keys):
        self.trips += 1
        return self.cache.get_many(keys)

    def set_many(self, mapping, timeout):
        self.trips += 1
        return self.cache.set_many(mapping, timeout=timeout)


@pytest.fixture
def cache(settings):
    return CountingCache(process_cache())


def submit(histories: SharedHistories, key: str, now: float, limit: int) -> bool:
    """What SubmitThrottle.allow_request decides, minus DRF."""
    if len(histories.history(key, now, WINDOW)) >= limit:
        histories.sync(now, WINDOW, also=key)
        if len(histories.history(key, now, WINDOW)) >= limit:
            return False
    histories.admit(key, now)
    return True


def test_submissions_within_a_second_cost_no_round_trip(cache):
    one = SharedHistories(cache)
    assert submit(one, "alice", 1000.0, limit=60)
    one.sync(1000.0, WINDOW)
    trips = cache.trips
    for step in range(1, 10):
        assert submit(one, "alice", 1000.0 + step * SYNC_S / 20, limit=60)
    assert cache.trips == trips  # counted in the process only
    assert submit(one, "alice", 1000.0 + 2 * SYNC_S, limit=60)
    assert cache.trips == trips + 2  # the once-a-second exchange: one get_many, one set_many


def test_another_processs_submissions_count_within_a_second(cache):
    one, two = SharedHistories(cache), SharedHistories(cache)
    now = 5000.0
    for index in range(3):
        assert submit(one, "alice", now + index * 0.01, limit=3)
    assert not submit(one, "alice", now + 0.05, limit=3)  # refused in the process that counted
    one.sync(now + 0.05, WINDOW)
    assert not submit(two, "alice", now + 0.06, limit=3)  # and by the other, which fetches first
    assert submit(two, "bob", now + 0.06, limit=3)  # others are not affected
    assert submit(two, "alice", now + WINDOW + 1, limit=3)  # the window slid past them


def test_a_refusal_is_decided_on_fresh_counts(cache):
    """Submissions that aged out in the cache since the last exchange do not refuse anyone."""
    one = SharedHistories(cache)
    for index in range(2):
        assert submit(one, "alice", 100.0 + index, limit=2)
    assert not submit(one, "alice", 102.0, limit=2)
    assert submit(one, "alice", 100.0 + WINDOW + 0.5, limit=2)


def test_the_histories_follow_the_process_cache(settings):
    first = throttles.histories()
    assert throttles.histories() is first
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": "another-prefix"}}
    assert throttles.histories() is not first
