"""Which waiting units a forward cycle shows the engine: those that could start, and the head.

A cycle tries every waiting unit in its order; on a busy cluster most cannot be placed on the
room there is, and trying them is most of a cycle's cost. As the trace replay leaves out the
jobs a cycle is certain to fail, a forward cycle shows the engine, in the engine's order
(``engine/queue.py``, fixed for the run: priorities and estimates do not change):

- every unit up to and including the first one that cannot fit on the free room (``Room``): the
  units before it are tried as they would be, and it, or one before it, is the head the engine
  reserves for;
- after it, only the units that may fit (backfill candidates), and NonStrict gangs of which one
  member fits (they reserve what fits);
- always: gangs that hold reservations, and units that were not waiting at ``now`` (evicted).

A unit left out would have failed: it decides nothing and explains nothing the forecast reads.
What is lost: a left-out unit cannot preempt (only the first cycle, at ``now``, preempts with
every unit). With a queue tree the engine interleaves the queues by fair share, so there is no
one head: every unit is shown.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler_core.engine.config import EngineConfig
from scheduler_core.engine.model import Snapshot
from scheduler_core.engine.queue import build_units, pods_by_gang

from .book import Book
from .room import Room


class Window:
    def __init__(self, snapshot: Snapshot, config: EngineConfig) -> None:
        gangs = {gang.key: gang for gang in snapshot.gangs}
        units = build_units(snapshot, config, gangs, pods_by_gang(snapshot))
        self.enabled = not snapshot.queues
        # Each unit: its gang keys (empty for a lone pod) and its lone pod's key.
        self.order = [(unit.gangs, None if unit.is_gang else unit.pods[0].key) for unit in units]
        self.known_gangs = {key for unit in units for key in unit.gangs}
        self.known_pods = {unit.pods[0].key for unit in units if not unit.is_gang}

    def shown(
        self,
        book: Book,
        room: Room,
        need: Mapping[str, int],
        partial: Mapping[str, bool],
        holders: set[str],
    ) -> tuple[set[str], set[str]] | None:
        """(gang keys, lone pod keys) to show; None: show everything."""
        if not self.enabled:
            return None
        waiting = book.waiting
        gangs = set(holders) | {key for key in waiting if key is not None and key not in self.known_gangs}
        lone = {key for key in waiting.get(None, {}) if key not in self.known_pods}
        alone = waiting.get(None, {})
        memo: dict = {}
        head_found = False
        for unit_gangs, pod_key in self.order:
            if pod_key is not None:
                pod = alone.get(pod_key)
                if pod is None:
                    continue
                fits = room.may_start(((1, False, room.groups((pod,))),), memo)
                if fits or not head_found:
                    lone.add(pod_key)
                head_found = head_found or not fits
                continue
            if not any(waiting.get(key) for key in unit_gangs):
                continue
            groups = book.grouped(unit_gangs, room)
            wanted = sum(max(need.get(key, 1), 0) for key in unit_gangs)
            nonstrict = any(partial.get(key, False) for key in unit_gangs)
            fits = room.may_start(((wanted, False, groups),), memo)
            if fits or not head_found or (nonstrict and room.may_start(((1, True, groups),), memo)):
                gangs.update(unit_gangs)
            head_found = head_found or not fits
        return gangs, lone
