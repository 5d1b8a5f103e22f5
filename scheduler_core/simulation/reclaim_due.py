"""Replay's wake-ups for the reclaim delay: the service runs a cycle every second, so a
unit's ``reclaim_delay_s`` ends in a cycle about then; the replay runs cycles only at events, so
it adds one at each pending job's submission + the delay of the job's queue (the queue's own
``reclaim_delay_s``, else ``EngineConfig.reclaim_delay_s``, as ``actions/reclaim.py`` reads
it), for queue policies whose reclaim goes beyond the guarantee. Without it a job could wait
past its delay until some unrelated job ends or arrives.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping


class ReclaimDue:
    def __init__(self, delay: float, delays: Mapping[str, float | None] | None = None) -> None:
        self.delay = delay  # 0: nothing to wake for (unless a queue says otherwise)
        self.delays = dict(delays or {})  # queue name -> its own delay; None: ``delay``
        self.due: list[tuple[float, int]] = []  # (submission + delay, job index)

    def delay_of(self, queue: str | None) -> float:
        own = self.delays.get(queue) if queue is not None else None
        return self.delay if own is None else own

    def arrived(self, index: int, submit: float, queue: str | None = None) -> None:
        """Job ``index`` of ``queue`` was submitted: wake at its queue's delay (0: its first
        cycle already may reclaim, nothing to wake for)."""
        delay = self.delay_of(queue)
        if delay > 0:
            heapq.heappush(self.due, (submit + delay, index))

    def next_time(self, waiting: Callable[[int], bool]) -> float:
        """The earliest wake-up of a job still waiting (those of started jobs are dropped)."""
        while self.due and not waiting(self.due[0][1]):
            heapq.heappop(self.due)
        return self.due[0][0] if self.due else math.inf

    def reached(self, tick: float, waiting: Callable[[int], bool]) -> bool:
        """Whether a waiting job's delay ended by ``tick`` (its wake-ups up to then consumed)."""
        woke = False
        while self.due and self.due[0][0] <= tick:
            _when, index = heapq.heappop(self.due)
            woke = woke or waiting(index)
        return woke
