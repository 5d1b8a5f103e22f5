"""Replay's wake-ups for the reclaim delay: the service runs a cycle every second, so a
unit's ``reclaim_delay_s`` ends in a cycle about then; the replay runs cycles only at events, so
it adds one at each pending job's submission + the delay (``EngineConfig.reclaim_delay_s``), for
queue policies whose reclaim goes beyond the guarantee. Without it a job could wait past its
delay until some unrelated job ends or arrives.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable


class ReclaimDue:
    def __init__(self, delay: float) -> None:
        self.delay = delay  # 0: nothing to wake for
        self.due: list[tuple[float, int]] = []  # (submission + delay, job index)

    def arrived(self, index: int, submit: float) -> None:
        if self.delay > 0:
            heapq.heappush(self.due, (submit + self.delay, index))

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
