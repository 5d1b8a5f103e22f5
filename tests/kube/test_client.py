"""The client-side rate limit every API call of the backend goes through (QPS / burst)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from scheduler_core.cluster.kube.client import RateLimiter


class FakeTime:
    def __init__(self):
        self.now = 0.0
        self.slept = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_a_burst_goes_at_once_then_calls_are_spaced_at_qps():
    time = FakeTime()
    limiter = RateLimiter(qps=2, burst=3, clock=time.clock, sleep=time.sleep)
    waits = [limiter.acquire() for _ in range(5)]
    assert waits == [0.0, 0.0, 0.0, 0.5, 0.5]
    assert time.now == 1.0  # 5 calls: 3 at once, then one every 1/qps seconds


def test_an_idle_limiter_refills_up_to_its_burst_only():
    time = FakeTime()
    limiter = RateLimiter(qps=10, burst=2, clock=time.clock, sleep=time.sleep)
    limiter.acquire(), limiter.acquire()
    time.now += 60  # a minute idle refills 2 tokens, not 600
    assert [limiter.acquire() for _ in range(3)] == [0.0, 0.0, 0.1]


def test_kube_schedulers_defaults_and_bad_values(settings):
    from scheduler_core.cluster.kube.client import rate_limiter

    limiter = rate_limiter()
    assert (limiter.qps, limiter.burst) == (50, 100)
    with pytest.raises(ImproperlyConfigured, match="qps=0"):
        RateLimiter(qps=0, burst=1)
