"""Reclaim up to declared guarantees only: the rule of a queue whose ``reclaim_up_to`` is
``"guarantee"`` (YuniKorn's queues), used by ``reclaim.py``.

YuniKorn preempts for a queue only while it stays within its guaranteed resources: its own, and
those of every ancestor that declares one, resource by resource, on the resources the ask
requests (``yunikorn-core`` ``pkg/scheduler/objects/preemption.go``,
``checkPreemptionQueueGuarantees`` and ``GetRemainingGuaranteedResource``). A queue with no
guarantee on itself or any ancestor never preempts (YUNIKORN-1951). A victim is taken only if
its queue, and each ancestor below the one it shares with the preemptor, keeps at least its
declared guarantee (``IsAtOrAboveGuaranteedResource``). Here "declared" is what the manifest
says, not the guarantee the tree infers for a parent from its children
(``fairshare.guarantees``): YuniKorn reads only the former.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .. import fairshare
from ..session import Session
from .reclaim_bundles import Bundle


def declared(ledger) -> tuple[np.ndarray, np.ndarray]:
    """The guarantees the queues' manifests declare (Q x R) and which resources each names."""
    tree = ledger.tree
    resources = ledger.state.resources
    named = np.array([[r in queue.guarantee for r in resources] for queue in tree.queues], dtype=bool)
    return fairshare.amounts(tree, resources, "guarantee", 0.0), named.reshape(tree.size, len(resources))


def within(session: Session, queue: int, request: np.ndarray) -> bool:
    """Whether ``queue`` may reclaim for a unit whose pending pods request ``request``: some
    queue on its path declares a guarantee, and each that does stays within it once the unit is
    placed, on the resources the unit requests that it names."""
    ledger = session.queues
    amounts, named = declared(ledger)
    path = list(ledger.tree.paths[queue])
    if not named[path].any():
        return False  # no guarantee on itself or any ancestor: YUNIKORN-1951
    asked = np.asarray(request) > 0
    return not any(np.any((ledger.usage[p] + request > amounts[p] + 1e-9) & named[p] & asked) for p in path)


def eligible(session: Session, queue: int, pool: Iterable[Bundle], need: np.ndarray) -> list[Bundle]:
    """Bundles in order whose queues (each on the path below the one shared with ``queue``) keep
    their declared guarantee of what the unit needs once taken, counting the bundles before them
    as gone; until they free twice what the unit needs (the binary search then takes the fewest)."""
    ledger = session.queues
    tree = ledger.tree
    amounts, named = declared(ledger)
    wanted = need > 0
    mine = set(tree.paths[queue])
    left: dict[int, np.ndarray] = {}  # queue -> usage, less the bundles taken
    freed = np.zeros_like(need)
    chosen = []
    for bundle in pool:
        if bundle.queue == queue:
            continue
        path = [p for p in tree.paths[bundle.queue] if p not in mine]
        after = {p: left.get(p, ledger.usage[p]) - bundle.amount for p in path}
        if all(not np.any((after[p] < amounts[p] - 1e-9) & named[p] & wanted) for p in path):
            left.update(after)
            chosen.append(bundle)
            freed += bundle.amount
            if np.all(freed[wanted] >= 2 * need[wanted]):
                break
    return chosen
