"""The order across queues: the queue furthest below its fair share goes next.

Within a queue, units keep today's order (``queue.py``: priority, bounded least-work-first
rank, creation, key). Across queues, the next unit comes from the queue whose *share ratio*
(dominant usage over fair share, ``fairshare.ratios``) is lowest, chosen top-down: among the
top-level queues with work left, the lowest ratio (then the name); among its children, the
lowest; and so on down to a leaf. Ratios are those of the ledger, which charges every bind and
reservation at once: as a queue is served its ratio rises and the others get their turn, as
Volcano's proportion and drf plugins order queues. Reclaim (``actions/reclaim.py``) uses the
same ratio, so the order of scheduling and of reclaiming cannot disagree.

Units that cannot be placed whatever their turn (a queue unknown, closed or not a leaf) come
first: they place nothing, and are only explained.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from .ledger import Ledger
from .queue import Unit


def unit_queue(ledger: Ledger, unit: Unit) -> int:
    """The queue a unit is ordered in: its first gang's, or its lone pod's (-1: unknown)."""
    if unit.is_gang:
        return ledger.queue_named(ledger.gangs[unit.gangs[0]].queue)
    return ledger.queue_of(unit.pods[0])


def ordered(ledger: Ledger, units: list[Unit]) -> Iterator[Unit]:
    tree = ledger.tree
    lanes: dict[int, deque[Unit]] = {}
    gated: list[Unit] = []
    for unit in units:
        q = unit_queue(ledger, unit)
        if q < 0 or not ledger.leaf[q] or not tree.queues[q].open:
            gated.append(unit)
            ledger.gated.add(unit.key)
        else:
            lanes.setdefault(q, deque()).append(unit)
    yield from gated
    left = [0] * tree.size  # units left in each queue's subtree
    for q, lane in lanes.items():
        for p in tree.paths[q]:
            left[p] += len(lane)
    names = [queue.name for queue in tree.queues]
    ratios = ledger.ratios
    while True:
        kids = tree.top
        chosen = -1
        while kids:
            best = -1
            for k in kids:
                if left[k] and (best < 0 or (ratios[k], names[k]) < (ratios[best], names[best])):
                    best = k
            if best < 0:
                break
            chosen = best
            kids = tree.children[best]
        if chosen < 0 or chosen not in lanes:
            return
        unit = lanes[chosen].popleft()
        for p in tree.paths[chosen]:
            left[p] -= 1
        yield unit
