"""Cycles the runs share: a run whose past is another's takes that run's cycle instead of its own.

The three runs differ only in when pods really end. Until the first end that one run sees and
another does not, their states are the same, and so are their cycles (the engine is a function
of the snapshot and the time: the same snapshot, ``now`` and config give the same result; the
``Carry`` changes what it costs, never what it decides). A run's past is, cycle after cycle,
the time of the cycle and the pods and gangs gone since the one before: ``History`` numbers
each distinct past, and keeps the result of the cycle that followed it (or that none ran: no
waiting gang could fit). Two runs with the same number at a cycle have had the same cycles on
the same pods, so the second applies the first one's result instead of running the engine.
"""

from __future__ import annotations

from collections.abc import Set

from scheduler_core.engine.decisions import CycleResult

#: No cycle ran at this point: nothing could start on the free room (``room.py``).
SKIPPED = "skipped"


class History:
    def __init__(self) -> None:
        self._numbers: dict[tuple, int] = {}
        self._results: dict[int, CycleResult | str] = {}
        self.shared = 0  # cycles taken from another run

    def next(self, past: int, t: float, gone: Set[str], finished: Set[str]) -> int:
        """The number of the past ``past`` followed, at ``t``, by ``gone`` and ``finished``."""
        key = (past, t, frozenset(gone), frozenset(finished))
        number = self._numbers.get(key)
        if number is None:
            number = self._numbers[key] = len(self._numbers) + 1
        return number

    def result(self, number: int) -> CycleResult | str | None:
        found = self._results.get(number)
        if found is not None and found is not SKIPPED:
            self.shared += 1
        return found

    def record(self, number: int, result: CycleResult | str) -> None:
        self._results[number] = result
