"""How a replay runs: ``ReplayOptions``, shared by the loop, the comparison and the callers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .tenants import QueueTree

DEFAULT_TIME_CAP_S = 30 * 24 * 3600.0  # after the last submission


@dataclass
class ReplayOptions:
    tick: float = 1.0
    queue_window: int = 256
    time_cap: float = DEFAULT_TIME_CAP_S  # virtual seconds after the last submission
    max_cycles_per_tick: int = 8
    # Leave out of a cycle the jobs it is certain to fail (see _Loop._view): no decision changes,
    # a test replays with and without; off only to check that.
    skip_certain_failures: bool = True
    # The queue tree (tenants.py): jobs are given tenants, every policy is measured per queue, and
    # the policies that schedule by queues see it. None: the default tree for those policies only.
    queues: QueueTree | None = None
    # The constraint a topology policy gives gangs that may span nodes (topology_rule.py).
    topology: str = "preferred"
    # What the engine is told of runtimes (runtime_view.py): oracle, limit or learned.
    runtimes: str = "oracle"
    # --forecasts (forecast_book.py): gangsched forecasts its waiting jobs at their submission and
    # every ``forecast_every_s`` while they wait, at most one call per ``forecast_gap_s``, with
    # the arrival model fed the last ``arrival_window_s`` of submissions (0: none).
    forecasts: bool = False
    forecast_every_s: float = 3600.0
    forecast_gap_s: float = 60.0
    arrival_window_s: float = 0.0
    arrival_repeats: int = 1
    progress: Callable[[float], None] | None = None  # fraction of the trace's jobs ended
