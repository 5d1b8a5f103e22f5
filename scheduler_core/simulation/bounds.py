"""Jobs of the replay's queue window that a cycle is certain to fail, proven without running it.

Leaving them out of the cycle's snapshot changes no decision and makes a cycle's cost follow the
jobs that can start, not the backlog (``ReplayOptions.skip_certain_failures``; a test replays
with and without).
"""

from __future__ import annotations

import bisect

from scheduler_core.engine.config import HeadOfLine, permit_quorum
from scheduler_core.engine.model import GangMode

from .jobs import Job


class Bounds:
    """Which jobs of the window a cycle is certain to fail, without running it.

    Jobs of one *class* (the same pod request and the same ``min_workers``, Strict gangs or single
    pods) compete for the same copies of that pod on the free capacity. Capacity only shrinks
    within a cycle (no preemption, no deadlock breaking in exact mode), so with ``copies`` copies
    free at its start:

    * Strict gangs: at most ``copies // min_workers`` jobs of the class can start, each taking at
      least ``min_workers`` copies, and once one of them fails every later one fails too (it
      sees less). So if ``K = copies // min_workers`` earlier jobs of the class were in the
      window, either all K started and fewer than ``min_workers`` copies are left, or one failed:
      the next one fails either way. With ``permit_hold`` a failing gang may keep what it placed
      if that is at least its quorum ``q`` (``permit_quorum``); it places every copy left when it
      fails, so each earlier job either took ``q`` copies or more (started, or kept them) or
      found fewer than ``q``, and after ``copies // q`` of them the next one places fewer than
      ``q`` and keeps nothing: it fails as if it had not been tried. Behind a RESERVE head a
      job's room also depends on its duration (ending before the head's shadow time lifts the
      limit), so there only earlier jobs no longer than it count: any of them that failed had at
      least as much room.
    * Pods placed one by one (``pod``), and NonStrict gangs (``nonstrict``): every pod of an
      earlier job of the class either took a copy (bound, or kept as a reservation) or found
      none, so once the earlier jobs' pods number ``copies``, none is left and the job places
      nothing, so it reserves nothing either. A NonStrict gang that cannot run even on the
      empty cluster drops what it placed, so it takes nothing and does not count.

    A job left out would have placed nothing and failed; the first of them is still shown,
    since under RESERVE and BLOCK the first failure of a cycle becomes the head.
    """

    def __init__(self, config, enabled: bool) -> None:
        self.forced = config.force_mode
        self.pods = not config.gangs or config.force_mode == GangMode.NON_STRICT
        # Pods and NonStrict gangs keep what they placed only when every failing unit does (NONE;
        # behind a RESERVE or BLOCK head a NonStrict gang keeps nothing): otherwise no bound.
        self.enabled = enabled and (not self.pods or config.head_of_line == HeadOfLine.NONE)
        self.hold = config.permit_hold
        self.by_duration = config.head_of_line == HeadOfLine.RESERVE
        self.seen: dict[tuple, list[float]] = {}  # class -> earlier durations (RESERVE: sorted)
        self.pods_seen: dict[bytes, int] = {}

    def certain_to_fail(self, job: Job, shape: bytes, copies: int, empty: int) -> bool:
        if not self.enabled:
            return False
        if self.pods:
            earlier = self.pods_seen.get(shape, 0)
            if empty >= job.min_workers:
                self.pods_seen[shape] = earlier + len(job.pods)
            return earlier >= copies
        if (self.forced or job.gang.mode) != GangMode.STRICT:
            return False
        durations = self.seen.setdefault((shape, job.min_workers), [])
        seen = job.seen.seconds  # the duration the engine is told, by which it backfills
        if self.by_duration:
            earlier = bisect.bisect_right(durations, seen)
            bisect.insort(durations, seen)
        else:
            earlier = len(durations)
            durations.append(seen)
        quorum = permit_quorum(job.min_workers, self.hold) if self.hold > 0 else job.min_workers
        return earlier >= copies // quorum
