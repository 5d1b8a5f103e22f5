"""Cycle triggers are sent by a thread of the process (scheduler_core/worker/cycle_wake.py): the
caller returns without a Redis round trip, a burst becomes one trigger, and a trigger still
pending at exit is sent then."""

from __future__ import annotations

import threading
import time

from scheduler_core import tasks
from scheduler_core.worker.cycle_wake import Waker


def wait_until(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.005)


def test_a_request_returns_at_once_and_the_thread_sends_the_trigger():
    sent, release = [], threading.Event()

    def slow_send():
        release.wait(60)
        sent.append(1)

    waker = Waker(slow_send, gap_s=0.0)
    waker.request()
    assert sent == []  # the caller did not wait: the send cannot end before release is set
    release.set()
    wait_until(lambda: sent == [1])


def test_a_burst_is_one_trigger_per_gap():
    sent, busy = [], threading.Event()

    def send():
        busy.wait(5)
        sent.append(time.monotonic())

    waker = Waker(send, gap_s=0.2)
    waker.request()  # the thread takes it and waits in send
    for _ in range(50):
        waker.request()  # all while the first is being sent: one more trigger covers them
    busy.set()
    wait_until(lambda: len(sent) == 2)
    time.sleep(0.3)
    assert len(sent) == 2 and sent[1] - sent[0] >= 0.2


def test_a_pending_trigger_is_sent_at_exit_and_failures_are_logged_not_raised(caplog):
    sent = []
    waker = Waker(lambda: sent.append(1))
    waker.pending.set()  # as if the thread never ran again
    waker.flush()
    assert sent == [1] and not waker.pending.is_set()

    def broken():
        raise ConnectionError("redis away")

    failing = Waker(broken)
    failing.pending.set()
    failing.flush()
    assert "cycle trigger not sent" in caplog.text


def test_cycle_trigger_asks_the_processs_waker(monkeypatch):
    asked = []
    monkeypatch.setattr(tasks._waker, "request", lambda: asked.append(1))
    assert tasks.cycle_trigger() is True and asked == [1]
