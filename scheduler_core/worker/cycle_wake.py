"""Cycle triggers sent by a thread of the process, not by the request that asked.

A submission asks for a cycle at commit (``tasks.cycle_trigger``); sending it costs a Redis round
trip (``SET NX`` of the queued flag) and, when no cycle is queued, a Celery message. Here the
caller only sets a flag; a thread of the process (started on first use) sends one trigger for
every request that arrived since its last one, then waits at least ``GAP_S``, so a burst of
submissions in a web process costs one round trip per ``GAP_S``, not one each, and no request
waits for Redis. A trigger still pending when the process exits is sent by ``atexit``.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)

#: Seconds between two triggers sent by one process (a cycle already queued coalesces the rest).
GAP_S = 0.05


class Waker:
    def __init__(self, send: Callable[[], object], gap_s: float = GAP_S):
        self.send = send
        self.gap_s = gap_s
        self.pending = threading.Event()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def request(self) -> None:
        self.pending.set()
        if self.thread is None or not self.thread.is_alive():  # first use, or after a fork
            with self.lock:
                if self.thread is None or not self.thread.is_alive():
                    self.thread = threading.Thread(target=self._run, name="cycle-waker", daemon=True)
                    self.thread.start()
                    atexit.register(self.flush)

    def flush(self) -> None:
        """Send a pending trigger now (at exit: the thread may never run again)."""
        if self.pending.is_set():
            self.pending.clear()
            self._send()

    def _send(self) -> None:
        try:
            self.send()
        except Exception:  # Redis away: the beat's next cycle picks the work up
            logger.warning("cycle trigger not sent", exc_info=True)

    def _run(self) -> None:
        while True:
            self.pending.wait()
            self.pending.clear()
            self._send()
            threading.Event().wait(self.gap_s)
